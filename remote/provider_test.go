package remote

import (
	"context"
	"reflect"
	"testing"

	"github.com/tsolab/tsolab/provider"
)

// readOnly is a provider that answers Read only, saying whether the
// request it got carried a snapshot.
type readOnly struct {
	provider.Interface
	sawSnapshot bool
}

func (p *readOnly) Read(_ context.Context, req provider.ReadRequest) provider.ReadResponse {
	p.sawSnapshot = req.Snapshot != nil
	return provider.ReadResponse{Gone: true}
}

// TestReadWithSnapshot: a refresh's reads carry its provider.Snapshot,
// which is this process's and which gob cannot encode; a read of a
// resource on another machine reaches the agent without it (it was
// "lost the connection to the agent during Read: gob: type
// provider.Snapshot has no exported fields").
func TestReadWithSnapshot(t *testing.T) {
	fake := &readOnly{}
	a := &Agent{providers: map[provider.Kind]provider.Interface{provider.KindHost: fake}}
	c, _ := pipeClient(t, a)
	p := &Provider{Client: c, Kind: provider.KindHost}
	resp := p.Read(context.Background(), provider.ReadRequest{
		Addr:     provider.Addr{Kind: provider.KindHost, Name: "tx"},
		Snapshot: provider.NewSnapshot(),
	})
	if resp.Diagnostics.HasErrors() {
		t.Fatalf("read with a snapshot: %v", resp.Diagnostics)
	}
	if !resp.Gone {
		t.Errorf("got %+v, want the agent's answer (gone)", resp)
	}
	if fake.sawSnapshot {
		t.Error("the agent's provider got a snapshot; a snapshot is the refreshing process's own")
	}
}

// TestReadCallFields: ReadCall carries every field of
// provider.ReadRequest but the Snapshot, by name and type, so a field
// added to the request is not dropped on the way to an agent unseen.
func TestReadCallFields(t *testing.T) {
	call := reflect.TypeFor[ReadCall]()
	req := reflect.TypeFor[provider.ReadRequest]()
	for i := range req.NumField() {
		f := req.Field(i)
		if f.Name == "Snapshot" {
			if _, ok := call.FieldByName(f.Name); ok {
				t.Error("ReadCall carries the Snapshot, the refreshing process's own")
			}
			continue
		}
		got, ok := call.FieldByName(f.Name)
		if !ok || got.Type != f.Type {
			t.Errorf("ReadCall lacks ReadRequest's %s %v: add it to ReadCall, readCall and request", f.Name, f.Type)
		}
	}
	want := provider.ReadRequest{
		Naming:   provider.NewNaming("lab"),
		Addr:     provider.Addr{Kind: provider.KindNIC, Name: "tx0"},
		Recorded: provider.Attrs{"mtu": "1500"},
		Snapshot: provider.NewSnapshot(),
	}
	got := readCall(provider.KindNIC, want).request()
	want.Snapshot = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readCall(req).request() = %+v, want %+v", got, want)
	}
}
