package sim

import (
	"fmt"
	"sort"
	"strings"
)

// Param is one named cost parameter of a CPU profile: the name a lab's
// calibrate block frees, and where the profile keeps it.
type Param struct {
	Name string
	// Unit says what one unit of the value is.
	Unit string
	get  func(*CPUProfile) *float64
}

// params are the CPU profile's cost parameters a calibration may fit, by
// their language names (the CPUProfile fields in snake case).
var params = []Param{
	{"syscall", "ns per write/read/sendfile call", func(p *CPUProfile) *float64 { return &p.Syscall }},
	{"read_wait", "ns per read that empties the receive queue, beyond syscall (the empty read and the poll after it)", func(p *CPUProfile) *float64 { return &p.ReadWait }},
	{"copy_per_byte", "ns per byte copied", func(p *CPUProfile) *float64 { return &p.CopyPerByte }},
	{"page_per_byte", "ns per byte of sendfile", func(p *CPUProfile) *float64 { return &p.PagePerByte }},
	{"stack_per_skb", "ns per skb through tcp_transmit_skb", func(p *CPUProfile) *float64 { return &p.StackPerSkb }},
	{"driver_per_unit", "ns per send unit at the driver", func(p *CPUProfile) *float64 { return &p.DriverPerUnit }},
	{"gso_per_seg", "ns per segment cut by software GSO", func(p *CPUProfile) *float64 { return &p.GSOPerSeg }},
	{"tx_completion", "ns per send unit freed", func(p *CPUProfile) *float64 { return &p.TxCompletion }},
	{"csum_per_byte", "ns per byte checksummed", func(p *CPUProfile) *float64 { return &p.CsumPerByte }},
	{"divide", "ns per divide by the MSS", func(p *CPUProfile) *float64 { return &p.Divide }},
	{"ack_rx", "ns per ACK processed", func(p *CPUProfile) *float64 { return &p.AckRx }},
	{"ack_tx", "ns per pure ACK sent", func(p *CPUProfile) *float64 { return &p.AckTx }},
	{"interrupt", "ns per interrupt and NAPI poll", func(p *CPUProfile) *float64 { return &p.Interrupt }},
	{"rx_per_frame", "ns per frame off the receive ring", func(p *CPUProfile) *float64 { return &p.RxPerFrame }},
	{"rx_per_skb", "ns per skb through ip_rcv and tcp_v4_rcv", func(p *CPUProfile) *float64 { return &p.RxPerSkb }},
	{"gro_merge", "ns per frame merged by GRO/LRO", func(p *CPUProfile) *float64 { return &p.GROMerge }},
	{"irq_delay", "ns of interrupt moderation", func(p *CPUProfile) *float64 { return &p.IRQDelay }},
	{"bus_per_unit", "ns of bus time per DMA transfer beyond its bytes", func(p *CPUProfile) *float64 { return &p.BusPerUnit }},
	{"bus_per_buffer", "ns of bus time per DMA buffer of a transfer beyond its bytes", func(p *CPUProfile) *float64 { return &p.BusPerBuffer }},
}

// ParamNames lists the cost parameters a calibration may free, sorted.
func ParamNames() []string {
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = p.Name
	}
	sort.Strings(out)
	return out
}

// Get returns the value of the named parameter.
func (p *CPUProfile) Get(name string) (float64, error) {
	ptr, err := p.param(name)
	if err != nil {
		return 0, err
	}
	return *ptr, nil
}

// Set sets the named parameter.
func (p *CPUProfile) Set(name string, v float64) error {
	ptr, err := p.param(name)
	if err != nil {
		return err
	}
	*ptr = v
	return nil
}

func (p *CPUProfile) param(name string) (*float64, error) {
	for _, q := range params {
		if q.Name == name {
			return q.get(p), nil
		}
	}
	return nil, fmt.Errorf("no cost parameter %q: use one of %s", name, strings.Join(ParamNames(), ", "))
}

// BuiltinCPUProfiles returns the named cpu profiles the model knows.
func BuiltinCPUProfiles() []CPUProfile { return builtinCPUProfiles() }
