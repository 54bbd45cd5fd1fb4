package sim

import (
	"testing"

	"github.com/tsolab/tsolab/result"
)

// TestSkbLayoutBuffers: a stream of one-MSS buffers, as tcp_sendmsg
// builds them with TSO off, has the DMA buffers each layout gives it.
// 2.6.12 keeps a segment below pgbreak in the linear area whole (one
// buffer); a larger one keeps pgbreak there and pages the rest. The
// all-page layout (Super TSO, patch 1/9) pages every byte: a header
// buffer and the pages the segment touches, 1 + 1 + (MSS−1)/4096 on
// average over the page offsets.
func TestSkbLayoutBuffers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		layout   skbLayout
		gso      bool
		mss      int64
		min, max int64   // fewest and most buffers of one frame
		mean     float64 // over 4096 frames
	}{
		{"2.6.12 mtu 1500", skbLayout{pagesNever}, false, 1448, 1, 1, 1},
		{"2.6.12 mtu 9000", skbLayout{pagesNever}, false, 8948, 3, 4, 2 + float64(8948-pgbreak-1)/pageSize},
		{"2.6.13 mtu 1500 tso off", skbLayout{pagesGSO}, false, 1448, 1, 1, 1},
		{"2.6.13 mtu 1500 tso on", skbLayout{pagesGSO}, true, 1448, 2, 3, 2 + 1447.0/pageSize},
		{"super tso mtu 1500 tso off", skbLayout{pagesSG}, false, 1448, 2, 3, 2 + 1447.0/pageSize},
		{"super tso mtu 9000 tso off", skbLayout{pagesSG}, false, 8948, 4, 5, 2 + 8947.0/pageSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s sender
			linearCap := tc.layout.linearCap(tc.mss, tc.gso)
			sum := int64(0)
			const frames = 4096
			for i := int64(0); i < frames; i++ {
				b := skb{seq: i * tc.mss, end: i * tc.mss}
				s.place(&b, tc.mss, linearCap)
				b.end += tc.mss
				n := unitBuffers(&b, tc.mss, 1, false)
				if n < tc.min || n > tc.max {
					t.Fatalf("frame %d: got %d buffers, want %d to %d", i, n, tc.min, tc.max)
				}
				sum += n
			}
			// The offsets of 4096 frames are multiples of gcd(mss, 4096)
			// spread evenly, so the mean is within one step of the
			// continuous average.
			if got := float64(sum) / frames; got < tc.mean-0.01 || got > tc.mean+0.01 {
				t.Errorf("got %.4f buffers a frame, want %.4f", got, tc.mean)
			}
		})
	}
}

// TestSkbLayoutSplit: cutting a buffer (tcp_fragment, tso_fragment) or
// trimming its acknowledged head (tcp_trim_head) keeps every byte where
// it was: the parts' buffers are the whole's, plus the second part's
// own header buffer, plus one where the cut splits a page.
func TestSkbLayoutSplit(t *testing.T) {
	var s sender
	s.pageOff = 1000
	const mss = 1448
	b := skb{end: 0}
	s.place(&b, 20000, skbLayout{pagesNever}.linearCap(mss, true))
	b.end = 20000
	// 1448 linear, 18552 paged from offset 1000: pages 0..4 (1000+18552 = 19552).
	if got := unitBuffers(&b, mss, 14, true); got != 1+5 {
		t.Fatalf("whole: got %d buffers, want 6", got)
	}
	for _, tc := range []struct {
		name        string
		limit       int64
		first, rest int64
	}{
		{"in the linear area", 1000, 1, 1 + 5},           // rest: 448 linear with the header, all frags
		{"at the end of the linear area", mss, 1, 1 + 5}, // rest: no linear payload
		{"inside a page", mss + 2000, 1 + 1, 1 + 5},      // 1000..3000 | 3000..19552: page 0 in both
		{"at a page boundary", mss + 3096, 1 + 1, 1 + 4}, // 1000..4096 | 4096..19552
		{"in the last page", mss + 18000, 1 + 5, 1 + 1},  // 1000..19000 | 19000..19552
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := b
			rest := skb{seq: tc.limit, end: b.end}
			rest.head, rest.pgOff = layoutFrom(&first, tc.limit)
			first.head = uint16(min(int64(first.head), tc.limit))
			first.end = tc.limit
			if got := unitBuffers(&first, mss, 2, true); got != tc.first {
				t.Errorf("first part: got %d buffers, want %d", got, tc.first)
			}
			if got := unitBuffers(&rest, mss, 2, true); got != tc.rest {
				t.Errorf("second part: got %d buffers, want %d", got, tc.rest)
			}
			// Every byte is where it was: each frame of the second part
			// is the buffers of the same bytes of the whole.
			for off := int64(0); off < rest.len(); off += mss {
				end := min(off+mss, rest.len())
				if got, want := frameBuffers(&rest, off, end), frameBuffers(&b, tc.limit+off, tc.limit+end); got != want {
					t.Errorf("second part's frame [%d,%d): %d buffers, the same bytes of the whole %d", off, end, got, want)
				}
			}
			// An ACK of the first limit bytes leaves b as the second part.
			trimmed := b
			trimmed.head, trimmed.pgOff = layoutFrom(&trimmed, tc.limit)
			trimmed.seq = tc.limit
			if trimmed != rest {
				t.Errorf("trimmed head: got %+v, want %+v", trimmed, rest)
			}
		})
	}
}

// TestBusPerBuffer: with TSO off, super-tso-v2 differs from linux-2.6.13
// only in its skb layout (every byte in pages: a 1448-byte frame is 2.35
// DMA buffers on average, against one). Without a bus cost per buffer the
// two carry the same; with one, on seed 001's bus-bound sender, the
// all-page layout carries less by the bus time of its extra buffers.
func TestBusPerBuffer(t *testing.T) {
	const perUnit, perBuffer = 2000.0, 600.0
	gbps := func(stack string, perBuffer float64) float64 {
		t.Helper()
		profiles := builtinCPUProfiles()
		for i := range profiles {
			if profiles[i].Name == "opteron-2005" {
				profiles[i].BusPerUnit = perUnit
				profiles[i].BusPerBuffer = perBuffer
			}
		}
		res := runScenario(t, New(Options{CPUProfiles: profiles}), neterionScenario(false, 1500, stack))
		return res.Metrics[result.MetricThroughputBps] / 1e9
	}
	if a, b := gbps("linux-2.6.13", 0), gbps("super-tso-v2", 0); a != b {
		t.Errorf("no cost a buffer: linux-2.6.13 %.4f Gb/s, super-tso-v2 %.4f: want the same", a, b)
	}
	a, b := gbps("linux-2.6.13", perBuffer), gbps("super-tso-v2", perBuffer)
	// A full frame's bus time: the transfer, its buffers, and its payload
	// with 66 bytes of headers at the lab's 7.5 Gb/s.
	bytes := (1448 + 66) * 8 / 7.5
	want := (perUnit + perBuffer + bytes) / (perUnit + (2+1447.0/pageSize)*perBuffer + bytes)
	t.Logf("linux-2.6.13 %.4f Gb/s, super-tso-v2 %.4f: %.4f, the bus time of a frame %.4f", a, b, b/a, want)
	if got := b / a; got < want-0.01 || got > want+0.01 {
		t.Errorf("super-tso-v2 / linux-2.6.13 = %.4f / %.4f Gb/s = %.3f, want %.3f (the bus time of a frame, one buffer against 2.35)", b, a, got, want)
	}
}
