package capture

// Summary is the send-unit view of a capture for one MSS.
type Summary struct {
	SendUnits    int64 // send units seen (a super-packet counts once)
	PayloadBytes int64 // their summed payload
	// DataPackets is the wire segments the units become when cut to MSS:
	// the sum of ceil(payload/MSS).
	DataPackets int64
	// SingleMSS counts units whose payload is exactly one MSS.
	SingleMSS int64
	// Histogram bucket i counts units of ceil(payload/MSS) == i+1
	// segments (result.WorkloadResult.SendUnitHistogram).
	Histogram []int64
}

// Summarize counts the send units of payload sizes (payload
// bytes -> count) for a connection MSS in bytes.
func Summarize(sizes map[int]int64, mss int) Summary {
	var s Summary
	if mss <= 0 {
		panic("capture.Summarize: MSS must be positive")
	}
	for p, n := range sizes {
		if p <= 0 || n <= 0 {
			continue
		}
		segs := (p + mss - 1) / mss
		s.SendUnits += n
		s.PayloadBytes += int64(p) * n
		s.DataPackets += int64(segs) * n
		if p == mss {
			s.SingleMSS += n
		}
		for len(s.Histogram) < segs {
			s.Histogram = append(s.Histogram, 0)
		}
		s.Histogram[segs-1] += n
	}
	return s
}
