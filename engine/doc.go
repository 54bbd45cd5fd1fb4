// Package engine runs a scenario's workloads and measures them: the Engine
// interface and its run request, implemented by engine/kernel, which
// drives real sockets inside the lab's namespaces, and engine/sim, which
// runs the deterministic TSO model. The results they return are package
// result's (engine/result.go names them here for the engines).
//
// Engines never provision anything (the planner does) and never judge
// results (package outcome does).
package engine
