package hcl

import (
	"math"
	"path/filepath"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/tsolab/tsolab/config"
)

var hostKinds = []string{string(config.HostNamespace), string(config.HostLocal)}

// machine evaluates a machine block.
func (e *evaluator) machine(b *block) *config.Machine {
	m := &config.Machine{Name: b.name, Range: b.def}
	if s, ok := e.str(b, "address"); ok {
		if s == "" || strings.ContainsAny(s, " \t/@") {
			a := b.attrs["address"]
			e.fail(a, a.Expr.Range(), "Invalid machine address",
				"%q is not an address to reach a machine at: give its IP address or DNS name alone, like \"10.1.2.3\" (the user goes in user, the port in port).", s)
		} else {
			m.Address = s
		}
	}
	if p, ok := e.integer(b, "port", 1, 65535); ok {
		m.Port = int(p)
	}
	if s, ok := e.str(b, "user"); ok {
		m.User = s
	}
	if s, ok := e.str(b, "identity_file"); ok {
		m.IdentityFile = e.labPath(s)
	}
	if s, ok := e.str(b, "known_hosts"); ok {
		m.KnownHosts = e.labPath(s)
	}
	if v, ok := e.boolean(b, "sudo"); ok {
		m.Sudo = v
	}
	return m
}

// labPath makes a relative file path of the lab absolute, relative to
// the lab directory, so that the state records where the file is
// whatever directory a later command runs in; "~/..." (the home of the
// user tsolab runs as) and absolute paths stay as written.
func (e *evaluator) labPath(p string) string {
	if p == "" || p == "~" || strings.HasPrefix(p, "~/") || filepath.IsAbs(p) {
		return p
	}
	abs, err := filepath.Abs(filepath.Join(e.l.dir, p))
	if err != nil {
		return filepath.Join(e.l.dir, p)
	}
	return abs
}

// host evaluates a host block in one cell.
func (e *evaluator) host(b *block) *config.Host {
	h := &config.Host{Name: b.name, Kind: config.HostNamespace, DelayedAck: true, Range: b.def, AttrRanges: map[string]hclv2.Range{}}
	for _, a := range b.sortedAttrs() {
		h.AttrRanges[a.Name] = a.SrcRange
	}
	h.Machine, _ = e.reference(b, "machine")
	if k, ok := e.oneOf(b, "kind", hostKinds); ok {
		h.Kind = config.HostKind(k)
	}
	if es, m, _ := e.stringMap(b, "sysctl"); m != nil {
		for _, en := range es {
			if !e.checkSysctl(b, en) {
				delete(m, en.key)
			}
		}
		h.Sysctl = m
	}
	if s, ok := e.str(b, "stack"); ok {
		h.Stack = s
	}
	if _, m, _ := e.stringMap(b, "stack_options"); m != nil {
		h.StackOptions = m
	}
	if s, ok := e.str(b, "cpu"); ok {
		h.CPU = s
	}
	if n, ok := e.integer(b, "cores", 1, 4096); ok {
		h.Cores = int(n)
	}
	h.CoresOf, _ = e.reference(b, "cores_of")
	if r, ok := e.rate(b, "bus"); ok {
		h.Bus = r
	}
	if v, ok := e.boolean(b, "delayed_ack"); ok {
		h.DelayedAck = v
	}
	if s, ok := e.str(b, "scheduler"); ok {
		h.Scheduler = s
	}
	return h
}

// nic evaluates a nic block in one cell.
func (e *evaluator) nic(b *block) *config.NIC {
	n := &config.NIC{Name: b.name, Range: b.def, AttrRanges: map[string]hclv2.Range{}}
	for _, a := range b.sortedAttrs() {
		n.AttrRanges[a.Name] = a.SrcRange
	}
	n.Host, _ = e.reference(b, "host")
	n.Connect, _ = e.reference(b, "connect")
	n.Peer, _ = e.reference(b, "peer")
	if d, ok := e.str(b, "device"); ok {
		if problem := ifnameProblem(d); problem != "" && d != "lo" {
			a := b.attrs["device"]
			e.fail(a, a.Expr.Range(), "Invalid device name",
				"%q is not a Linux interface name: %s. Give the device's name as `ip link` shows it, like \"enp3s0\".", d, problem)
		} else {
			n.Device = d
		}
	}
	if s, ok := e.str(b, "address"); ok {
		n.Address, _ = e.address(b, s)
	}
	if m, ok := e.integer(b, "mtu", math.MinInt64, math.MaxInt64); ok {
		if m < 68 || m > 65535 {
			a := b.attrs["mtu"]
			e.fail(a, a.Expr.Range(), "Invalid MTU",
				"The MTU must be between 68 (the smallest IPv4 allows) and 65535; got %d. Ethernet uses 1500, jumbo frames 9000.", m)
		} else {
			n.MTU = int(m)
		}
	}
	if r, ok := e.rate(b, "rate"); ok {
		n.Rate = r
	}
	if d, ok := e.duration(b, "delay"); ok {
		n.Delay = d
	}
	if q, ok := e.size(b, "queue", 1); ok {
		n.Queue = q
	}
	e.offloads(b, n)
	return n
}

// offloads reads offload = { tso = true, ... } and checks that the kernel
// can hold the wanted flags together.
func (e *evaluator) offloads(b *block, n *config.NIC) {
	es, a, ok := e.entries(b, "offload")
	if !ok {
		return
	}
	for _, en := range es {
		o, known := config.ParseOffload(en.key)
		if !known {
			e.fail(a, en.key0, "Unknown offload",
				"A NIC has no offload %q. %sThe offloads are %s.", en.key, didYouMean(en.key, config.OffloadNames()), joinAnd(config.OffloadNames()))
			continue
		}
		v, err := convert.Convert(en.value, cty.Bool)
		if err != nil || v.IsNull() {
			e.fail(a, en.rng, "Incorrect value type",
				"Offload %s must be true or false; got %s.", en.key, literal(en.value))
			continue
		}
		n.Offload.Set(o, v.True())
		n.AttrRanges["offload."+en.key] = en.rng
	}
	if r, ok := n.Offload.Conflict(); ok {
		rng, ok := n.AttrRanges["offload."+r.Offload.String()]
		if !ok {
			rng = a.SrcRange
		}
		e.fail(a, rng, "Conflicting offloads",
			"%s. Turn %s on as well, or turn %s off.", r, r.Needs, r.Offload)
	}
}

// checkSysctl checks one sysctl key: only net. keys are per namespace.
func (e *evaluator) checkSysctl(b *block, en entry) bool {
	a := b.attrs["sysctl"]
	k := en.key
	switch {
	case !strings.HasPrefix(k, "net."):
		e.fail(a, en.key0, "Invalid sysctl",
			"Only net. sysctls belong to a network namespace; %q would change the whole machine. Set it outside tsolab, or use a net. key like \"net.ipv4.tcp_wmem\".", k)
		return false
	case strings.ContainsAny(k, "/ \t\n") || strings.Contains(k, "..") || strings.HasSuffix(k, "."):
		e.fail(a, en.key0, "Invalid sysctl",
			"%q is not a sysctl name: write it with dots, like \"net.ipv4.tcp_wmem\".", k)
		return false
	}
	return true
}
