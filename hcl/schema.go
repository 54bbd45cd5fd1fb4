package hcl

import (
	"fmt"
	"sort"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Block types of the language.
const (
	kindLab       = "lab"
	kindVariable  = "variable"
	kindMatrix    = "matrix"
	kindMachine   = "machine"
	kindHost      = "host"
	kindSwitch    = "switch"
	kindNIC       = "nic"
	kindWorkload  = "workload"
	kindExpect    = "expect"
	kindObserved  = "observed"
	kindCalibrate = "calibrate"
)

// Names an expression can start with. The block kinds that can be
// referenced (host, switch, nic, workload) are roots too.
const (
	rootVar      = "var"
	rootMatrix   = "matrix"
	rootResult   = "result"
	rootBaseline = "baseline"
	// rootEngine is the engine the results come from, "kernel" or "sim":
	// an expectation may hold on one engine only.
	rootEngine   = "engine"
	funcScenario = "scenario"
)

// refKinds are the block kinds an expression can reference by name.
var refKinds = []string{kindMachine, kindHost, kindSwitch, kindNIC, kindWorkload, kindObserved}

// allRoots is every name an expression can start with somewhere, for
// telling "not allowed here" apart from "unknown".
var allRoots = []string{rootVar, rootMatrix, kindMachine, kindHost, kindSwitch, kindNIC, kindWorkload, kindObserved, rootResult, rootBaseline, rootEngine}

// attrSpec describes one attribute of a block.
type attrSpec struct {
	name     string
	required bool
	// roots are the names the attribute's expression may start with.
	roots []string
	// refs are the block kinds the attribute's value refers to (host =
	// host.tx); empty for plain values.
	refs []string
	// example is a correct assignment, shown in diagnostics.
	example string
}

// blockSpec describes one block type.
type blockSpec struct {
	kind    string
	labeled bool // one label, the block's name
	unique  bool // at most one per lab
	attrs   []attrSpec
	// anyAttrs accepts attributes of any name (matrix axes), with roots.
	anyAttrs  bool
	anyRoots  []string
	example   string // a minimal correct block, shown in diagnostics
	labelDesc string // what the label names
}

func (s *blockSpec) attr(name string) *attrSpec {
	for i := range s.attrs {
		if s.attrs[i].name == name {
			return &s.attrs[i]
		}
	}
	return nil
}

func (s *blockSpec) attrNames() []string {
	out := make([]string, len(s.attrs))
	for i, a := range s.attrs {
		out[i] = a.name
	}
	return out
}

var (
	values   = []string{rootVar, rootMatrix} // what plain attributes of topology blocks read
	varsOnly = []string{rootVar}
)

// schema is the whole language, in the order the blocks are documented.
var schema = []*blockSpec{
	{
		kind: kindLab, labeled: true, unique: true, labelDesc: "the lab's name",
		example: `lab "NAME" { engine = "kernel" }`,
		attrs: []attrSpec{
			{name: "description", roots: varsOnly, example: `description = "what the lab shows"`},
			{name: "engine", roots: varsOnly, example: `engine = "kernel"`},
			{name: "repeat", roots: varsOnly, example: `repeat = 6`},
			{name: "confidence", roots: varsOnly, example: `confidence = 10`},
			{name: "strict", roots: varsOnly, example: `strict = true`},
		},
	},
	{
		kind: kindVariable, labeled: true, labelDesc: "the variable's name",
		example: `variable "NAME" { type = number, default = 1500 }`,
		attrs: []attrSpec{
			{name: "type", example: `type = number`},
			{name: "default", example: `default = 1500`},
			{name: "description", example: `description = "what it sets"`},
		},
	},
	{
		kind: kindMatrix, unique: true, anyAttrs: true, anyRoots: varsOnly,
		example: `matrix { tso = [true, false] }`,
	},
	{
		kind: kindMachine, labeled: true, labelDesc: "the machine's name",
		example: `machine "NAME" { address = "10.1.2.3", user = "root" }`,
		attrs: []attrSpec{
			{name: "address", required: true, roots: varsOnly, example: `address = "10.1.2.3"`},
			{name: "port", roots: varsOnly, example: `port = 22`},
			{name: "user", roots: varsOnly, example: `user = "root"`},
			{name: "identity_file", roots: varsOnly, example: `identity_file = "~/.ssh/id_ed25519"`},
			{name: "known_hosts", roots: varsOnly, example: `known_hosts = "~/.ssh/known_hosts"`},
			{name: "sudo", roots: varsOnly, example: `sudo = true`},
		},
	},
	{
		kind: kindHost, labeled: true, labelDesc: "the host's name",
		example: `host "NAME" {}`,
		attrs: []attrSpec{
			{name: "machine", roots: withRefs(kindMachine), refs: []string{kindMachine}, example: `machine = machine.MACHINE`},
			{name: "kind", roots: values, example: `kind = "netns"`},
			{name: "sysctl", roots: values, example: `sysctl = { "net.ipv4.tcp_wmem" = "4096 1048576 4194304" }`},
			{name: "stack", roots: values, example: `stack = "linux-6"`},
			{name: "stack_options", roots: values, example: `stack_options = { size_goal_modulo = false }`},
			{name: "cpu", roots: values, example: `cpu = "opteron"`},
			{name: "cores", roots: values, example: `cores = 4`},
			{name: "cores_of", roots: withRefs(kindHost), refs: []string{kindHost}, example: `cores_of = host.HOST`},
			{name: "bus", roots: values, example: `bus = "7.5gbit"`},
			{name: "delayed_ack", roots: values, example: `delayed_ack = true`},
			{name: "scheduler", roots: values, example: `scheduler = "c1-idle"`},
		},
	},
	{
		kind: kindSwitch, labeled: true, labelDesc: "the switch's name",
		example: `switch "NAME" {}`,
	},
	{
		kind: kindNIC, labeled: true, labelDesc: "the interface name",
		example: `nic "NAME" { host = host.HOST, connect = switch.SWITCH }`,
		attrs: []attrSpec{
			{name: "host", required: true, roots: withRefs(kindHost), refs: []string{kindHost}, example: `host = host.HOST`},
			{name: "connect", roots: withRefs(kindSwitch), refs: []string{kindSwitch}, example: `connect = switch.SWITCH`},
			{name: "peer", roots: withRefs(kindNIC), refs: []string{kindNIC}, example: `peer = nic.NIC`},
			{name: "device", roots: values, example: `device = "enp3s0"`},
			{name: "address", roots: values, example: `address = "10.77.0.1/24"`},
			{name: "mtu", roots: values, example: `mtu = 9000`},
			{name: "rate", roots: values, example: `rate = "2gbit"`},
			{name: "delay", roots: values, example: `delay = "20us"`},
			{name: "queue", roots: values, example: `queue = "1MB"`},
			{name: "offload", roots: values, example: `offload = { tso = true, sg = true, tx_csum = true }`},
		},
	},
	{
		kind: kindWorkload, labeled: true, labelDesc: "the workload's name",
		example: `workload "NAME" { client = host.HOST, servers = [nic.NIC], duration = "3s" }`,
		attrs: []attrSpec{
			{name: "kind", roots: values, example: `kind = "stream"`},
			{name: "client", required: true, roots: withRefs(kindHost), refs: []string{kindHost}, example: `client = host.HOST`},
			{name: "servers", required: true, roots: withRefs(kindNIC, kindHost), refs: []string{kindNIC, kindHost}, example: `servers = [nic.NIC]`},
			{name: "loopback", roots: values, example: `loopback = true`},
			{name: "connections", roots: values, example: `connections = 4`},
			{name: "write_size", roots: values, example: `write_size = 65536`},
			{name: "read_size", roots: values, example: `read_size = "128KiB"`},
			{name: "duration", roots: values, example: `duration = "3s"`},
			{name: "bytes", roots: values, example: `bytes = "100MB"`},
			{name: "sndbuf", roots: values, example: `sndbuf = "1MB"`},
			{name: "rcvbuf", roots: values, example: `rcvbuf = "2MB"`},
			{name: "nodelay", roots: values, example: `nodelay = true`},
			{name: "cork", roots: values, example: `cork = true`},
			{name: "cc", roots: values, example: `cc = "cubic"`},
			{name: "request_size", roots: values, example: `request_size = 1`},
			{name: "response_size", roots: values, example: `response_size = 1`},
			{name: "concurrency", roots: values, example: `concurrency = 8`},
			{name: "file_size", roots: values, example: `file_size = "1GiB"`},
			{name: "rate", roots: values, example: `rate = "1gbit"`},
			{name: "repeat", roots: varsOnly, example: `repeat = 6`},
			{name: "confidence", roots: varsOnly, example: `confidence = 10`},
		},
	},
	{
		kind: kindExpect, labeled: true, labelDesc: "the expectation's name",
		example: `expect "NAME" { workload = workload.W, condition = result.throughput_bps >= 1e9 }`,
		attrs: []attrSpec{
			{name: "workload", roots: []string{kindWorkload}, refs: []string{kindWorkload}, example: `workload = workload.WORKLOAD`},
			{name: "when", roots: []string{rootVar, rootMatrix, rootEngine}, example: `when = matrix.tso && engine == "sim"`},
			{name: "condition", required: true, roots: []string{rootVar, rootMatrix, rootResult, rootBaseline, rootEngine}, example: `condition = result.throughput_bps >= 1e9`},
			{name: "message", roots: varsOnly, example: `message = "why it should hold"`},
		},
	},
	{
		kind: kindObserved, labeled: true, labelDesc: "the observed figures' name",
		example: `observed "NAME" { workload = workload.W, values = { throughput_bps = 2.5e9 } }`,
		attrs: []attrSpec{
			{name: "source", roots: varsOnly, example: `source = "seed 001, TSO off, MTU 1500"`},
			{name: "workload", roots: []string{kindWorkload}, refs: []string{kindWorkload}, example: `workload = workload.WORKLOAD`},
			{name: "scenario", roots: varsOnly, example: `scenario = { tso = false, mtu = 1500 }`},
			{name: "values", roots: varsOnly, example: `values = { throughput_bps = 2.5e9, cpu_tx_pct = 220 }`},
			{name: "relative_to", roots: varsOnly, example: `relative_to = { tso = false }`},
			{name: "results", roots: varsOnly, example: `results = "kernel.json"`},
			{name: "metrics", roots: varsOnly, example: `metrics = ["throughput_bps", "cpu_tx_pct"]`},
		},
	},
	{
		kind: kindCalibrate, labeled: true, labelDesc: "the CPU profile to calibrate",
		example: `calibrate "CPU" { free = ["bus_per_unit"], fit = [observed.NAME], file = "CPU.calibration.json" }`,
		attrs: []attrSpec{
			{name: "free", required: true, roots: varsOnly, example: `free = ["bus_per_unit", "stack_per_skb"]`},
			{name: "fit", required: true, roots: []string{kindObserved}, refs: []string{kindObserved}, example: `fit = [observed.NAME]`},
			{name: "file", required: true, roots: varsOnly, example: `file = "CPU.calibration.json"`},
		},
	},
}

func withRefs(kinds ...string) []string {
	return append(append([]string(nil), values...), kinds...)
}

func specFor(kind string) *blockSpec {
	for _, s := range schema {
		if s.kind == kind {
			return s
		}
	}
	return nil
}

func blockKinds() []string {
	out := make([]string, len(schema))
	for i, s := range schema {
		out[i] = s.kind
	}
	return out
}

// block is one declared block after the structural checks: known type,
// right labels, known attributes.
type block struct {
	spec  *blockSpec
	name  string // "" for matrix
	body  *hclsyntax.Body
	def   hclv2.Range // type and labels: `nic "tx0"`
	attrs map[string]*hclsyntax.Attribute
	// skip holds attributes whose expression already failed a check
	// (an undeclared reference, a cycle): evaluation leaves them out
	// instead of reporting the same mistake again.
	skip map[string]bool
	// misspelt holds the attributes the body writes under a wrong name
	// that suggests them (adress for address), already reported as
	// unknown: checks that would find them missing stay quiet, so one
	// mistake is one diagnostic.
	misspelt map[string]bool
}

func (b *block) kind() string { return b.spec.kind }

// isMisspelt reports whether the body writes one of names misspelt.
func (b *block) isMisspelt(names ...string) bool {
	for _, n := range names {
		if b.misspelt[n] {
			return true
		}
	}
	return false
}

// addr is how expressions name the block: "nic.tx0".
func (b *block) addr() string { return b.spec.kind + "." + b.name }

// label is how diagnostics name the block: `nic "tx0"`.
func (b *block) label() string {
	if b.name == "" {
		return b.spec.kind
	}
	return fmt.Sprintf("%s %q", b.spec.kind, b.name)
}

// attr returns the attribute name if it is written and usable.
func (b *block) attr(name string) *hclsyntax.Attribute {
	if b.skip[name] {
		return nil
	}
	return b.attrs[name]
}

// sortedAttrs returns the block's attributes in source order.
func (b *block) sortedAttrs() []*hclsyntax.Attribute {
	out := make([]*hclsyntax.Attribute, 0, len(b.attrs))
	for _, a := range b.attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SrcRange.Start.Byte < out[j].SrcRange.Start.Byte })
	return out
}

