// Package sim is the deterministic TSO model: a discrete-event simulation
// of the TCP output path (write queue, size goal, send tests, TSO deferral,
// tso_fragment, TCP Small Queues) and its congestion control (Reno, CUBIC
// with Linux 6.x's HyStart, FreeBSD's NewReno; whether a window is used,
// cwnduse.go), the NIC (TSO, software GSO, SG, checksum offload and the
// kernel's feature fix-ups), the link (rate, propagation delay, queue with
// tail drop, Ethernet framing) and the receiver (GRO/LRO, delayed and quick
// ACKs, window advertisement), with a CPU cost per host per event.
//
// It owns the engine named "sim": sim.New(sim.Options{...}) returns an
// engine.Engine that runs one workload of one config.Scenario on a virtual
// clock and reports the same metrics as the kernel engine. Stack profiles
// (one table, stacks in profile.go: linux-2.6.12, linux-2.6.13,
// linux-2.6.27, linux-6, super-tso-v2, freebsd-10, freebsd-11) are sets of
// small strategies, each mirroring a named kernel function; docs/engine.md
// describes them and the calibration of the CPU
// profiles against the seeds.
//
// A CPU profile may offer schedulers by name (sched.go) and a host runs
// one when the lab says so (config.Host.Scheduler; the default, "none",
// is FIFO cores): wake-up latencies of sleeping threads drawn from a
// random source seeded by Options.Seed and the run's repetition; the
// provenance reports the seed of a run that drew. Whatever the host's
// scheduler, an application's turn waits for its busy core at most the
// stack's kernel's scheduler slice (sched.go, timeslice: EEVDF's base
// slice for linux-6, CFS's, O(1)'s and ULE's for the historical
// stacks), then runs, its work queued behind the core's.
//
// It must not touch the system: no sockets, no namespaces, no wall clock,
// no goroutines, no map iteration where order reaches an output. Identical
// inputs, the seed among them, give byte-identical results.
package sim
