package providertest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/provider"
)

// OpKind is a World operation.
type OpKind uint8

const (
	OpValidate OpKind = iota
	OpRead
	OpCreate
	OpUpdate
	OpDelete
)

func (k OpKind) String() string {
	switch k {
	case OpValidate:
		return "validate"
	case OpRead:
		return "read"
	case OpCreate:
		return "create"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// Op is one logged World operation. Start and End come from one counter
// shared by all operations: two operations overlapped in time when each
// started before the other ended.
type Op struct {
	Kind       OpKind
	Addr       provider.Addr
	Start, End int
	Failed     bool
}

// String is "create nic.tx0".
func (o Op) String() string { return o.Kind.String() + " " + o.Addr.String() }

// Object is one thing a World holds.
type Object struct {
	Attrs provider.Attrs
	// Complete is false for an object a create left half-made.
	Complete bool
}

// World is an in-memory machine implementing provider.Interface for every
// resource kind. Hosts and switches with a "netns" attribute are
// namespaces; NICs live in theirs ("netns", "peer_netns"), must find them
// when created, and keep them from being deleted. Create of an existing
// object (half-made, or made by an apply that died before recording it)
// completes it, as real providers must; the log shows how often each
// resource was created.
//
// The exported hooks are read without locking: set them before use.
type World struct {
	// ValidateFn, when set, answers Validate; otherwise Validate accepts.
	ValidateFn func(provider.ValidateRequest) hcl.Diagnostics
	// Fail, when set, is asked before each Create, Update and Delete; an
	// error diagnostic fails the operation with nothing changed.
	Fail func(op OpKind, addr provider.Addr) hcl.Diagnostics
	// HalfCreate lists resources whose next Create leaves the object
	// half-made (Complete false, only the attributes that force
	// replacement set) and fails. The entry is removed when used.
	HalfCreate map[provider.Addr]bool
	// OnOp, when set, is called at the start of every Create, Update and
	// Delete (after the start is logged, without the World's lock): tests
	// block there to force overlap, or copy the state file there to
	// simulate a crash.
	OnOp func(op OpKind, addr provider.Addr)

	mu          sync.Mutex
	objects     map[provider.Addr]*Object
	log         []Op
	seq         int
	inFlight    int
	maxInFlight int
}

var _ provider.Interface = (*World)(nil)

// NewWorld returns an empty World.
func NewWorld() *World {
	return &World{objects: map[provider.Addr]*Object{}, HalfCreate: map[provider.Addr]bool{}}
}

// Providers returns w as the provider of every kind.
func (w *World) Providers() map[provider.Kind]provider.Interface {
	return map[provider.Kind]provider.Interface{provider.KindHost: w, provider.KindSwitch: w, provider.KindNIC: w}
}

// Object returns a copy of the object at addr.
func (w *World) Object(addr provider.Addr) (Object, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	o, ok := w.objects[addr]
	if !ok {
		return Object{}, false
	}
	return Object{Attrs: o.Attrs.Clone(), Complete: o.Complete}, true
}

// Addrs lists the objects that exist, sorted.
func (w *World) Addrs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for a := range w.objects {
		out = append(out, a.String())
	}
	sort.Strings(out)
	return out
}

// SetAttr changes an attribute behind tsolab's back (drift).
func (w *World) SetAttr(addr provider.Addr, key, value string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.objects[addr].Attrs[key] = value
}

// Remove deletes an object behind tsolab's back, with the NICs living in
// its namespace, as deleting a namespace does.
func (w *World) Remove(addr provider.Addr) {
	w.mu.Lock()
	defer w.mu.Unlock()
	o := w.objects[addr]
	delete(w.objects, addr)
	if ns := o.Attrs[provider.AttrNetNS]; ns != "" && addr.Kind != provider.KindNIC {
		for a, n := range w.objects {
			if a.Kind == provider.KindNIC && (n.Attrs[provider.AttrNetNS] == ns || n.Attrs[provider.AttrPeerNetNS] == ns) {
				delete(w.objects, a)
			}
		}
	}
}

// Log returns the operations so far, in the order they ended.
func (w *World) Log() []Op {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Op(nil), w.log...)
}

// MaxInFlight is the largest number of Create, Update and Delete calls
// that ran at once.
func (w *World) MaxInFlight() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxInFlight
}

// InFlight is the number of Create, Update and Delete calls running now.
func (w *World) InFlight() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inFlight
}

func errDiag(addr provider.Addr, format string, args ...any) hcl.Diagnostics {
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: addr.String() + ": " + fmt.Sprintf(format, args...)}}
}

// begin logs the start of an operation and runs the hooks.
func (w *World) begin(kind OpKind, addr provider.Addr) (start int, diags hcl.Diagnostics) {
	w.mu.Lock()
	w.seq++
	start = w.seq
	w.inFlight++
	if w.inFlight > w.maxInFlight {
		w.maxInFlight = w.inFlight
	}
	w.mu.Unlock()
	if w.OnOp != nil {
		w.OnOp(kind, addr)
	}
	if w.Fail != nil {
		diags = w.Fail(kind, addr)
	}
	return start, diags
}

