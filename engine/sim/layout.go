package sim

// pageSize is the page user data is copied into: PAGE_SIZE of x86 and
// x86_64 (TCP_PAGE of 2.6 kernels), and FreeBSD's page-sized mbuf
// cluster (MJUMPAGESIZE, which m_uiotombuf takes for large writes).
// Linux 3.7 and later copy into 32 KB page frags (sk_page_frag); the
// model counts 4 KB pages for linux-6 too.
const pageSize = 4096

// pgbreak is select_size's pgbreak of 2.6.12 on seed 001's x86_64
// sender, SKB_MAX_HEAD(MAX_TCP_HEADER): (PAGE_SIZE - MAX_TCP_HEADER -
// sizeof(struct skb_shared_info)) rounded down to SMP_CACHE_BYTES, with
// MAX_TCP_HEADER 208 (128 + LL_MAX_HEADER 32 + 48 for IP tunnels),
// skb_shared_info 312 bytes (MAX_SKB_FRAGS 18 frags of 16 bytes after 24
// of counts and frag_list) and 64-byte cache lines (K8): 3520. A
// segment this long or shorter fits the linear area whole.
const pgbreak = 3520

// maxSkbFrags is MAX_SKB_FRAGS with 4 KB pages: 65536/PAGE_SIZE + 2.
const maxSkbFrags = 65536/pageSize + 2

// pagesRule is when select_size puts a new buffer's whole payload in
// page frags, leaving only the headers in its linear area.
type pagesRule uint8

const (
	// pagesNever: 2.6.12's select_size: one MSS in the linear area (an
	// MSS up to pgbreak; a larger one pgbreak), the rest in pages.
	pagesNever pagesRule = iota
	// pagesGSO: when the route builds multi-segment buffers (sk_can_gso:
	// TSO on 2.6.13-2.6.17, "[TCP]: Fix send-side cpu utiliziation
	// regression" in the 2.6.13 series; TSO or GSO from 2.6.18), else as
	// pagesNever.
	pagesGSO
	// pagesSG: on any route that can do scatter-gather, TSO or not:
	// patch 1/9 of seed 000's series, and the Super TSO patch itself
	// (Herbert Xu, 4 June 2005: "with Dave's latest super-TSO patch, TCP
	// over loopback will only be doing order-0 allocations"). FreeBSD
	// too: tcp_output puts the headers in an mbuf of their own and
	// references the socket buffer's page clusters.
	pagesSG
)

var pagesRuleNames = [...]string{"never", "gso", "sg"}

func (r pagesRule) String() string { return pagesRuleNames[r] }

// skbLayout is where a stack's tcp_sendmsg puts a buffer's payload, and
// so how many DMA buffers a send unit is for the NIC: one for the linear
// area (the headers and the payload select_size put there) and one for
// each page its paged bytes touch (a frag; bytes in one page are one
// frag, as skb_can_coalesce merges them).
type skbLayout struct {
	pages pagesRule
}

// linearCap is select_size: the payload bytes a new buffer's linear
// area takes, for a sender with this MSS that builds multi-segment
// buffers (gso) or not. Without scatter-gather the buffer is linear
// whole and this is not asked. An MSS is at most 65483 (MTU 65535), so
// the result fits skb.head.
func (l skbLayout) linearCap(mss int64, gso bool) int64 {
	if l.pages == pagesSG || l.pages == pagesGSO && gso {
		return 0
	}
	if mss >= pgbreak && mss <= pgbreak+(maxSkbFrags-1)*pageSize {
		return pgbreak
	}
	return mss
}

// place puts add more bytes at the end of buffer b (before b.end grows
// by add) as tcp_sendmsg copies them: into the linear area while it has
// room (a buffer with paged bytes has none left), then into the
// sender's page from its offset on, which moves on by what it took.
func (s *sender) place(b *skb, add, linearCap int64) {
	if b.len() == int64(b.head) {
		h := min(add, max(0, linearCap-int64(b.head)))
		b.head += uint16(h)
		add -= h
		if add > 0 {
			b.pgOff = uint16(s.pageOff)
		}
	}
	s.pageOff = (s.pageOff + add) % pageSize
}

// layoutFrom is the layout of b's bytes from byte limit on: of the
// second part when tcp_fragment or tso_fragment cuts b there (skb_split:
// a cut inside the linear area moves the linear bytes after it and every
// frag to the second part; a cut in the frags leaves it no linear
// payload), and of b when an ACK trims its first limit bytes
// (tcp_trim_head).
func layoutFrom(b *skb, limit int64) (head, pgOff uint16) {
	h := int64(b.head)
	if limit < h {
		return uint16(h - limit), b.pgOff
	}
	return 0, uint16((int64(b.pgOff) + limit - h) % pageSize)
}

// frameBuffers is the DMA buffers of the bytes [from, to) of b sent as
// one frame or TSO unit: its linear area (the headers, with b's linear
// payload in the range) and each page its paged bytes in the range
// touch.
func frameBuffers(b *skb, from, to int64) int64 {
	if b.linear {
		return 1
	}
	h := int64(b.head)
	from = max(from, h)
	if to <= from {
		return 1
	}
	off := int64(b.pgOff) + from - h
	return 1 + (off+to-from-1)/pageSize - off/pageSize + 1
}

// unitBuffers is the DMA buffers of buffer b sent as one unit of pcount
// segments: one TSO unit or frame, or, cut by software GSO (skb_segment),
// a frame of each segment, each with a linear area of its own.
func unitBuffers(b *skb, mss, pcount int64, tso bool) int64 {
	if pcount == 1 || tso {
		return frameBuffers(b, 0, b.len())
	}
	n := int64(0)
	for off := int64(0); off < b.len(); off += mss {
		n += frameBuffers(b, off, min(off+mss, b.len()))
	}
	return n
}
