// Package engine runs a scenario's workloads and measures them. It owns the
// result vocabulary (metric names, histograms, time series) shared by its
// two implementations: engine/kernel drives real sockets inside the lab's
// namespaces, engine/sim runs the deterministic TSO model.
//
// Engines never provision anything (the planner does) and never judge
// results (package outcome does).
package engine
