// Package view renders what the planner does: plans with their drift,
// apply and destroy progress, the recorded state and diagnostics. One
// interface, View, has two implementations: Human, Terraform-like text for
// a terminal, and JSON, one JSON object per line in the shape of
// terraform -json (with "@level", "@message", "@timestamp" and "type") for
// CI and other programs.
//
// It owns formatting only. It never reads files, calls providers or
// decides anything: the order of changes is the plan's own, and every
// number printed comes from the planner's data.
package view
