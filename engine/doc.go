// Package engine runs a scenario's workloads and measures them: the Engine
// interface and its run request, implemented by engine/kernel, which
// drives real sockets inside the lab's namespaces, and engine/sim, which
// runs the deterministic TSO model. The results they return, and the
// metric names they fill in, are package result's.
//
// Engines never provision anything (the planner does) and never judge
// results (package outcome does).
package engine
