package remote

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/once"
	"github.com/tsolab/tsolab/provider"
)

// Machines routes a lab's provider calls to where each resource lives:
// the local providers for a resource without a machine attribute
// (provider.AttrMachine), the machine's agent for one with. It takes a
// machine's connection from its Pool on its first call, once, and keeps
// it: when that connection is lost, the Machines' later calls to the
// machine fail too, naming it. Machines are reached in parallel as the
// planner's calls come. The planner sees one provider.Interface per kind
// and does not know which it talks to.
type Machines struct {
	local    map[provider.Kind]provider.Interface
	machines map[string]Machine
	pool     *Pool
	owned    bool // pool is this Machines' own (NewMachines): Close closes it

	clients once.Map[string, *Client] // by machine name
}

// conn is one machine's connection in a Pool, made once; a Pool makes
// another when it is gone (which once.Map, keeping an answer for good,
// cannot say, so the Pool keeps its own).
type conn struct {
	once   sync.Once
	client *Client
	err    error
	ready  chan struct{} // closed once client and err are set (Pool)
}

// NewMachines routes to local providers and to the named machines, with
// connections of its own, which Close ends.
func NewMachines(local map[provider.Kind]provider.Interface, machines map[string]Machine, opts Options) *Machines {
	m := NewPool(opts).Machines(local, machines)
	m.owned = true
	return m
}

// Pool keeps one connection, and so one agent, per machine for every
// Machines it hands out: the phases of one command (each plan and apply,
// the kernel engine's runs, destroy) share it. A phase that starts after
// a machine's connection was lost connects again; one that holds the
// lost connection fails, naming the machine.
type Pool struct {
	opts Options

	mu    sync.Mutex
	conns map[Machine]*conn // guarded by mu
}

// NewPool connects with opts; Close ends its connections.
func NewPool(opts Options) *Pool {
	return &Pool{opts: opts, conns: map[Machine]*conn{}}
}

// Machines routes to local providers and to the named machines through
// the pool's connections; closing the pool ends them.
func (p *Pool) Machines(local map[provider.Kind]provider.Interface, machines map[string]Machine) *Machines {
	return &Machines{local: local, machines: machines, pool: p}
}

// client returns the pool's connection to mach, connecting when it has
// none, or none that lives (it failed, or was lost since).
func (p *Pool) client(ctx context.Context, mach Machine) (*Client, error) {
	p.mu.Lock()
	c := p.conns[mach]
	if c == nil || c.gone() {
		if c != nil && c.client != nil {
			go c.client.Close() // lost: what is left of it
		}
		c = &conn{ready: make(chan struct{})}
		p.conns[mach] = c
	}
	p.mu.Unlock()
	c.once.Do(func() {
		c.client, c.err = Connect(ctx, mach, p.opts)
		close(c.ready)
	})
	return c.client, c.err
}

// gone says the connection was made and failed, or has been lost since
// (the agent's session ended); one being made is not gone.
func (c *conn) gone() bool {
	select {
	case <-c.ready:
	default:
		return false
	}
	return c.err != nil || c.client.ended()
}

// Close ends every connection of the pool (and with it every agent).
func (p *Pool) Close() error {
	p.mu.Lock()
	conns := p.conns
	p.conns = map[Machine]*conn{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		select {
		case <-c.ready:
		default:
			continue // never connected: Connect ends with its context
		}
		if c.client != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.client.Close()
			}()
		}
	}
	wg.Wait()
	return nil
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

// Client returns the connection to the named machine, taking it from the
// pool on the first call.
func (m *Machines) Client(ctx context.Context, name string) (*Client, error) {
	mach, ok := m.machines[name]
	if !ok {
		return nil, fmt.Errorf("the state records resources on machine %q, but neither the lab nor the state says how to reach it "+
			"(a state written before tsolab recorded its machines): "+
			"restore its machine block (machine %q { address = ... }) to reach them, or forget them with tsolab state rm", name, name)
	}
	return m.clients.Do(name, func() (*Client, error) { return m.pool.client(ctx, mach) })
}

// Close ends the connections of a Machines made by NewMachines (and with
// them its agents); those of a Pool's Machines are the pool's to close.
func (m *Machines) Close() error {
	if m.owned {
		return m.pool.Close()
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