// declare checks the structure of one file body against the schema and
// records its blocks. Mistakes here do not depend on any value.
func (l *loader) declare(body *hclsyntax.Body) {
	for _, a := range sortedBodyAttrs(body) {
		l.errorf(a.NameRange, "Attribute outside a block",
			"%s = ... must be inside a block: the top level of a lab file holds only blocks (%s).%s",
			a.Name, strings.Join(blockKinds(), ", "), topLevelAttrHint(a.Name))
	}
	for _, hb := range body.Blocks {
		spec := specFor(hb.Type)
		if spec == nil {
			l.unknownBlock(hb)
			continue
		}
		l.seen[spec.kind] = true
		b := &block{spec: spec, body: hb.Body, def: hb.DefRange(), attrs: map[string]*hclsyntax.Attribute{}, skip: map[string]bool{}}
		if !l.checkLabels(hb, spec) {
			continue
		}
		if spec.labeled {
			b.name = hb.Labels[0]
		}
		l.checkBody(b)
		l.record(b)
	}
}

// unknownBlock reports a block of a type a lab does not have. When the
// type is a misspelling of one (workloads "bulk", matrixx), the error
// names the block it was meant to be, and the references to that block
// (workload.bulk, matrix.tso) are not reported again: they are fine
// once the type is.
func (l *loader) unknownBlock(hb *hclsyntax.Block) {
	kind := suggest(hb.Type, blockKinds())
	spec := specFor(kind)
	meant, addr := "", ""
	switch {
	case spec == nil:
	case spec.labeled && len(hb.Labels) == 1:
		meant, addr = fmt.Sprintf("%s %q", kind, hb.Labels[0]), kind+"."+hb.Labels[0]
	case !spec.labeled && len(hb.Labels) == 0:
		meant, addr = kind, kind
	}
	if addr == "" {
		l.errorf(hb.TypeRange, "Unknown block type",
			"A lab has no block of type %q. %sThe block types are %s.",
			hb.Type, didYouMean(hb.Type, blockKinds()), joinOr(blockKinds()))
		return
	}
	l.errorf(hb.TypeRange, "Unknown block type",
		"A lab has no block of type %q. Did you mean %s? Until the type is fixed, the block is left out of the lab and what refers to it is not checked. The block types are %s.",
		hb.Type, meant, joinOr(blockKinds()))
	l.dropped[addr] = droppedBlock{def: hb.DefRange(), why: fmt.Sprintf("as a %q block, a type a lab does not have", hb.Type), reported: true}
}

