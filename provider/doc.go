// Package provider is the boundary between the planner and the things a lab
// is made of: hosts (network namespaces), switches (bridges) and NICs
// (veths, adopted devices, their MTU, addresses, offloads and shaping).
//
// It owns the resource vocabulary shared by both sides: addresses
// ("nic.tx0"), flattened attributes ("offload.tso" = "true"), the naming
// and ownership markers of what tsolab creates, the translation of a
// config.Scenario into desired resources, and the small Interface each
// provider implements. It never touches the system itself; provider/host
// and provider/nic do, and planner decides what to call.
package provider
