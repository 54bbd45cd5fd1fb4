// Package remote reaches the other machines of a lab: it connects to a
// machine over SSH, verifies its host key, copies tsolab's own binary there
// and runs `tsolab agent` over one SSH session, then speaks a versioned,
// typed protocol (net/rpc with gob over the session's stdin and stdout)
// with that agent.
//
// It owns the connection (authentication, host key verification, the
// agent's install path keyed by version and hash, sudo -n, keepalives
// that give up on a machine that stopped answering, one connection per
// machine shared by a command's phases: Pool), the protocol's
// request and response types, and the agent's server side. It must not
// know what the planner plans or what a lab means: the calls it carries
// are the provider package's, inspect's Observe and the kernel engine's
// workers', and the agent answers them with the same local code tsolab
// runs in-process; a command run in a host there (tsolab exec) gets an
// SSH session of its own. It never reads a password and never writes a
// secret anywhere.
package remote
