package remote

import (
	"fmt"
)

// ProtocolVersion is the version of the calls and types below. The
// controller and the agent must speak the same one; a change of any
// request or response type, or of a call's meaning, bumps it.
const ProtocolVersion = 3

// Service is the name under which the agent registers its calls with
// net/rpc.
const Service = "Agent"

// HelloRequest opens every connection: the controller says who it is.
type HelloRequest struct {
	ProtocolVersion int
	Version         string // tsolab's version (provenance.Version)
	Hash            string // SHA-256 of the controller's binary, hex
}

// HelloResponse says who the agent is and where it runs.
type HelloResponse struct {
	ProtocolVersion int
	Version         string
	Hash            string // SHA-256 of the agent's binary, hex
	GOOS, GOARCH    string
	Hostname        string
	UID             int // the effective user ID the agent runs as
	Kernel          string
}

// MismatchError says the controller and the agent cannot talk: another
// protocol version, or another binary than the one installed.
type MismatchError struct {
	Machine string
	Want    HelloRequest
	Got     HelloResponse
}

func (e *MismatchError) Error() string {
	if e.Got.ProtocolVersion != e.Want.ProtocolVersion {
		return fmt.Sprintf("machine %s: the agent speaks protocol version %d (tsolab %s), this tsolab speaks %d (tsolab %s): "+
			"remove the agent's directory on the machine (%s) and run the command again to install this tsolab there",
			e.Machine, e.Got.ProtocolVersion, e.Got.Version, e.Want.ProtocolVersion, e.Want.Version, agentRoot)
	}
	return fmt.Sprintf("machine %s: the agent is tsolab %s (binary %s), not this tsolab %s (binary %s): "+
		"remove the agent's directory on the machine (%s) and run the command again to install this tsolab there",
		e.Machine, e.Got.Version, short(e.Got.Hash), e.Want.Version, short(e.Want.Hash), agentRoot)
}

func short(hash string) string {
	if len(hash) > 16 {
		return hash[:16]
	}
	return hash
}
