// Package providertest holds hand-written provider.Interface doubles for
// tests of the planner and the CLI: Fake, which records each call and
// answers with a canned or computed response, and World, an in-memory
// machine that remembers what was created, enforces the order a kernel
// would (a NIC needs its namespaces; a namespace with a NIC still inside
// cannot be deleted), can fail or half-make an object on request, and logs
// every operation with start and end sequence numbers so tests can check
// ordering and overlap.
//
// It owns only test doubles. It never touches the system, and production
// code must not import it.
package providertest
