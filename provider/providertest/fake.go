package providertest

import (
	"context"
	"sync"

	"github.com/tsolab/tsolab/provider"
)

// Fake is a provider.Interface that records its calls. For each method X,
// XCalled says whether it was called, XRequest holds the last request and
// XResponse is returned, unless XFn is set, in which case XFn computes the
// response. Calls counts every call as "create nic.tx0". Safe for
// concurrent use; read the fields after the calls returned.
type Fake struct {
	mu sync.Mutex

	ValidateCalled   bool
	ValidateRequest  provider.ValidateRequest
	ValidateResponse provider.ValidateResponse
	ValidateFn       func(provider.ValidateRequest) provider.ValidateResponse

	ReadCalled   bool
	ReadRequest  provider.ReadRequest
	ReadResponse provider.ReadResponse
	ReadFn       func(provider.ReadRequest) provider.ReadResponse

	CreateCalled   bool
	CreateRequest  provider.CreateRequest
	CreateResponse provider.CreateResponse
	CreateFn       func(provider.CreateRequest) provider.CreateResponse

	UpdateCalled   bool
	UpdateRequest  provider.UpdateRequest
	UpdateResponse provider.UpdateResponse
	UpdateFn       func(provider.UpdateRequest) provider.UpdateResponse

	DeleteCalled   bool
	DeleteRequest  provider.DeleteRequest
	DeleteResponse provider.DeleteResponse
	DeleteFn       func(provider.DeleteRequest) provider.DeleteResponse

	Calls []string
}

var _ provider.Interface = (*Fake)(nil)

func (f *Fake) record(call string) {
	f.Calls = append(f.Calls, call)
}

func (f *Fake) Validate(_ context.Context, req provider.ValidateRequest) provider.ValidateResponse {
	f.mu.Lock()
	f.ValidateCalled, f.ValidateRequest = true, req
	f.record("validate " + req.Addr.String())
	fn, resp := f.ValidateFn, f.ValidateResponse
	f.mu.Unlock()
	if fn != nil {
		return fn(req)
	}
	return resp
}

func (f *Fake) Read(_ context.Context, req provider.ReadRequest) provider.ReadResponse {
	f.mu.Lock()
	f.ReadCalled, f.ReadRequest = true, req
	f.record("read " + req.Addr.String())
	fn, resp := f.ReadFn, f.ReadResponse
	f.mu.Unlock()
	if fn != nil {
		return fn(req)
	}
	return resp
}

func (f *Fake) Create(_ context.Context, req provider.CreateRequest) provider.CreateResponse {
	f.mu.Lock()
	f.CreateCalled, f.CreateRequest = true, req
	f.record("create " + req.Addr.String())
	fn, resp := f.CreateFn, f.CreateResponse
	f.mu.Unlock()
	if fn != nil {
		return fn(req)
	}
	return resp
}

func (f *Fake) Update(_ context.Context, req provider.UpdateRequest) provider.UpdateResponse {
	f.mu.Lock()
	f.UpdateCalled, f.UpdateRequest = true, req
	f.record("update " + req.Addr.String())
	fn, resp := f.UpdateFn, f.UpdateResponse
	f.mu.Unlock()
	if fn != nil {
		return fn(req)
	}
	return resp
}

func (f *Fake) Delete(_ context.Context, req provider.DeleteRequest) provider.DeleteResponse {
	f.mu.Lock()
	f.DeleteCalled, f.DeleteRequest = true, req
	f.record("delete " + req.Addr.String())
	fn, resp := f.DeleteFn, f.DeleteResponse
	f.mu.Unlock()
	if fn != nil {
		return fn(req)
	}
	return resp
}