func topLevelAttrHint(name string) string {
	for _, s := range schema {
		if s.attr(name) != nil {
			return fmt.Sprintf(" %s belongs in a %s block.", name, s.kind)
		}
	}
	return ""
}

func (l *loader) checkLabels(hb *hclsyntax.Block, spec *blockSpec) bool {
	switch {
	case spec.labeled && len(hb.Labels) == 0:
		l.errorf(hb.TypeRange, "Missing name",
			"A %s block needs a name, %s: write %s.", spec.kind, spec.labelDesc, spec.example)
		return false
	case !spec.labeled && len(hb.Labels) > 0:
		l.errorf(hb.LabelRanges[0], "Unexpected name",
			"A %s block has no name: remove %q and write %s.", spec.kind, hb.Labels[0], spec.example)
		return false
	case len(hb.Labels) > 1:
		l.errorf(hb.LabelRanges[1], "Extra label",
			"A %s block has exactly one label, %s: remove %q.", spec.kind, spec.labelDesc, hb.Labels[1])
		return false
	}
	return true
}

// checkBody reports nested blocks and unknown attributes, and keeps the
// known ones.
func (l *loader) checkBody(b *block) {
	spec := b.spec
	for _, nb := range b.body.Blocks {
		detail := fmt.Sprintf("Blocks are not nested in a lab: a %s block holds only attributes.", spec.kind)
		switch {
		case spec.attr(nb.Type) != nil || spec.anyAttrs:
			detail += fmt.Sprintf(" %s is an attribute: write %s = { ... } (with an equals sign).", nb.Type, nb.Type)
		case specFor(nb.Type) != nil && nb.Type != spec.kind && len(nb.Labels) == 1 && (nb.Type == kindNIC || nb.Type == kindSwitch || nb.Type == kindHost):
			detail += fmt.Sprintf(" Declare %s %q at the top level of the file and link it by reference (for a NIC: host = host.%s).", nb.Type, nb.Labels[0], b.name)
		case specFor(nb.Type) != nil:
			detail += fmt.Sprintf(" Declare the %s block at the top level of the file.", nb.Type)
		}
		l.errorf(nb.TypeRange, "Unexpected block", "%s", detail)
	}
	for _, a := range sortedBodyAttrs(b.body) {
		if spec.anyAttrs {
			b.attrs[a.Name] = a
			continue
		}
		if spec.attr(a.Name) == nil {
			names := spec.attrNames()
			var known string
			if len(names) == 0 {
				known = fmt.Sprintf("A %s block takes no attributes: remove it.", spec.kind)
			} else {
				known = fmt.Sprintf("The attributes of a %s block are %s.", spec.kind, joinAnd(names))
			}
			l.errorf(a.NameRange, "Unknown attribute",
				"A %s block has no attribute %q. %s%s", spec.kind, a.Name, didYouMean(a.Name, names), known)
			if s := suggest(a.Name, names); s != "" {
				if b.misspelt == nil {
					b.misspelt = map[string]bool{}
				}
				b.misspelt[s] = true
			}
			continue
		}
		b.attrs[a.Name] = a
	}
	var missing, examples []string
	for _, as := range spec.attrs {
		if as.required && b.attrs[as.name] == nil && b.hasNoBrokenAttr(as.name) && !b.isMisspelt(as.name) {
			missing = append(missing, as.name)
			examples = append(examples, as.example)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		l.errorf(b.def, "Missing required attribute",
			"%s needs %s: add %s.", b.label(), missing[0], examples[0])
	default:
		l.errorf(b.def, "Missing required attributes",
			"%s needs %s: add %s.", b.label(), strings.Join(missing, " and "), strings.Join(examples, " and "))
	}
}

// hasNoBrokenAttr is true unless the body writes the attribute in a form
// already reported (as a nested block).
func (b *block) hasNoBrokenAttr(name string) bool {
	for _, nb := range b.body.Blocks {
		if nb.Type == name {
			return false
		}
	}
	return true
}

func sortedBodyAttrs(body *hclsyntax.Body) []*hclsyntax.Attribute {
	out := make([]*hclsyntax.Attribute, 0, len(body.Attributes))
	for _, a := range body.Attributes {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SrcRange.Start.Byte < out[j].SrcRange.Start.Byte })
	return out
}

