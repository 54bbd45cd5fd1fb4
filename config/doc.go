// Package config holds the typed, validated form of a lab: what the hcl
// package produces from *.tsolab.hcl files and what the planner, the
// providers and the engines consume.
//
// It owns the vocabulary of a lab (hosts, switches, NICs, offloads,
// workloads, expectations, scenarios) and nothing else: it never parses
// files, touches the system or runs anything. Values here are concrete:
// variables and matrix values have already been substituted, one Scenario
// per matrix cell. Only expectations keep HCL expressions, because they are
// evaluated later against results.
//
// It also holds the two rules about a lab that several packages apply and
// that must agree: which NIC of a client reaches a server
// (Scenario.Route, over Scenario.Segments), and the kernel's offload
// fix-up (Requirement, OffloadSet.Fix, Offloads.Conflict). The language
// checks a lab with them, the providers explain with them what the kernel
// did, and both engines run with them.
package config
