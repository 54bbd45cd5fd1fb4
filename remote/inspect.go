package remote

import (
	"context"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/inspect"
)

// ObserveCall asks the agent to read the namespaces of the hosts and
// switches of Recorded, as tsolab inspect does on this machine.
type ObserveCall struct {
	Recorded []provider.Resource
}

// ObserveReply is what the agent read: inspect.Observe's answer on its
// machine.
type ObserveReply struct {
	Namespaces []inspect.Namespace
}

// Observe answers ObserveCall with inspect.Observe on the agent's
// machine.
func (a *Agent) Observe(c ObserveCall, r *ObserveReply) error {
	r.Namespaces = inspect.Observe(c.Recorded)
	return nil
}

// Observe reads the namespaces of the hosts and switches of recorded on
// the machine (see inspect.Observe). An error names the machine.
func (c *Client) Observe(ctx context.Context, recorded []provider.Resource) ([]inspect.Namespace, error) {
	var r ObserveReply
	if err := c.call(ctx, "Observe", ObserveCall{Recorded: recorded}, &r); err != nil {
		return nil, err
	}
	return r.Namespaces, nil
}
