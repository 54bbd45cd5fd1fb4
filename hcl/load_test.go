package hcl

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
)

// mark sets where a diagnostic's subject starts in a test source.
const mark = "»"

// header declares what most cases build on; it has no marks.
const header = `lab "t" {}
host "a" {}
host "b" {}
switch "sw" {}
`

// diag is what a test compares of a diagnostic.
type diag struct {
	Severity string
	Summary  string
	File     string
	Line     int
	Column   int
}

func diagsOf(ds hclv2.Diagnostics) []diag {
	var out []diag
	for _, d := range ds {
		g := diag{Severity: "Error", Summary: d.Summary}
		if d.Severity == hclv2.DiagWarning {
			g.Severity = "Warning"
		}
		if d.Subject != nil {
			g.File, g.Line, g.Column = d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column
		}
		out = append(out, g)
	}
	return out
}

// unmark removes the marks from src and returns where they were, as
// (line, column) pairs in the stripped text.
func unmark(src string) (string, [][2]int) {
	var pos [][2]int
	var b strings.Builder
	line, col := 1, 1
	for len(src) > 0 {
		if strings.HasPrefix(src, mark) {
			pos = append(pos, [2]int{line, col})
			src = src[len(mark):]
			continue
		}
		r, size := utf8.DecodeRuneInString(src)
		b.WriteRune(r)
		src = src[size:]
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return b.String(), pos
}

// wantDiags pairs the marks of src, in order, with "Error: Summary" or
// "Warning: Summary" lines; lines after the marks run out have no subject.
func wantDiags(t *testing.T, file string, pos [][2]int, want []string) []diag {
	t.Helper()
	var out []diag
	var loose []diag
	for i, w := range want {
		sev, summary, ok := strings.Cut(w, ": ")
		if !ok {
			t.Fatalf("want %q: write \"Error: Summary\"", w)
		}
		d := diag{Severity: sev, Summary: summary}
		if i < len(pos) {
			d.File, d.Line, d.Column = file, pos[i][0], pos[i][1]
			out = append(out, d)
		} else {
			loose = append(loose, d)
		}
	}
	if len(pos) > len(want) {
		t.Fatalf("%d marks but %d wanted diagnostics", len(pos), len(want))
	}
	return append(loose, out...)
}

func loadString(src string, opts Options) (*config.Lab, hclv2.Diagnostics) {
	return load("lab", []sourceFile{{name: "lab.tsolab.hcl", src: []byte(src)}}, opts)
}

func TestLoadMistakes(t *testing.T) {
	tests := []struct {
		name string
		src  string // header + src, unless noHeader
		want []string
		// noHeader leaves the header out.
		noHeader bool
	}{
		// Structure.
		{name: "unknown block type", src: `»hots "x" {}`, want: []string{"Error: Unknown block type"}},
		{name: "unknown attribute", src: `host "c" { »colour = "red" }`, want: []string{"Error: Unknown attribute"}},
		{name: "unknown attribute with suggestion", src: "nic \"n0\" {\n  host = host.a\n  »adress = \"10.0.0.1/24\"\n}", want: []string{"Error: Unknown attribute"}},
		{name: "attribute outside a block", src: `»mtu = 9000`, want: []string{"Error: Attribute outside a block"}},
		{name: "nested block", src: "host \"c\" {\n  »nic \"c0\" {}\n}", want: []string{"Error: Unexpected block"}},
		{name: "offload written as a block", src: "nic \"n0\" {\n  host = host.a\n  »offload {\n    tso = true\n  }\n}", want: []string{"Error: Unexpected block"}},
		{name: "missing name", src: `»host {}`, want: []string{"Error: Missing name"}},
		{name: "extra label", src: `host "c" »"d" {}`, want: []string{"Error: Extra label"}},
		{name: "matrix with a name", src: `matrix »"m" { tso = [true] }`, want: []string{"Error: Unexpected name"}},
		{name: "missing lab block", noHeader: true, src: `»host "a" {}`, want: []string{"Error: Missing lab block"}},
		{name: "duplicate lab block", src: `»lab "u" {}`, want: []string{"Error: Duplicate lab block"}},
		{name: "duplicate matrix block", src: "matrix { x = [1] }\n»matrix { y = [2] }", want: []string{"Error: Duplicate matrix block"}},
		{name: "duplicate host", src: `»host "a" {}`, want: []string{"Error: Duplicate host name"}},
		{name: "duplicate switch", src: `»switch "sw" {}`, want: []string{"Error: Duplicate switch name"}},
		{name: "duplicate nic", src: "nic \"n0\" { host = host.a }\n»nic \"n0\" { host = host.b }", want: []string{"Error: Duplicate nic name"}},
		{name: "duplicate variable", src: "variable \"v\" { default = 1 }\n»variable \"v\" { default = 2 }", want: []string{"Error: Duplicate variable name"}},
		{name: "same name for a host and a nic is fine", src: `nic "a" { host = host.a }`},
		{name: "bad engine", noHeader: true, src: `lab "t" { engine = »"kernal" }`, want: []string{"Error: Invalid engine"}},
		{name: "bad lab name", noHeader: true, src: `»lab "my lab" {}`, want: []string{"Error: Invalid lab name"}},
		{name: "bad host name", src: `»host "a.b" {}`, want: []string{"Error: Invalid host name"}},
		{name: "bad switch name", src: `»switch "s w" {}`, want: []string{"Error: Invalid switch name"}},
		{name: "host name starting with a digit", src: `»host "1a" {}`, want: []string{"Error: Invalid host name"}},
		{name: "nic name too long", src: `»nic "averyverylongname" { host = host.a }`, want: []string{"Error: Invalid interface name"}},
		{name: "nic named lo", src: `»nic "lo" { host = host.a }`, want: []string{"Error: Invalid interface name"}},
		{name: "nic name with slash", src: `»nic "a/b" { host = host.a }`, want: []string{"Error: Invalid interface name"}},
		{name: "nic name with colon", src: `»nic "eth0:1" { host = host.a }`, want: []string{"Error: Invalid interface name"}},
		{name: "nic name with space", src: `»nic "a b" { host = host.a }`, want: []string{"Error: Invalid interface name"}},
		{name: "sysctl outside net", src: `host "c" { sysctl = { »"kernel.pid_max" = 4096 } }`, want: []string{"Error: Invalid sysctl"}},
		{name: "sysctl with a path", src: `host "c" { sysctl = { »"net.ipv4/../../kernel.x" = 1 } }`, want: []string{"Error: Invalid sysctl"}},
		{name: "bad host kind", src: `host "c" { kind = »"vm" }`, want: []string{"Error: Invalid kind"}},
		{name: "machine without address", src: `»machine "r1" { user = "root" }`, want: []string{"Error: Missing required attribute"}},
		{name: "machine address with a user", src: `machine "r1" { address = »"root@10.1.2.3" }`, want: []string{"Error: Invalid machine address"}},
		{name: "machine port out of range", src: "machine \"r1\" {\n  address = \"10.1.2.3\"\n  port = »70000\n}", want: []string{"Error: Value out of range"}},
		{name: "bad machine name", src: `»machine "r 1" { address = "10.1.2.3" }`, want: []string{"Error: Invalid machine name"}},
		{name: "undeclared machine", src: "host \"c\" { machine = »machine.r9 }", want: []string{"Error: Reference to undeclared machine"}},
		{name: "machine given as a string", src: "machine \"r1\" { address = \"10.1.2.3\" }\nhost \"c\" { machine = »\"r1\" }", want: []string{"Error: Not a reference"}},
		{name: "one local host per machine", src: "machine \"r1\" { address = \"10.1.2.3\" }\nhost \"c\" { kind = \"local\" }\nhost \"d\" {\n  kind = \"local\"\n  machine = machine.r1\n}"},
		{name: "two local hosts on one machine", src: "machine \"r1\" { address = \"10.1.2.3\" }\nhost \"c\" {\n  kind = \"local\"\n  machine = machine.r1\n}\nhost \"d\" {\n  »kind = \"local\"\n  machine = machine.r1\n}", want: []string{"Error: Two local hosts"}},
		{name: "switch on another machine", src: "machine \"r1\" { address = \"10.1.2.3\" }\nhost \"c\" { machine = machine.r1 }\nnic \"c0\" {\n  host = host.c\n  connect = switch.sw\n}"},
		{name: "switch ports on two machines", src: "machine \"r1\" { address = \"10.1.2.3\" }\nhost \"c\" { machine = machine.r1 }\nnic \"c0\" {\n  host = host.c\n  connect = switch.sw\n}\nnic \"a0\" {\n  host = host.a\n  »connect = switch.sw\n}", want: []string{"Error: Link crosses machines"}},
		{name: "peer on another machine", src: "machine \"r1\" { address = \"10.1.2.3\" }\nhost \"c\" { machine = machine.r1 }\nnic \"c0\" {\n  host = host.c\n  »peer = nic.a9\n}\nnic \"a9\" { host = host.a }", want: []string{"Error: Link crosses machines"}},
		{name: "one device name on two machines", src: "machine \"r1\" { address = \"10.1.2.3\" }\nhost \"c\" { machine = machine.r1 }\nnic \"c0\" {\n  host = host.c\n  device = \"enp3s0\"\n}\nnic \"a0\" {\n  host = host.a\n  device = \"enp3s0\"\n}"},
		{name: "two local hosts", src: "host \"c\" { kind = \"local\" }\nhost \"d\" { »kind = \"local\" }", want: []string{"Error: Two local hosts"}},
		{name: "cores of another host", src: "host \"c\" { cores_of = host.a }"},
		{name: "cores and cores_of", src: "host \"c\" {\n  cores_of = host.a\n  »cores = 2\n}", want: []string{"Error: Cores and cores_of"}},
		{name: "cores of a host without cores", src: "host \"c\" { cores_of = host.a }\nhost \"d\" { »cores_of = host.c }", want: []string{"Error: Cores of a host without cores"}},
		{name: "cores on another machine", src: "machine \"r1\" { address = \"10.1.2.3\" }\nhost \"c\" {\n  machine = machine.r1\n  »cores_of = host.a\n}", want: []string{"Error: Cores on another machine"}},
		{name: "cores of itself", src: "host \"c\" { cores_of = »host.c }", want: []string{"Error: Reference cycle"}},

		// Required attributes.
		{name: "nic without host", src: `»nic "n0" { connect = switch.sw }`, want: []string{"Error: Missing required attribute"}},
		{name: "workload without client and servers", src: `»workload "w" { duration = "1s" }`, want: []string{"Error: Missing required attributes"}},
		{name: "expect without condition", src: `workload "w" {
  client   = host.a
  servers  = [nic.b0]
  duration = "1s"
}
nic "a0" {
  host = host.a
  connect = switch.sw
  address = "10.0.0.1/24"
}
nic "b0" {
  host = host.b
  connect = switch.sw
  address = "10.0.0.2/24"
}
»expect "e" {}`, want: []string{"Error: Missing required attribute"}},

		// References.
		{name: "undeclared host", src: "nic \"n0\" {\n  host = »host.c\n}", want: []string{"Error: Reference to undeclared host"}},
		{name: "reference to a nic with an invalid name", src: "nic \"n0\" {\n  host = host.a\n  peer = »nic.way-too-long-name0\n}\n»nic \"way-too-long-name0\" { host = host.b }", want: []string{"Error: Reference to a block in error", "Error: Invalid interface name"}},
		// A misspelt block type is one error, at the type: what refers
		// to the block, or would miss it, is not reported again.
		{name: "references to a block of a misspelt type", src: "»workloads \"w\" {}\nexpect \"e\" {\n  workload = workload.w\n  condition = true\n}\nexpect \"f\" {\n  workload = workload.w\n  condition = true\n}", want: []string{"Error: Unknown block type"}},
		{name: "observed of the one workload, misspelt", src: twoNICs + "»workloadd \"w\" {\n  client = host.a\n  servers = [nic.b0]\n}\nobserved \"o\" { values = { throughput_bps = 1e9 } }", want: []string{"Error: Unknown block type"}},
		{name: "misspelt matrix type", src: "»matrixx { tso = [true, false] }\nnic \"n0\" {\n  host = host.a\n  offload = { tso = matrix.tso }\n}\n" + twoNICs + bulk + "expect \"e\" {\n  when = matrix.tso\n  condition = result.bytes > scenario({ tso = false }).bytes\n}\nobserved \"o\" {\n  scenario = { tso = true }\n  values = { throughput_bps = 1e9 }\n}", want: []string{"Error: Unknown block type"}},
		{name: "misspelt variable type", src: "»variabel \"mtu\" { default = 9000 }\nnic \"n0\" {\n  host = host.a\n  mtu = var.mtu\n}", want: []string{"Error: Unknown block type"}},
		{name: "misspelt nic type", src: "nic \"a0\" {\n  host = host.a\n  connect = switch.sw\n  address = \"10.0.0.1/24\"\n}\n»nics \"b0\" {\n  host = host.b\n  connect = switch.sw\n  address = \"10.0.0.2/24\"\n}\n" + bulk, want: []string{"Error: Unknown block type"}},
		{name: "misspelt lab type", noHeader: true, src: "»labb \"t\" {}\nhost \"a\" {}", want: []string{"Error: Unknown block type"}},
		{name: "misspelt machine type", src: "»machin \"r1\" { address = \"10.1.2.3\" }\nhost \"c\" { machine = machine.r1 }\nnic \"c0\" {\n  host = host.c\n  device = \"enp3s0\"\n}\nnic \"a0\" {\n  host = host.a\n  device = \"enp3s0\"\n}", want: []string{"Error: Unknown block type"}},
		{name: "undeclared switch", src: "nic \"n0\" {\n  host = host.a\n  connect = »switch.sww\n}", want: []string{"Error: Reference to undeclared switch"}},
		{name: "undeclared nic", src: "nic \"n0\" {\n  host = host.a\n  peer = »nic.n9\n}", want: []string{"Error: Reference to undeclared nic"}},
		{name: "undeclared variable", src: "nic \"n0\" {\n  host = host.a\n  mtu = »var.mtu\n}", want: []string{"Error: Reference to undeclared variable"}},
		{name: "undeclared matrix axis", src: "matrix { tso = [true] }\nnic \"n0\" {\n  host = host.a\n  offload = { tso = »matrix.gso }\n}", want: []string{"Error: Reference to undeclared matrix axis"}},
		{name: "matrix axis without matrix", src: "nic \"n0\" {\n  host = host.a\n  offload = { tso = »matrix.tso }\n}", want: []string{"Error: Reference to undeclared matrix axis"}},
		{name: "unknown root", src: "nic \"n0\" {\n  host = »hots.a\n}", want: []string{"Error: Unknown name"}},
		{name: "unquoted string", src: "host \"c\" { kind = »netns }", want: []string{"Error: Unknown name"}},
		{name: "wrong kind of reference", src: "nic \"n0\" {\n  host = host.a\n  connect = »host.b\n}", want: []string{"Error: Wrong kind of reference"}},
		{name: "reference not allowed in a plain attribute", src: "nic \"n0\" {\n  host = host.a\n  mtu = »host.b\n}", want: []string{"Error: Reference not allowed here"}},
		{name: "variable default reads a variable", src: "variable \"x\" { default = 1 }\nvariable \"y\" { default = »var.x }", want: []string{"Error: Reference not allowed here"}},
		{name: "incomplete reference", src: "nic \"n0\" {\n  host = »host\n}", want: []string{"Error: Incomplete reference"}},
		{name: "reference attribute beyond name", src: "nic \"n0\" {\n  host = host.a.»mtu\n}", want: []string{"Error: Unsupported attribute"}},
		{name: "string instead of reference", src: "nic \"n0\" {\n  host = »\"a\"\n}", want: []string{"Error: Not a reference"}},
		{name: "unknown function", src: "nic \"n0\" {\n  host = host.a\n  mtu = »maxx(1500, 9000)\n}", want: []string{"Error: Call to unknown function"}},
		{name: "functions work", src: "nic \"n0\" {\n  host = host.a\n  mtu = max(1500, 9000)\n}"},

		// Cycles.
		{name: "peers naming each other", src: "nic \"p\" {\n  host = host.a\n  peer = nic.q\n}\nnic \"q\" {\n  host = host.b\n  peer = »nic.p\n}", want: []string{"Error: Reference cycle"}},
		{name: "peer loop of three", src: "nic \"p\" {\n  host = host.a\n  »peer = nic.q\n}\nnic \"q\" {\n  host = host.b\n  peer = nic.r\n}\nnic \"r\" {\n  host = host.b\n  peer = »nic.p\n}", want: []string{"Error: Peer is already linked", "Error: Reference cycle"}},
		{name: "own peer", src: "nic \"p\" {\n  host = host.a\n  peer = »nic.p\n}", want: []string{"Error: Reference cycle"}},

		// Addresses.
		{name: "bad cidr", src: "nic \"n0\" {\n  host = host.a\n  address = »\"10.0.0.300/24\"\n}", want: []string{"Error: Invalid address"}},
		{name: "address without prefix", src: "nic \"n0\" {\n  host = host.a\n  address = »\"10.0.0.1\"\n}", want: []string{"Error: Invalid address"}},
		{name: "network address", src: "nic \"n0\" {\n  host = host.a\n  address = »\"10.0.0.0/24\"\n}", want: []string{"Error: Invalid address"}},
		{name: "broadcast address", src: "nic \"n0\" {\n  host = host.a\n  address = »\"10.0.0.255/24\"\n}", want: []string{"Error: Invalid address"}},
		{name: "loopback address", src: "nic \"n0\" {\n  host = host.a\n  address = »\"127.0.0.2/8\"\n}", want: []string{"Error: Invalid address"}},
		{name: "ipv6 address", src: "nic \"n0\" {\n  host = host.a\n  address = \"fd00::1/64\"\n}"},
		{name: "one address twice on a switch", src: "nic \"n0\" {\n  host = host.a\n  connect = switch.sw\n  address = \"10.0.0.1/24\"\n}\nnic \"n1\" {\n  host = host.b\n  connect = switch.sw\n  »address = \"10.0.0.1/24\"\n}", want: []string{"Error: Duplicate address on segment"}},
		{name: "one address twice on a pair", src: "nic \"n0\" {\n  host = host.a\n  peer = nic.n1\n  address = \"10.0.0.1/30\"\n}\nnic \"n1\" {\n  host = host.b\n  »address = \"10.0.0.1/30\"\n}", want: []string{"Error: Duplicate address on segment"}},
		{name: "one address on two segments is fine", src: "switch \"sw2\" {}\nnic \"n0\" {\n  host = host.a\n  connect = switch.sw\n  address = \"10.0.0.1/24\"\n}\nnic \"n1\" {\n  host = host.b\n  connect = switch.sw2\n  address = \"10.0.0.1/24\"\n}"},
		{name: "two subnets on one switch", src: "nic \"n0\" {\n  host = host.a\n  connect = switch.sw\n  address = \"10.0.0.1/24\"\n}\nnic \"n1\" {\n  host = host.b\n  connect = switch.sw\n  »address = \"10.0.1.1/24\"\n}", want: []string{"Warning: Different subnets on one segment"}},

		// Values.
		{name: "mtu too small", src: "nic \"n0\" {\n  host = host.a\n  mtu = »20\n}", want: []string{"Error: Invalid MTU"}},
		{name: "mtu too large", src: "nic \"n0\" {\n  host = host.a\n  mtu = »65536\n}", want: []string{"Error: Invalid MTU"}},
		{name: "mtu not a number", src: "nic \"n0\" {\n  host = host.a\n  mtu = »\"big\"\n}", want: []string{"Error: Incorrect value type"}},
		{name: "mtu fraction", src: "nic \"n0\" {\n  host = host.a\n  mtu = »1500.5\n}", want: []string{"Error: Incorrect value type"}},
		{name: "rate in bytes", src: "nic \"n0\" {\n  host = host.a\n  rate = »\"10gbps\"\n}", want: []string{"Warning: Rate in bytes per second"}},
		{name: "rate in bits", src: "nic \"n0\" {\n  host = host.a\n  rate = \"10gbit\"\n}"},
		{name: "bad rate", src: "nic \"n0\" {\n  host = host.a\n  rate = »\"fast\"\n}", want: []string{"Error: Invalid rate"}},
		{name: "bad delay", src: "nic \"n0\" {\n  host = host.a\n  delay = »\"20\"\n}", want: []string{"Error: Invalid duration"}},
		{name: "bad queue", src: "nic \"n0\" {\n  host = host.a\n  queue = »\"lots\"\n}", want: []string{"Error: Invalid size"}},
		{name: "bad bus", src: "host \"c\" { bus = »\"7.5 gigs\" }", want: []string{"Error: Invalid rate"}},

		// Offloads.
		{name: "unknown offload", src: "nic \"n0\" {\n  host = host.a\n  offload = { »tos = true }\n}", want: []string{"Error: Unknown offload"}},
		{name: "offload not a bool", src: "nic \"n0\" {\n  host = host.a\n  offload = { »tso = \"yes please\" }\n}", want: []string{"Error: Incorrect value type"}},
		{name: "tso without sg", src: "nic \"n0\" {\n  host = host.a\n  offload = { »tso = true, sg = false }\n}", want: []string{"Error: Conflicting offloads"}},
		{name: "tso without tx_csum", src: "nic \"n0\" {\n  host = host.a\n  offload = {\n    »tso     = true\n    tx_csum = false\n  }\n}", want: []string{"Error: Conflicting offloads"}},
		{name: "gso without sg", src: "nic \"n0\" {\n  host = host.a\n  offload = { sg = false, »gso = true }\n}", want: []string{"Error: Conflicting offloads"}},

		// Links.
		{name: "connect and peer", src: "nic \"n0\" {\n  host = host.a\n  connect = switch.sw\n  »peer = nic.n1\n}\nnic \"n1\" { host = host.b }", want: []string{"Error: Conflicting link attributes"}},
		{name: "connect and device", src: "host \"m\" { kind = \"local\" }\nnic \"n0\" {\n  host = host.m\n  connect = switch.sw\n  »device = \"enp3s0\"\n}", want: []string{"Error: Conflicting link attributes"}},
		{name: "device moved into a namespace host", src: "nic \"n0\" {\n  host = host.a\n  device = \"enp3s0f1\"\n}"},
		{name: "device adopted twice", src: "nic \"n0\" {\n  host = host.a\n  device = \"enp3s0f1\"\n}\nnic \"n1\" {\n  host = host.b\n  »device = \"enp3s0f1\"\n}", want: []string{"Error: Device adopted twice"}},
		{name: "device on the local host", src: "host \"m\" { kind = \"local\" }\nnic \"n0\" {\n  host = host.m\n  device = \"enp3s0\"\n}"},
		{name: "a namespace host may adopt its own lo", src: "nic \"l\" {\n  host = host.a\n  device = \"lo\"\n}"},
		{name: "bad device name", src: "host \"m\" { kind = \"local\" }\nnic \"n0\" {\n  host = host.m\n  device = »\"enp3s0/1\"\n}", want: []string{"Error: Invalid device name"}},
		{name: "peer of two nics", src: "nic \"n0\" {\n  host = host.a\n  peer = nic.n2\n}\nnic \"n1\" {\n  host = host.a\n  »peer = nic.n2\n}\nnic \"n2\" { host = host.b }", want: []string{"Error: NIC is peer of two NICs"}},
		{name: "peer already on a switch", src: "nic \"n0\" {\n  host = host.a\n  »peer = nic.n1\n}\nnic \"n1\" {\n  host = host.b\n  connect = switch.sw\n}", want: []string{"Error: Peer is already linked"}},

		// Workloads.
		{name: "duration and bytes", src: twoNICs + "workload \"w\" {\n  client = host.a\n  servers = [nic.b0]\n  duration = \"3s\"\n  »bytes = \"100MB\"\n}", want: []string{"Error: Both duration and bytes"}},
		{name: "no length", src: twoNICs + "»workload \"w\" {\n  client = host.a\n  servers = [nic.b0]\n}", want: []string{"Error: Missing workload length"}},
		{name: "bad workload kind", src: twoNICs + "workload \"w\" {\n  kind = »\"steram\"\n  client = host.a\n  servers = [nic.b0]\n  duration = \"1s\"\n}", want: []string{"Error: Invalid kind"}},
		{name: "rr attribute on a stream", src: twoNICs + "workload \"w\" {\n  client = host.a\n  servers = [nic.b0]\n  duration = \"1s\"\n  »request_size = 100\n}", want: []string{"Error: Attribute does not apply"}},
		{name: "servers are hosts without loopback", src: twoNICs + "workload \"w\" {\n  client = host.a\n  servers = »[host.b]\n  duration = \"1s\"\n}", want: []string{"Error: Servers must be NICs"}},
		{name: "loopback with a nic", src: twoNICs + "workload \"w\" {\n  client = host.a\n  loopback = true\n  servers = »[nic.b0]\n  duration = \"1s\"\n}", want: []string{"Error: Servers must be hosts with loopback"}},
		{name: "loopback across hosts", src: "workload \"w\" {\n  client = host.a\n  loopback = true\n  »servers = [host.b]\n  duration = \"1s\"\n}", want: []string{"Error: Loopback across hosts"}},
		{name: "server on the client host", src: twoNICs + "workload \"w\" {\n  client = host.a\n  »servers = [nic.a0]\n  duration = \"1s\"\n}", want: []string{"Error: Server on the client host"}},
		{name: "server declared twice", src: "nic \"b0\" {\n  host = host.b\n  connect = switch.sw\n}\n»nic \"b0\" {\n  host = host.b\n  connect = switch.sw\n  address = \"10.0.0.2/24\"\n}\nworkload \"w\" {\n  client = host.a\n  servers = [nic.b0]\n  duration = \"1s\"\n}", want: []string{"Error: Duplicate nic name"}},
		{name: "server with a wrong address", src: "nic \"b0\" {\n  host = host.b\n  connect = switch.sw\n  address = »\"10.0.0.300/24\"\n}\nworkload \"w\" {\n  client = host.a\n  servers = [nic.b0]\n  duration = \"1s\"\n}", want: []string{"Error: Invalid address"}},
		{name: "server without address", src: "nic \"b0\" {\n  host = host.b\n  connect = switch.sw\n}\nworkload \"w\" {\n  client = host.a\n  »servers = [nic.b0]\n  duration = \"1s\"\n}", want: []string{"Error: Server without an address"}},
		{name: "server not reachable", src: "switch \"sw2\" {}\nnic \"a0\" {\n  host = host.a\n  connect = switch.sw2\n  address = \"10.0.0.1/24\"\n}\nnic \"b0\" {\n  host = host.b\n  connect = switch.sw\n  address = \"10.0.0.2/24\"\n}\nworkload \"w\" {\n  client = host.a\n  »servers = [nic.b0]\n  duration = \"1s\"\n}", want: []string{"Error: Server not reachable"}},
		{name: "empty servers", src: "workload \"w\" {\n  client = host.a\n  servers = »[]\n  duration = \"1s\"\n}", want: []string{"Error: No servers"}},
		{name: "servers not a list", src: twoNICs + "workload \"w\" {\n  client = host.a\n  servers = »nic.b0\n  duration = \"1s\"\n}", want: []string{"Error: Incorrect value type"}},
		{name: "bad bytes", src: twoNICs + "workload \"w\" {\n  client = host.a\n  servers = [nic.b0]\n  bytes = »\"many\"\n}", want: []string{"Error: Invalid size"}},

		// One mistake, one diagnostic: a misspelt attribute is not also
		// reported as missing, nor are the checks that would need it.
		{name: "misspelt server address", src: "nic \"a0\" {\n  host = host.a\n  connect = switch.sw\n  address = \"10.0.0.1/24\"\n}\nnic \"b0\" {\n  host = host.b\n  connect = switch.sw\n  »adress = \"10.0.0.2/24\"\n}\n" + bulk, want: []string{"Error: Unknown attribute"}},
		{name: "misspelt peer", src: "nic \"a0\" {\n  host = host.a\n  »peeer = nic.b0\n  address = \"10.0.0.1/24\"\n}\nnic \"b0\" {\n  host = host.b\n  address = \"10.0.0.2/24\"\n}\n" + bulk, want: []string{"Error: Unknown attribute"}},
		{name: "client's NIC on an undeclared host", src: "nic \"a0\" {\n  host = »host.aa\n  connect = switch.sw\n  address = \"10.0.0.1/24\"\n}\nnic \"b0\" {\n  host = host.b\n  connect = switch.sw\n  address = \"10.0.0.2/24\"\n}\n" + bulk, want: []string{"Error: Reference to undeclared host"}},
		{name: "misspelt required host", src: "nic \"n0\" {\n  »hots = host.a\n}", want: []string{"Error: Unknown attribute"}},
		{name: "misspelt duration", src: twoNICs + "workload \"w\" {\n  client = host.a\n  servers = [nic.b0]\n  »duraton = \"1s\"\n}", want: []string{"Error: Unknown attribute"}},
		{name: "misspelt workload of an expect", src: twoNICs + bulk + "workload \"w2\" {\n  client = host.a\n  servers = [nic.b0]\n  duration = \"1s\"\n}\nexpect \"e\" {\n  »wrokload = workload.w2\n  condition = result.throughput_bps > 0\n}", want: []string{"Error: Unknown attribute"}},
		{name: "an unknown attribute like no other is still missing", src: "»nic \"n0\" {\n  »colour = host.a\n}", want: []string{"Error: Missing required attribute", "Error: Unknown attribute"}},

		// Expectations.
		{name: "when reads result", src: twoNICs + bulk + "expect \"e\" {\n  when = »result.bytes > 0\n  condition = true\n}", want: []string{"Error: Reference not allowed here"}},
		{name: "condition reads a host", src: twoNICs + bulk + "expect \"e\" {\n  condition = »host.a != null\n}", want: []string{"Error: Reference not allowed here"}},
		{name: "scenario() in when", src: "matrix { tso = [true, false] }\n" + twoNICs + bulk + "expect \"e\" {\n  when = »scenario({ tso = false }).bytes > 0\n  condition = true\n}", want: []string{"Error: Function not allowed here"}},
		{name: "scenario() with an unknown axis", src: "matrix { tso = [true, false] }\n" + twoNICs + bulk + "expect \"e\" {\n  condition = result.bytes > scenario({ »gso = false }).bytes\n}", want: []string{"Error: Unknown matrix axis"}},
		{name: "scenario() without a matrix", src: twoNICs + bulk + "expect \"e\" {\n  condition = result.bytes > »scenario({ gso = false }).bytes\n}", want: []string{"Error: scenario() without a matrix"}},
		{name: "unknown metric", src: twoNICs + bulk + "expect \"e\" {\n  condition = result.»throughput > 1\n}", want: []string{"Error: Unknown metric"}},
		{name: "unknown metric far from all", src: twoNICs + bulk + "expect \"e\" {\n  condition = result.»goodput_of_the_flow > 1\n}", want: []string{"Error: Unknown metric"}},
		{name: "unknown metric of the baseline", src: twoNICs + bulk + "expect \"e\" {\n  condition = baseline.»throughput_mbps > 1\n}", want: []string{"Error: Unknown metric"}},
		{name: "an engine's own metric passes on it", noHeader: true, src: "lab \"t\" { engine = \"sim\" }\nhost \"a\" {}\nhost \"b\" {}\nswitch \"sw\" {}\n" + twoNICs + bulk + "expect \"e\" {\n  condition = result.cwnd_mean_segments > 1\n}"},
		{name: "scenario() value not on the axis", src: twoNICs + bulk + "matrix { mtu = [1500, 9000] }\nexpect \"e\" {\n  condition = result.throughput_bps > scenario({ mtu = »4000 }).throughput_bps\n}", want: []string{"Error: No such matrix value"}},
		{name: "scenario() value on the axis", src: twoNICs + bulk + "matrix { mtu = [1500, 9000] }\nexpect \"e\" {\n  condition = result.throughput_bps > scenario({ mtu = 9000 }).throughput_bps\n}"},
		{name: "when not a bool", src: twoNICs + bulk + "matrix { mtu = [1500, 9000] }\nexpect \"e\" {\n  when = »matrix.mtu\n  condition = result.throughput_bps > 0\n}", want: []string{"Error: Invalid when"}},
		{name: "when reading the engine", src: twoNICs + bulk + "matrix { mtu = [1500, 9000] }\nexpect \"e\" {\n  when = engine == \"sim\" && matrix.mtu == 9000\n  condition = result.throughput_bps > 0\n}"},
		{name: "an engine's own metric on another engine", src: twoNICs + bulk + "expect \"e\" {\n  condition = result.»cwnd_mean_segments > 1\n}", want: []string{"Warning: Metric of another engine"}},
		{name: "undeclared workload", src: twoNICs + bulk + "expect \"e\" {\n  workload = »workload.bullk\n  condition = true\n}", want: []string{"Error: Reference to undeclared workload"}},
		{name: "expect needs workload among several", src: twoNICs + bulk + "workload \"w2\" {\n  client = host.a\n  servers = [nic.b0]\n  duration = \"1s\"\n}\n»expect \"e\" {\n  condition = true\n}", want: []string{"Error: Missing required attribute"}},

		// Matrix.
		{name: "matrix axis not a list", src: "matrix { tso = »true }", want: []string{"Error: Invalid matrix axis"}},
		{name: "matrix axis empty", src: "matrix { tso = »[] }", want: []string{"Error: Empty matrix axis"}},
		{name: "matrix axis repeats", src: "matrix { tso = »[true, true] }", want: []string{"Error: Duplicate matrix value"}},
		{name: "matrix value not primitive", src: "matrix { x = »[[1]] }", want: []string{"Error: Invalid matrix value"}},
		{name: "error in one cell is reported once", src: "matrix { sg = [true, false] }\nnic \"n0\" {\n  host = host.a\n  offload = {\n    »tso = true\n    sg  = matrix.sg\n  }\n}", want: []string{"Error: Conflicting offloads"}},
		{name: "error in every cell is reported once", src: "matrix { m = [20, 30] }\nnic \"n0\" {\n  host = host.a\n  mtu = »matrix.m\n}", want: []string{"Error: Invalid MTU"}},
		{name: "error in some cells is reported once", src: "matrix {\n  sg = [true, false]\n  mtu = [1500, 9000]\n}\nnic \"n0\" {\n  host = host.a\n  mtu = matrix.mtu\n  offload = {\n    »tso = true\n    sg  = matrix.sg\n  }\n}", want: []string{"Error: Conflicting offloads"}},

		// Variables.
		{name: "variable without value", src: "»variable \"v\" {}\nnic \"n0\" {\n  host = host.a\n  mtu = var.v\n}", want: []string{"Error: No value for required variable"}},
		{name: "default of the wrong type", src: "variable \"v\" {\n  type = number\n  default = »\"x\"\n}", want: []string{"Error: Invalid default value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.src
			if !tt.noHeader {
				src = header + src
			}
			clean, pos := unmark(src)
			_, diags := loadString(clean, Options{})
			got := diagsOf(diags)
			want := wantDiags(t, "lab.tsolab.hcl", pos, tt.want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s\nsource:\n%s\ngot:\n%s", diff, clean, render(diags, clean))
			}
			for _, d := range diags {
				if d.Subject != nil && d.Detail == "" {
					t.Errorf("diagnostic %q has no detail: every diagnostic names the fix", d.Summary)
				}
			}
		})
	}
}

// twoNICs links host a and host b through the switch.
const twoNICs = `nic "a0" {
  host    = host.a
  connect = switch.sw
  address = "10.0.0.1/24"
}
nic "b0" {
  host    = host.b
  connect = switch.sw
  address = "10.0.0.2/24"
}
`

// bulk is a workload from a to b over twoNICs.
const bulk = `workload "bulk" {
  client   = host.a
  servers  = [nic.b0]
  duration = "1s"
}
`

func render(diags hclv2.Diagnostics, src string) string {
	var b strings.Builder
	WriteDiagnostics(&b, map[string][]byte{"lab.tsolab.hcl": []byte(src)}, diags, false)
	return b.String()
}

// TestMisspeltBlockNamed: the one error of a misspelt block type names
// the block it was meant to be.
func TestMisspeltBlockNamed(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"workloads \"bulk\" {}\n", `Did you mean workload "bulk"?`},
		{"matrixx { tso = [true] }\n", "Did you mean matrix?"},
		{"hots \"c\" {}\n", `Did you mean host "c"?`},
		{"frobnicate \"c\" {}\n", "The block types are"},
	} {
		_, diags := loadString(header+tc.src, Options{})
		if len(diags) != 1 || !strings.Contains(diags[0].Detail, tc.want) {
			t.Errorf("%q: got %d diagnostics %v; want one saying %q", tc.src, len(diags), diags, tc.want)
		}
	}
}
