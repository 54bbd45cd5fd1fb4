package devqueue

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// offsets are the byte offsets and sizes of the kernel struct members the
// program reads, taken from the running kernel's BTF (what CO-RE
// relocations would compute for a program built with clang).
type offsets struct {
	SkbDev           member // sk_buff.dev (struct net_device *)
	SkbLen           member // sk_buff.len
	SkbProtocol      member // sk_buff.protocol (__be16)
	SkbNetworkHeader member // sk_buff.network_header (offset from head)
	SkbMacHeader     member // sk_buff.mac_header (offset from head)
	SkbEnd           member // sk_buff.end (offset of skb_shared_info from head)
	SkbHead          member // sk_buff.head
	SkbData          member // sk_buff.data
	DevIfindex       member // net_device.ifindex
	DevNet           member // net_device.nd_net.net (struct net *)
	NetInum          member // net.ns.inum
	ShinfoGSOSize    member // skb_shared_info.gso_size
	ShinfoGSOSegs    member // skb_shared_info.gso_segs
	// CastToKernCtx is the BTF ID of the kfunc bpf_cast_to_kern_ctx, which
	// turns a TCX program's __sk_buff into the kernel's sk_buff; 0 when
	// this kernel has none (then only the tracepoint hook works).
	CastToKernCtx btf.TypeID
}

// member is where a struct member lives: byte offset and size in bytes.
type member struct {
	Off  uint32
	Size uint32
}

// loadOffsets reads the offsets from a BTF spec (btf.LoadKernelSpec for
// the running kernel).
func loadOffsets(spec *btf.Spec) (offsets, error) {
	var o offsets
	var errs []error
	get := func(dst *member, typ string, path ...string) {
		m, err := memberOf(spec, typ, path...)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = m
	}
	get(&o.SkbDev, "sk_buff", "dev")
	get(&o.SkbLen, "sk_buff", "len")
	get(&o.SkbProtocol, "sk_buff", "protocol")
	get(&o.SkbNetworkHeader, "sk_buff", "network_header")
	get(&o.SkbMacHeader, "sk_buff", "mac_header")
	get(&o.SkbEnd, "sk_buff", "end")
	get(&o.SkbHead, "sk_buff", "head")
	get(&o.SkbData, "sk_buff", "data")
	get(&o.DevIfindex, "net_device", "ifindex")
	get(&o.DevNet, "net_device", "nd_net", "net")
	get(&o.NetInum, "net", "ns", "inum")
	get(&o.ShinfoGSOSize, "skb_shared_info", "gso_size")
	get(&o.ShinfoGSOSegs, "skb_shared_info", "gso_segs")
	var cast *btf.Func
	if err := spec.TypeByName("bpf_cast_to_kern_ctx", &cast); err == nil {
		if id, err := spec.TypeID(cast); err == nil {
			o.CastToKernCtx = id
		}
	}
	if err := errors.Join(errs...); err != nil {
		return o, err
	}
	// The program's loads assume these sizes; a kernel that changed one
	// needs a new program, not a silently wrong one.
	want := []struct {
		name string
		m    member
		size uint32
	}{
		{"sk_buff.dev", o.SkbDev, 8}, {"sk_buff.len", o.SkbLen, 4}, {"sk_buff.protocol", o.SkbProtocol, 2},
		{"sk_buff.network_header", o.SkbNetworkHeader, 2}, {"sk_buff.mac_header", o.SkbMacHeader, 2},
		{"sk_buff.end", o.SkbEnd, 4}, {"sk_buff.head", o.SkbHead, 8}, {"sk_buff.data", o.SkbData, 8},
		{"net_device.ifindex", o.DevIfindex, 4}, {"net_device.nd_net.net", o.DevNet, 8}, {"net.ns.inum", o.NetInum, 4},
		{"skb_shared_info.gso_size", o.ShinfoGSOSize, 2}, {"skb_shared_info.gso_segs", o.ShinfoGSOSegs, 2},
	}
	for _, w := range want {
		if w.m.Size != w.size {
			errs = append(errs, fmt.Errorf("%s is %d bytes in this kernel's BTF, the program reads %d", w.name, w.m.Size, w.size))
		}
	}
	if o.ShinfoGSOSegs.Off != o.ShinfoGSOSize.Off+2 {
		errs = append(errs, fmt.Errorf("skb_shared_info.gso_segs (offset %d) does not follow gso_size (offset %d): the program reads them as one 4-byte word", o.ShinfoGSOSegs.Off, o.ShinfoGSOSize.Off))
	}
	return o, errors.Join(errs...)
}

// memberOf finds the member at path (each step a member name; anonymous
// structs and unions are searched through, as C does) in the struct named
// typ, and returns its offset from the start of typ and its size.
func memberOf(spec *btf.Spec, typ string, path ...string) (member, error) {
	var s *btf.Struct
	if err := spec.TypeByName(typ, &s); err != nil {
		return member{}, fmt.Errorf("BTF: struct %s: %w", typ, err)
	}
	var t btf.Type = s
	var off uint32
	for _, name := range path {
		m, moff, ok := findMember(t, name)
		if !ok {
			return member{}, fmt.Errorf("BTF: struct %s has no member %v", typ, path)
		}
		if m.BitfieldSize != 0 {
			return member{}, fmt.Errorf("BTF: %s.%s is a bitfield", typ, name)
		}
		off += moff
		t = btf.UnderlyingType(m.Type)
	}
	size, err := btf.Sizeof(t)
	if err != nil {
		return member{}, fmt.Errorf("BTF: size of %s.%v: %w", typ, path, err)
	}
	return member{Off: off, Size: uint32(size)}, nil
}

// findMember looks for a named member in a struct or union, descending
// into anonymous members; it returns the member and its byte offset.
func findMember(t btf.Type, name string) (btf.Member, uint32, bool) {
	var members []btf.Member
	switch c := btf.UnderlyingType(t).(type) {
	case *btf.Struct:
		members = c.Members
	case *btf.Union:
		members = c.Members
	default:
		return btf.Member{}, 0, false
	}
	for _, m := range members {
		if m.Name == name {
			return m, m.Offset.Bytes(), true
		}
	}
	for _, m := range members {
		if m.Name != "" {
			continue
		}
		if inner, off, ok := findMember(m.Type, name); ok {
			return inner, m.Offset.Bytes() + off, true
		}
	}
	return btf.Member{}, 0, false
}

// MemberOffset is the byte offset of the member at path in the kernel
// struct typ, found as the counter finds its own (anonymous structs and
// unions searched through): the softirq meter reads kernel structs by
// the same rule.
func MemberOffset(spec *btf.Spec, typ string, path ...string) (uint32, error) {
	m, err := memberOf(spec, typ, path...)
	return m.Off, err
}
