package remote

import (
	"context"
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
