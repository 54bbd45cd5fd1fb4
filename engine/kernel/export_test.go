package kernel

import "github.com/tsolab/tsolab/engine/kernel/capture"

// WithoutBPF returns opts with the eBPF programs of direction dir failing
// to load with why, as on a kernel without TCX or BTF.
func WithoutBPF(opts Options, dir capture.Direction, why error) Options {
	opts.noBPF = func(d capture.Direction) error {
		if d == dir {
			return why
		}
		return nil
	}
	return opts
}
