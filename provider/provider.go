package provider

import (
	"context"

	"github.com/hashicorp/hcl/v2"
)

// Interface is what the planner calls for one kind of resource. Every call
// takes a request and returns a response carrying diagnostics; an error
// diagnostic means the call did not (fully) happen. Implementations must be
// safe for concurrent calls on different resources.
type Interface interface {
	// Validate checks desired attributes against what this machine can
	// do, before anything changes (a kernel that lacks sch_netem, a
	// device that does not exist, an offload that is [fixed]).
	Validate(ctx context.Context, req ValidateRequest) ValidateResponse
	// Read returns what exists now for a resource recorded in the state,
	// or Gone when it no longer exists.
	Read(ctx context.Context, req ReadRequest) ReadResponse
	Create(ctx context.Context, req CreateRequest) CreateResponse
	Update(ctx context.Context, req UpdateRequest) UpdateResponse
	Delete(ctx context.Context, req DeleteRequest) DeleteResponse
}

// ValidateRequest asks whether Desired can be made.
type ValidateRequest struct {
	Naming  Naming
	Addr    Addr
	Desired Attrs
	// Range is the block that declared the resource, for diagnostics.
	Range hcl.Range
	// AttrRanges says where each attribute was written, by its name in
	// the lab language ("delay", "offload"), so a diagnostic about one
	// attribute points at it. Optional.
	AttrRanges map[string]hcl.Range
}

type ValidateResponse struct {
	Diagnostics hcl.Diagnostics
}

// ReadRequest refreshes a resource recorded in the state.
type ReadRequest struct {
	Naming   Naming
	Addr     Addr
	Recorded Attrs // as recorded after the last successful change
	// Snapshot, when set, is shared by the reads of one refresh and
	// nothing else: a read may answer from what another read of the same
	// refresh asked the kernel (one dump of a namespace's links for all
	// the ports in it) instead of asking again, since nothing changes
	// between the reads of a refresh. Nil: read everything now.
	Snapshot *Snapshot
}

type ReadResponse struct {
	// Actual holds the attributes as they are now, with the same keys as
	// Recorded, plus those a provider watches that a record made by an
	// older tsolab lacks (the up states). Nil when Gone.
	Actual Attrs
	Gone   bool // the object no longer exists (deleted outside tsolab)
	// Remains (with Gone) says that something of the object is left that
	// only Delete removes, or Create completes: a host's namespace file
	// with no namespace bound on it, left by a kill.
	Remains     bool
	Diagnostics hcl.Diagnostics
}

// CreateRequest makes a resource. It may find a half-made object of its
// own from an interrupted apply (ownership marker present) and must then
// complete it rather than fail.
type CreateRequest struct {
	Naming  Naming
	Addr    Addr
	Desired Attrs
}

type CreateResponse struct {
	// New holds the attributes as read back after the change: what is
	// really in force, which may differ from Desired when the kernel
	// refused something (then Diagnostics has an error naming it).
	New         Attrs
	Diagnostics hcl.Diagnostics
}

// UpdateRequest changes in-place attributes of an existing resource.
type UpdateRequest struct {
	Naming  Naming
	Addr    Addr
	Prior   Attrs // as read by refresh
	Desired Attrs
}

type UpdateResponse struct {
	New         Attrs // read back after the change
	Diagnostics hcl.Diagnostics
}

// DeleteRequest removes a resource. Objects without this lab's ownership
// marker are never deleted; adopted ones (local hosts, devices) are
// restored to Recorded's "restore" values instead.
type DeleteRequest struct {
	Naming   Naming
	Addr     Addr
	Recorded Attrs
	// Going lists the resources Addr depends on (as recorded) that the
	// same apply deletes after it. A provider may leave to their
	// deletion what it takes along (a NIC's veth goes with its host's
	// namespace), never what it would not (an adopted device is
	// restored all the same).
	Going []Addr
}

type DeleteResponse struct {
	Diagnostics hcl.Diagnostics
}
