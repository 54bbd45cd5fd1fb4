package remote

import (
	"context"
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/provider"
)

// The provider calls of the protocol: the agent answers each with the
// machine's own provider for the kind (host, switch, nic), exactly as
// tsolab does in-process, so a resource on another machine is made by
// the same code as one on this machine.

// ValidateCall and the other *Call types carry one provider request and
// the kind of resource it is for.
type ValidateCall struct {
	Kind provider.Kind
	Req  provider.ValidateRequest
}

// ReadCall carries a provider.ReadRequest's fields but its Snapshot,
// which is the refreshing process's own (what its reads read on its
// machine) and never crosses: the agent reads everything now.
// TestReadCallFields checks it has every other field.
type ReadCall struct {
	Kind     provider.Kind
	Naming   provider.Naming
	Addr     provider.Addr
	Recorded provider.Attrs
}

// readCall is the call a Read of req sends.
func readCall(kind provider.Kind, req provider.ReadRequest) ReadCall {
	return ReadCall{Kind: kind, Naming: req.Naming, Addr: req.Addr, Recorded: req.Recorded}
}

// request is the ReadRequest the agent answers: c's, without a Snapshot.
func (c ReadCall) request() provider.ReadRequest {
	return provider.ReadRequest{Naming: c.Naming, Addr: c.Addr, Recorded: c.Recorded}
}

type CreateCall struct {
	Kind provider.Kind
	Req  provider.CreateRequest
}

type UpdateCall struct {
	Kind provider.Kind
	Req  provider.UpdateRequest
}

type DeleteCall struct {
	Kind provider.Kind
	Req  provider.DeleteRequest
}

// Reply is the answer to every provider call: the fields of the
// provider's response that call has (Attrs is ReadResponse.Actual,
// CreateResponse.New or UpdateResponse.New).
type Reply struct {
	Attrs       provider.Attrs
	Gone        bool
	Remains     bool
	Diagnostics []Diagnostic
}

// Diagnostic is an hcl.Diagnostic without its expression and evaluation
// context, which a provider never sets and the wire cannot carry.
type Diagnostic struct {
	Severity        hcl.DiagnosticSeverity
	Summary, Detail string
	Subject         *hcl.Range
	Context         *hcl.Range
}

func toWire(diags hcl.Diagnostics) []Diagnostic {
	out := make([]Diagnostic, len(diags))
	for i, d := range diags {
		out[i] = Diagnostic{Severity: d.Severity, Summary: d.Summary, Detail: d.Detail, Subject: d.Subject, Context: d.Context}
	}
	return out
}

// fromWire turns the agent's diagnostics back, each saying on which
// machine it arose.
func fromWire(m Machine, wire []Diagnostic) hcl.Diagnostics {
	out := make(hcl.Diagnostics, len(wire))
	for i, d := range wire {
		out[i] = &hcl.Diagnostic{Severity: d.Severity, Summary: d.Summary, Subject: d.Subject, Context: d.Context,
			Detail: fmt.Sprintf("On machine %s: %s", m, d.Detail)}
	}
	return out
}

// with calls fn with the agent's provider for kind.
func (a *Agent) with(kind provider.Kind, fn func(p provider.Interface, ctx context.Context)) error {
	p := a.providers[kind]
	if p == nil {
		return fmt.Errorf("the agent has no provider for %q", kind)
	}
	fn(p, context.Background())
	return nil
}

// Validate answers provider.Interface.Validate on the agent's machine.
func (a *Agent) Validate(c ValidateCall, r *Reply) error {
	return a.with(c.Kind, func(p provider.Interface, ctx context.Context) {
		r.Diagnostics = toWire(p.Validate(ctx, c.Req).Diagnostics)
	})
}

// Read answers provider.Interface.Read on the agent's machine.
func (a *Agent) Read(c ReadCall, r *Reply) error {
	return a.with(c.Kind, func(p provider.Interface, ctx context.Context) {
		resp := p.Read(ctx, c.request())
		*r = Reply{Attrs: resp.Actual, Gone: resp.Gone, Remains: resp.Remains, Diagnostics: toWire(resp.Diagnostics)}
	})
}

// Create answers provider.Interface.Create on the agent's machine.
func (a *Agent) Create(c CreateCall, r *Reply) error {
	return a.with(c.Kind, func(p provider.Interface, ctx context.Context) {
		resp := p.Create(ctx, c.Req)
		*r = Reply{Attrs: resp.New, Diagnostics: toWire(resp.Diagnostics)}
	})
}

// Update answers provider.Interface.Update on the agent's machine.
func (a *Agent) Update(c UpdateCall, r *Reply) error {
	return a.with(c.Kind, func(p provider.Interface, ctx context.Context) {
		resp := p.Update(ctx, c.Req)
		*r = Reply{Attrs: resp.New, Diagnostics: toWire(resp.Diagnostics)}
	})
}

// Delete answers provider.Interface.Delete on the agent's machine.
func (a *Agent) Delete(c DeleteCall, r *Reply) error {
	return a.with(c.Kind, func(p provider.Interface, ctx context.Context) {
		r.Diagnostics = toWire(p.Delete(ctx, c.Req).Diagnostics)
	})
}

// Provider is the remote implementation of provider.Interface for one
// kind: every call goes to the machine's agent. A call the connection
// cannot carry is an error diagnostic naming the machine.
type Provider struct {
	Client *Client
	Kind   provider.Kind
}

var _ provider.Interface = (*Provider)(nil)

// do makes one call; a failure to carry it is an error diagnostic about
// addr, and the agent's diagnostics say they come from the machine.
func (p *Provider) do(ctx context.Context, method string, addr provider.Addr, call any) (Reply, hcl.Diagnostics) {
	var r Reply
	if err := p.Client.call(ctx, method, call, &r); err != nil {
		return Reply{}, hcl.Diagnostics{{Severity: hcl.DiagError,
			Summary: fmt.Sprintf("%s: %s on machine %s failed", addr, method, p.Client.Machine.Name),
			Detail:  err.Error()}}
	}
	return r, fromWire(p.Client.Machine, r.Diagnostics)
}

func (p *Provider) Validate(ctx context.Context, req provider.ValidateRequest) provider.ValidateResponse {
	_, diags := p.do(ctx, "Validate", req.Addr, ValidateCall{p.Kind, req})
	return provider.ValidateResponse{Diagnostics: diags}
}

func (p *Provider) Read(ctx context.Context, req provider.ReadRequest) provider.ReadResponse {
	r, diags := p.do(ctx, "Read", req.Addr, readCall(p.Kind, req))
	return provider.ReadResponse{Actual: r.Attrs, Gone: r.Gone, Remains: r.Remains, Diagnostics: diags}
}

func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) provider.CreateResponse {
	r, diags := p.do(ctx, "Create", req.Addr, CreateCall{p.Kind, req})
	return provider.CreateResponse{New: r.Attrs, Diagnostics: diags}
}

func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) provider.UpdateResponse {
	r, diags := p.do(ctx, "Update", req.Addr, UpdateCall{p.Kind, req})
	return provider.UpdateResponse{New: r.Attrs, Diagnostics: diags}
}

func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) provider.DeleteResponse {
	_, diags := p.do(ctx, "Delete", req.Addr, DeleteCall{p.Kind, req})
	return provider.DeleteResponse{Diagnostics: diags}
}