// record adds a block, reporting duplicates and invalid names.
func (l *loader) record(b *block) {
	kind := b.kind()
	if b.spec.unique {
		if prev := l.unique[kind]; prev != nil {
			l.errorf(b.def, fmt.Sprintf("Duplicate %s block", kind),
				"A lab has at most one %s block; the first is at %s. Merge the two.", kind, rangeLoc(prev.def))
			return
		}
		if b.spec.labeled && !l.checkName(b) {
			return
		}
		l.unique[kind] = b
	} else {
		key := b.addr()
		if prev := l.byAddr[key]; prev != nil {
			l.errorf(b.def, fmt.Sprintf("Duplicate %s name", kind),
				"%s is already declared at %s. Give each %s a name of its own.", b.label(), rangeLoc(prev.def), kind)
			l.dropped[key] = droppedBlock{def: b.def, why: "it is declared twice"}
			return
		}
		if !l.checkName(b) {
			l.dropped[key] = droppedBlock{def: b.def, why: "its name is invalid"}
			return
		}
		l.byAddr[key] = b
	}
	l.blocks[kind] = append(l.blocks[kind], b)
}

func rangeLoc(r hclv2.Range) string {
	return fmt.Sprintf("%s:%d,%d", r.Filename, r.Start.Line, r.Start.Column)
}