// endLocked logs the end of an operation.
// Precondition: w.mu is held.
func (w *World) endLocked(kind OpKind, addr provider.Addr, start int, diags hcl.Diagnostics) {
	w.seq++
	w.inFlight--
	w.log = append(w.log, Op{Kind: kind, Addr: addr, Start: start, End: w.seq, Failed: diags.HasErrors()})
}

// namespaceLocked returns the object owning namespace ns, or nil.
// Precondition: w.mu is held.
func (w *World) namespaceLocked(ns string) *provider.Addr {
	for a, o := range w.objects {
		if a.Kind != provider.KindNIC && o.Attrs[provider.AttrNetNS] == ns {
			return &a
		}
	}
	return nil
}

func (w *World) Validate(_ context.Context, req provider.ValidateRequest) provider.ValidateResponse {
	if w.ValidateFn != nil {
		return provider.ValidateResponse{Diagnostics: w.ValidateFn(req)}
	}
	return provider.ValidateResponse{}
}

func (w *World) Read(_ context.Context, req provider.ReadRequest) provider.ReadResponse {
	w.mu.Lock()
	defer w.mu.Unlock()
	o, ok := w.objects[req.Addr]
	if !ok {
		return provider.ReadResponse{Gone: true}
	}
	actual := provider.Attrs{}
	for k := range req.Recorded {
		if v, ok := o.Attrs[k]; ok {
			actual[k] = v
		}
	}
	return provider.ReadResponse{Actual: actual}
}

func (w *World) Create(_ context.Context, req provider.CreateRequest) (resp provider.CreateResponse) {
	start, diags := w.begin(OpCreate, req.Addr)
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { w.endLocked(OpCreate, req.Addr, start, resp.Diagnostics) }()
	if diags.HasErrors() {
		return provider.CreateResponse{Diagnostics: diags}
	}
	a := req.Desired
	if req.Addr.Kind == provider.KindNIC {
		for _, k := range []string{provider.AttrNetNS, provider.AttrPeerNetNS} {
			if ns := a[k]; ns != "" && w.namespaceLocked(ns) == nil {
				return provider.CreateResponse{Diagnostics: errDiag(req.Addr, "namespace %s does not exist", ns)}
			}
		}
	} else if ns := a[provider.AttrNetNS]; ns != "" {
		if owner := w.namespaceLocked(ns); owner != nil && *owner != req.Addr {
			return provider.CreateResponse{Diagnostics: errDiag(req.Addr, "namespace %s already belongs to %s", ns, owner)}
		}
	}
	if w.HalfCreate[req.Addr] {
		delete(w.HalfCreate, req.Addr)
		half := provider.Attrs{}
		for k, v := range a {
			if provider.ReplaceAttr(k) {
				half[k] = v
			}
		}
		w.objects[req.Addr] = &Object{Attrs: half}
		return provider.CreateResponse{Diagnostics: errDiag(req.Addr, "interrupted half-way (HalfCreate)")}
	}
	w.objects[req.Addr] = &Object{Attrs: a.Clone(), Complete: true}
	return provider.CreateResponse{New: a.Clone()}
}

func (w *World) Update(_ context.Context, req provider.UpdateRequest) (resp provider.UpdateResponse) {
	start, diags := w.begin(OpUpdate, req.Addr)
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { w.endLocked(OpUpdate, req.Addr, start, resp.Diagnostics) }()
	if diags.HasErrors() {
		return provider.UpdateResponse{Diagnostics: diags}
	}
	o, ok := w.objects[req.Addr]
	if !ok {
		return provider.UpdateResponse{Diagnostics: errDiag(req.Addr, "does not exist")}
	}
	for k, v := range req.Desired {
		if provider.ReplaceAttr(k) && o.Attrs[k] != v {
			return provider.UpdateResponse{Diagnostics: errDiag(req.Addr, "%s cannot change in place", k)}
		}
		o.Attrs[k] = v
	}
	return provider.UpdateResponse{New: o.Attrs.Clone()}
}

func (w *World) Delete(_ context.Context, req provider.DeleteRequest) (resp provider.DeleteResponse) {
	start, diags := w.begin(OpDelete, req.Addr)
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { w.endLocked(OpDelete, req.Addr, start, resp.Diagnostics) }()
	if diags.HasErrors() {
		return provider.DeleteResponse{Diagnostics: diags}
	}
	o, ok := w.objects[req.Addr]
	if !ok {
		return provider.DeleteResponse{} // already gone
	}
	if ns := o.Attrs[provider.AttrNetNS]; ns != "" && req.Addr.Kind != provider.KindNIC {
		var inside []string
		for a, n := range w.objects {
			if a.Kind == provider.KindNIC && (n.Attrs[provider.AttrNetNS] == ns || n.Attrs[provider.AttrPeerNetNS] == ns) {
				inside = append(inside, a.String())
			}
		}
		if len(inside) > 0 {
			sort.Strings(inside)
			return provider.DeleteResponse{Diagnostics: errDiag(req.Addr, "namespace %s still holds %s", ns, strings.Join(inside, ", "))}
		}
	}
	delete(w.objects, req.Addr)
	return provider.DeleteResponse{}
}
