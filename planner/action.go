package planner

import "fmt"

// Action is what a plan does to one resource.
type Action rune

const (
	NoOp    Action = 0
	Create  Action = '+'
	Update  Action = '~'
	Replace Action = '±' // delete, then create
	Delete  Action = '-'
)

// String returns the symbol plans show: "+", "~", "-/+", "-", or " " for NoOp.
func (a Action) String() string {
	switch a {
	case NoOp:
		return " "
	case Create, Update, Delete:
		return string(rune(a))
	case Replace:
		return "-/+"
	}
	return fmt.Sprintf("Action(%d)", rune(a))
}

// Name returns the word machine-readable output uses: "no-op", "create",
// "update", "replace", "delete".
func (a Action) Name() string {
	switch a {
	case NoOp:
		return "no-op"
	case Create:
		return "create"
	case Update:
		return "update"
	case Replace:
		return "replace"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("Action(%d)", rune(a))
}

// MarshalText writes Name, so plan files and JSON views read well.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.Name()), nil }

// UnmarshalText parses the form MarshalText writes.
func (a *Action) UnmarshalText(b []byte) error {
	for _, c := range []Action{NoOp, Create, Update, Replace, Delete} {
		if c.Name() == string(b) {
			*a = c
			return nil
		}
	}
	return fmt.Errorf("unknown action %q", b)
}

// Reason says why a change has the action it has, beyond "the lab says so".
type Reason uint8

const (
	// ReasonNone: the plain case; a new resource, differing attributes, or
	// a resource no longer in the lab.
	ReasonNone Reason = iota
	// ReasonGone: the state records the resource but refresh found it
	// deleted outside tsolab, so it is created again.
	ReasonGone
	// ReasonIncomplete: an earlier apply recorded the resource as being
	// created and did not finish (killed or failed); Create completes it.
	ReasonIncomplete
	// ReasonDependency: the resource lives in something that is replaced
	// (a NIC in a host namespace that is re-created), so it is replaced
	// too. Change.Cause names that dependency.
	ReasonDependency
)

func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return "none"
	case ReasonGone:
		return "deleted_outside"
	case ReasonIncomplete:
		return "incomplete"
	case ReasonDependency:
		return "dependency_replaced"
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// MarshalText writes String.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses the form MarshalText writes.
func (r *Reason) UnmarshalText(b []byte) error {
	for _, c := range []Reason{ReasonNone, ReasonGone, ReasonIncomplete, ReasonDependency} {
		if c.String() == string(b) {
			*r = c
			return nil
		}
	}
	return fmt.Errorf("unknown reason %q", b)
}
