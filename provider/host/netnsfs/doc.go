// Package netnsfs creates, enters and removes the named network namespaces
// tsolab works in, the way `ip netns` does: a namespace NAME is a bind
// mount of an nsfs file at /run/netns/NAME (/var/run/netns/NAME).
// Before binding its first namespace, a process makes /run/netns a
// shared mount point, binding it over itself when it is none, as `ip
// netns add` does: namespaces bound in a plain /run/netns were hidden by
// the bind a later `ip netns add` makes (on a machine whose / is
// private), and could no longer be removed. Remove, and Create of its
// name, refuse such a hidden namespace with a HiddenError that says what
// to run; Hidden and HiddenAll find them before (a refresh reads them
// through the bind's copies, which work until a remove).
//
// It owns the thread discipline every namespace operation needs: a
// goroutine locked to its OS thread enters the namespace, does its work
// and moves back before the thread is handed back to the Go scheduler; a
// thread that cannot move back is never reused (its goroutine exits
// locked, which ends the thread). Callers never see a thread left in a
// foreign namespace.
//
// For tests and benchmarks (netnstest, bench/iperf-compare) it also makes
// the simplest wiring traffic runs over, two namespaces joined by a veth
// pair with addresses (CreatePair), and switches kernel features of an
// interface inside a namespace (SetFeatures); the providers build their
// links from a lab instead.
//
// It knows nothing about labs or ownership: provider/host and provider/nic
// decide which names they may create or remove.
package netnsfs
