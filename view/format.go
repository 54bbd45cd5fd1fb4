package view

import (
	"regexp"
	"strconv"
	"time"

	"github.com/tsolab/tsolab/planner"
)

var number = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// value renders an attribute value: numbers and booleans bare, anything
// else quoted; set false renders as null.
func value(v string, set bool) string {
	if !set {
		return "null"
	}
	if v == "true" || v == "false" || number.MatchString(v) {
		return v
	}
	return strconv.Quote(v)
}

// elapsed renders a duration the way apply progress shows it: "12ms",
// "1.3s".
func elapsed(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// progress returns the "Creating..." and "Creation complete" verbs of an
// operation.
func progress(a planner.Action) (doing, done, failed string) {
	switch a {
	case planner.Create:
		return "Creating...", "Creation complete", "Creation failed"
	case planner.Update:
		return "Modifying...", "Modifications complete", "Modification failed"
	case planner.Delete:
		return "Destroying...", "Destruction complete", "Destruction failed"
	}
	return a.Name() + "...", a.Name() + " complete", a.Name() + " failed"
}
