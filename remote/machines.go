package remote

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/provider"
)

// Machines routes a lab's provider calls to where each resource lives:
// the local providers for a resource without a machine attribute
// (provider.AttrMachine), the machine's agent for one with. It connects to
// a machine on its first call, once, and machines are reached in
// parallel as the planner's calls come. The planner sees one
// provider.Interface per kind and does not know which it talks to.
type Machines struct {
	local    map[provider.Kind]provider.Interface
	machines map[string]Machine
	opts     Options

	mu    sync.Mutex
	conns map[string]*conn // guarded by mu
}

// conn is one machine's connection, made once.
type conn struct {
	once   sync.Once
	client *Client
	err    error
}

// NewMachines routes to local providers and to the named machines.
func NewMachines(local map[provider.Kind]provider.Interface, machines map[string]Machine, opts Options) *Machines {
	return &Machines{local: local, machines: machines, opts: opts, conns: map[string]*conn{}}
}

// Providers returns the routing provider of every kind the local
// providers have.
func (m *Machines) Providers() map[provider.Kind]provider.Interface {
	out := map[provider.Kind]provider.Interface{}
	for k, p := range m.local {
		out[k] = &router{m: m, kind: k, local: p}
	}
	return out
}

// Client returns the connection to the named machine, connecting on the
// first call.
func (m *Machines) Client(ctx context.Context, name string) (*Client, error) {
	mach, ok := m.machines[name]
	if !ok {
		return nil, fmt.Errorf("the state records resources on machine %q, but neither the lab nor the state says how to reach it "+
			"(a state written before tsolab recorded its machines): "+
			"restore its machine block (machine %q { address = ... }) to reach them, or forget them with tsolab state rm", name, name)
	}
	m.mu.Lock()
	c := m.conns[name]
	if c == nil {
		c = &conn{}
		m.conns[name] = c
	}
	m.mu.Unlock()
	c.once.Do(func() { c.client, c.err = Connect(ctx, mach, m.opts) })
	return c.client, c.err
}

// Connected lists the machines connected so far, by name.
func (m *Machines) Connected() []*Client {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Client
	for _, c := range m.conns {
		if c.client != nil {
			out = append(out, c.client)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Machine.Name < out[j].Machine.Name })
	return out
}

// Close ends every connection (and with it every agent).
func (m *Machines) Close() error {
	for _, c := range m.Connected() {
		c.Close()
	}
	return nil
}

// router is the provider.Interface of one kind that Machines hands out.
type router struct {
	m     *Machines
	kind  provider.Kind
	local provider.Interface
}

// pick returns the provider for a resource whose attributes are attrs, or
// an error diagnostic about addr when its machine cannot be reached.
func (r *router) pick(ctx context.Context, addr provider.Addr, attrs provider.Attrs) (provider.Interface, hcl.Diagnostics) {
	name := attrs[provider.AttrMachine]
	if name == "" {
		return r.local, nil
	}
	c, err := r.m.Client(ctx, name)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError,
			Summary: fmt.Sprintf("%s: cannot reach machine %s", addr, name), Detail: err.Error()}}
	}
	return &Provider{Client: c, Kind: r.kind}, nil
}

// stamp records on attrs the machine a resource lives on: the attribute
// is the routing's, and providers that build their read-back afresh
// (a host's) do not carry it.
func stamp(attrs provider.Attrs, from provider.Attrs) provider.Attrs {
	if m := from[provider.AttrMachine]; m != "" && attrs != nil {
		attrs[provider.AttrMachine] = m
	}
	return attrs
}

func (r *router) Validate(ctx context.Context, req provider.ValidateRequest) provider.ValidateResponse {
	p, diags := r.pick(ctx, req.Addr, req.Desired)
	if p == nil {
		for _, d := range diags {
			if req.Range.Filename != "" {
				d.Subject = req.Range.Ptr()
			}
		}
		return provider.ValidateResponse{Diagnostics: diags}
	}
	return p.Validate(ctx, req)
}

func (r *router) Read(ctx context.Context, req provider.ReadRequest) provider.ReadResponse {
	p, diags := r.pick(ctx, req.Addr, req.Recorded)
	if p == nil {
		return provider.ReadResponse{Diagnostics: diags}
	}
	resp := p.Read(ctx, req)
	resp.Actual = stamp(resp.Actual, req.Recorded)
	return resp
}

func (r *router) Create(ctx context.Context, req provider.CreateRequest) provider.CreateResponse {
	p, diags := r.pick(ctx, req.Addr, req.Desired)
	if p == nil {
		return provider.CreateResponse{Diagnostics: diags}
	}
	resp := p.Create(ctx, req)
	resp.New = stamp(resp.New, req.Desired)
	return resp
}

func (r *router) Update(ctx context.Context, req provider.UpdateRequest) provider.UpdateResponse {
	p, diags := r.pick(ctx, req.Addr, req.Prior)
	if p == nil {
		return provider.UpdateResponse{Diagnostics: diags}
	}
	resp := p.Update(ctx, req)
	resp.New = stamp(resp.New, req.Desired)
	return resp
}

func (r *router) Delete(ctx context.Context, req provider.DeleteRequest) provider.DeleteResponse {
	p, diags := r.pick(ctx, req.Addr, req.Recorded)
	if p == nil {
		return provider.DeleteResponse{Diagnostics: diags}
	}
	return p.Delete(ctx, req)
}
