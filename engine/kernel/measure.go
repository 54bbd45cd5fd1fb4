package kernel

import (
	"fmt"
	"math"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/kernel/capture"
	"github.com/tsolab/tsolab/engine/kernel/devqueue"
	"github.com/tsolab/tsolab/result"
)

// tcpTotals sums the TCP_INFO counters of one side's sockets.
type tcpTotals struct {
	Sockets     int
	SegsIn      uint64 // tcpi_segs_in
	SegsOut     uint64 // tcpi_segs_out
	DataSegsOut uint64 // tcpi_data_segs_out
	Retrans     uint64 // tcpi_total_retrans
}

// merge adds another machine's totals.
func (t *tcpTotals) merge(o tcpTotals) {
	t.Sockets += o.Sockets
	t.SegsIn += o.SegsIn
	t.SegsOut += o.SegsOut
	t.DataSegsOut += o.DataSegsOut
	t.Retrans += o.Retrans
}

func (t *tcpTotals) add(i *unix.TCPInfo) {
	t.Sockets++
	t.SegsIn += uint64(i.Segs_in)
	t.SegsOut += uint64(i.Segs_out)
	t.DataSegsOut += uint64(i.Data_segs_out)
	t.Retrans += uint64(i.Total_retrans)
}

// tapResult is what counted send units on one sender NIC, with the
// interface's tx_packets delta.
type tapResult struct {
	Interface string // "NIC (ifname)" for notes
	NIC       string
	Ifname    string
	Dir       capture.Direction
	// Units is what the eBPF counter counted; nil when it did not run.
	Units *devqueue.Result
	// Ring says the AF_PACKET ring ran; Result is what it saw.
	Ring      bool
	Result    capture.Result
	TxPackets uint64
	// File is the capture file ("" = none): the eBPF counter's record of
	// the send units (FileBPF) or the ring's frames.
	File    string
	Target  CaptureTarget // what the file holds, as Options.Capture was told
	FileBPF bool
	Cut     int64 // packets the file's size cap kept out (Options.CaptureMaxBytes)
}

// measurement is everything a run measured, before it becomes metrics.
type measurement struct {
	Kind     config.WorkloadKind
	Duration time.Duration // wall time from the start to the last worker's end
	Bytes    int64         // payload received, both directions for rr
	MSS      int           // tcpi_snd_mss of the client
	Captured bool          // send-unit counting was on (Options.DisableCapture off)
	// BPFErr is why the eBPF counter did not load when the engine fell
	// back to the AF_PACKET ring.
	BPFErr error
	// RecvBPFErr is why the server NICs are captured by the ring, not by
	// eBPF at their TCX ingress.
	RecvBPFErr error
	CPUThreads [2]time.Duration
	// Process is the CPU time of every thread of this process over the
	// run: the workers, the Go runtime, the sampler, capture readers (and
	// of the Agents on other machines that ran a side).
	Process time.Duration
	Agents  int
	// Outside is the lab's softirq time outside the workers' threads:
	// with the softirq meter (softirq.go), the softirqs of the lab's
	// vectors (labVecs) that ran on idle CPUs and other tasks' threads, times the lab's share of the machine's received packets,
	// and Softirqd is 0; without it, CPU time no thread ran (interrupts
	// and softirqs on idle CPUs) and Softirqd the runtime of the
	// ksoftirqd threads. Both are split between the sides by the
	// segments each sent and received.
	Outside, Softirqd time.Duration
	// Shares, when set, is that time per kernel the run used (one per
	// machine), with the segments its sides' sockets there handled: each
	// machine's softirq time is split between the sides it hosts. Nil
	// means one kernel and TCP's segments.
	Shares    []softShare
	TCP       [2]tcpTotals // by side
	Latencies []time.Duration
	Taps      []tapResult // the sender NICs
	// Recv are the server NICs' captures (incoming, with capture files
	// only: eBPF at TCX ingress or the ring); they count nothing.
	Recv []tapResult
}

// cpuNote says where cpu_tx_pct and cpu_rx_pct come from: the workers'
// threads, the softirq time outside them (split by segments), and what
// the process's other threads used, which neither metric holds.
func (m measurement) cpuNote() string {
	secs := m.Duration.Seconds()
	if secs <= 0 {
		return "CPU: the run took no measurable time"
	}
	pct := func(d time.Duration) float64 { return d.Seconds() / secs * 100 }
	soft := m.Outside + m.Softirqd
	softTx, softRx := m.softirqSplit()
	other := max(m.Process-m.CPUThreads[sideTx]-m.CPUThreads[sideRx], 0)
	procs := "the process's"
	if m.Agents > 0 {
		procs = fmt.Sprintf("tsolab's and %d agent(s)'", m.Agents)
	}
	return fmt.Sprintf("CPU in %% of one core: sender threads %.1f, receiver threads %.1f, %s other threads %.1f (Go runtime, sampler, capture readers; in neither cpu_tx_pct nor cpu_rx_pct), softirq outside the workers' threads %.1f (%.1f in cpu_tx_pct, %.1f in cpu_rx_pct, split by segments)",
		pct(m.CPUThreads[sideTx]), pct(m.CPUThreads[sideRx]), procs, pct(other), pct(soft), pct(softTx), pct(softRx))
}

// softShare is the softirq time outside the workers' threads on one kernel and the
// segments each side's sockets there sent and received.
type softShare struct {
	Time time.Duration
	Segs [2]uint64
}

// softirqSplit divides the softirq time outside the workers' threads between the sides,
// on each kernel by the segments of the sides it hosts.
func (m measurement) softirqSplit() (tx, rx time.Duration) {
	shares := m.Shares
	if shares == nil {
		shares = []softShare{{Time: m.Outside + m.Softirqd, Segs: [2]uint64{
			m.TCP[sideTx].SegsIn + m.TCP[sideTx].SegsOut, m.TCP[sideRx].SegsIn + m.TCP[sideRx].SegsOut}}}
	}
	for _, s := range shares {
		t, r := splitSoftirq(s.Time, s.Segs[sideTx], s.Segs[sideRx])
		tx, rx = tx+t, rx+r
	}
	return tx, rx
}

// tolerance is how far two counts of the same packets may differ before a
// Note says so.
const tolerance = 0.02

// result turns a measurement into metrics, histogram and notes.
func (m measurement) result() *result.WorkloadResult {
	res := &result.WorkloadResult{
		Kind:    string(m.Kind),
		MSS:     m.MSS,
		Metrics: map[string]float64{},
	}
	for _, name := range result.Names() {
		res.Metrics[name] = 0
	}
	secs := m.Duration.Seconds()
	met := res.Metrics
	met[result.MetricBytes] = float64(m.Bytes)
	met[result.MetricDurationS] = secs

	var counts result.Counts
	if m.Kind == config.RR {
		lat := append([]time.Duration(nil), m.Latencies...)
		sortDurations(lat)
		counts.Transactions = int64(len(lat))
		met[result.MetricLatencyP50us] = float64(percentile(lat, 0.50)) / float64(time.Microsecond)
		met[result.MetricLatencyP99us] = float64(percentile(lat, 0.99)) / float64(time.Microsecond)
	}

	softTx, softRx := m.softirqSplit()
	if secs > 0 {
		met[result.MetricCPUTxPct] = (m.CPUThreads[sideTx] + softTx).Seconds() / secs * 100
		met[result.MetricCPURxPct] = (m.CPUThreads[sideRx] + softRx).Seconds() / secs * 100
	}
	met[result.MetricRetransmits] = float64(m.TCP[sideTx].Retrans + m.TCP[sideRx].Retrans)

	s := m.sendUnits(res)
	counts.SendUnits, counts.SendUnitBytes, counts.SingleMSS = s.SendUnits, s.PayloadBytes, s.SingleMSS
	result.Derive(met, counts)
	return res
}

// sendUnits is the send-unit summary of the capture (none without one):
// it sets data_packets, capture_loss and the histogram, and adds the notes
// that check the counts.
func (m measurement) sendUnits(res *result.WorkloadResult) capture.Summary {
	met := res.Metrics
	if !m.Captured {
		res.Notes = append(res.Notes, "capture disabled: send_units, avg_send_bytes, data_packets and single_mss_fraction were not measured (0)")
		return capture.Summary{}
	}
	secs := m.Duration.Seconds()
	res.Captures, res.Notes = m.captureFiles(res.Notes)
	bpf := len(m.Taps) > 0
	for _, t := range m.Taps {
		bpf = bpf && t.Units != nil
	}
	for _, t := range append(append([]tapResult(nil), m.Taps...), m.Recv...) {
		if t.Ring {
			res.Notes = append(res.Notes, m.ringNotes(t, secs)...)
		}
	}
	if m.MSS <= 0 {
		return capture.Summary{}
	}
	var s capture.Summary
	if bpf {
		s = m.bpfSummary(res)
	} else {
		s = m.ringSummary(res)
	}
	met[result.MetricDataPackets] = float64(s.DataPackets)
	res.SendUnitHistogram = s.Histogram

	// The send units are the client's data (for rr: the requests), which
	// is what the client sockets' tcpi_data_segs_out counts.
	tcpData := m.TCP[sideTx].DataSegsOut
	if bpf && tcpData > uint64(s.DataPackets) {
		// The map loses nothing, but a counter at the tracepoint (the
		// fallback without TCX) does not run in every context: paced
		// flows showed ~0.1-0.5% of segments no run counted (see
		// devqueue's documentation). Whatever is missing is reported.
		missing := int64(tcpData) - s.DataPackets
		met[result.MetricCaptureLoss] += float64(missing)
		res.Notes = append(res.Notes, fmt.Sprintf("TCP_INFO tcpi_data_segs_out says %d data segments, the eBPF counter saw %d: the %d missing (%.2f%%) are capture_loss",
			tcpData, s.DataPackets, missing, 100*float64(missing)/float64(tcpData)))
	}
	if met[result.MetricCaptureLoss] == 0 && disagree(float64(s.DataPackets), float64(tcpData)) {
		res.Notes = append(res.Notes, fmt.Sprintf("counted %d data packets, TCP_INFO tcpi_data_segs_out says %d (segments cut to a smaller MSS than the first connection's %d?)",
			s.DataPackets, tcpData, m.MSS))
	}
	if lost := m.fileLoss(bpf); lost > 0 {
		met[result.MetricCaptureLoss] += float64(lost)
		res.Notes = append(res.Notes, fmt.Sprintf("the capture files lost %d packets their source saw (captures[].dropped): counted in capture_loss", lost))
	}
	return s
}

// fileLoss is what the capture files lost beyond what capture_loss holds
// already: the eBPF records lost in full record rings (and, on a server
// NIC, packets whose headers its program could not read), a ring's drops
// when the ring is not what counts the send units (bpf: eBPF counts).
func (m measurement) fileLoss(bpf bool) int64 {
	var lost int64
	for _, t := range append(append([]tapResult(nil), m.Taps...), m.Recv...) {
		switch {
		case t.File == "":
		case t.FileBPF && t.Units != nil:
			lost += t.Units.RecordLost
			if t.Dir == capture.Incoming {
				lost += t.Units.Unread
			}
		case t.Ring && (t.Dir == capture.Incoming || bpf):
			lost += t.Result.Dropped
		}
	}
	return lost
}

// bpfSummary is the send-unit summary of the eBPF counters; it sets
// capture_loss and adds the notes that name the source and check it.
func (m measurement) bpfSummary(res *result.WorkloadResult) capture.Summary {
	var s capture.Summary
	var unread int64
	var names []string
	for _, t := range m.Taps {
		u := t.Units
		names = append(names, t.Interface+" at "+u.Hook.Where())
		s.SendUnits += u.SendUnits
		s.PayloadBytes += u.PayloadBytes
		s.DataPackets += u.WireSegments
		s.SingleMSS += u.SingleMSS
		unread += u.Unread
		for len(s.Histogram) < len(u.Histogram) {
			s.Histogram = append(s.Histogram, 0)
		}
		for i, n := range u.Histogram {
			s.Histogram[i] += n
		}
		if u.Clamped > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("eBPF counter on %s: %d send units were larger than %d MSS and are counted in the histogram's last bucket",
				t.Interface, u.Clamped, devqueue.Buckets))
		}
		if u.Missed > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("eBPF counter on %s: the kernel skipped the program %d times (recursion_misses; packets on any device, so at most that many send units are missing)", t.Interface, u.Missed))
		}
		if u.Unread > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("eBPF counter on %s could not read the headers of %d packets (not counted; capture_loss)", t.Interface, u.Unread))
		}
		// The driver got every unit whole (TSO) or cut into its
		// segments (software GSO), plus the other packets.
		lo, hi := u.SendUnits+u.Other, u.WireSegments+u.Other
		if tx := int64(t.TxPackets); t.TxPackets > 0 && (float64(tx) < float64(lo)*(1-tolerance) || float64(tx) > float64(hi)*(1+tolerance)) {
			res.Notes = append(res.Notes, fmt.Sprintf("eBPF counter on %s: the interface counted %d transmitted packets, outside the %d..%d the queued units and other packets make (a driver that counts differently, or drops before the driver)",
				t.Interface, tx, lo, hi))
		}
		if t.Ring && t.Result.Dropped == 0 {
			ring := capture.Summarize(t.Result.Sizes, m.MSS)
			if disagree(float64(ring.DataPackets), float64(u.WireSegments)) {
				res.Notes = append(res.Notes, fmt.Sprintf("on %s the AF_PACKET ring saw %d data packets cut to MSS, the eBPF counter %d wire segments",
					t.Interface, ring.DataPackets, u.WireSegments))
			}
		}
	}
	res.Metrics[result.MetricCaptureLoss] = float64(unread)
	res.Notes = append(res.Notes, fmt.Sprintf("send units counted by eBPF on %s, where TCP hands them to the device layer (before software GSO; counted in a per-CPU map, no ring to overflow); data_packets is the sum of their gso_segs",
		strings.Join(names, ", ")))
	return s
}

// ringSummary is the send-unit summary of the AF_PACKET rings; it sets
// capture_loss to their drops and adds the notes that name the source.
func (m measurement) ringSummary(res *result.WorkloadResult) capture.Summary {
	sizes := map[int]int64{}
	var dropped int64
	for _, t := range m.Taps {
		for p, n := range t.Result.Sizes {
			sizes[p] += n
		}
		dropped += t.Result.Dropped
	}
	res.Metrics[result.MetricCaptureLoss] = float64(dropped)
	why := "Options.Counter is ring"
	if m.BPFErr != nil {
		why = fmt.Sprintf("the eBPF counter is unavailable: %v", m.BPFErr)
	}
	res.Notes = append(res.Notes, fmt.Sprintf("send units counted by the AF_PACKET ring on the sender NIC, after software GSO (%s)", why))
	return capture.Summarize(sizes, m.MSS)
}

// ringNotes says what one AF_PACKET ring saw and lost.
func (m measurement) ringNotes(t tapResult, secs float64) []string {
	var notes []string
	if t.Result.Dropped > 0 {
		what := "send-unit counts are low by that much"
		switch {
		case t.Dir == capture.Incoming:
			what = "only its capture file misses them (counted in capture_loss)"
		case t.Units != nil:
			what = "the eBPF counts are not affected"
		}
		if t.File != "" {
			what += "; the capture file misses them too"
		}
		notes = append(notes, fmt.Sprintf("capture on %s dropped %d of %d packets (%.2f%%): %s",
			t.Interface, t.Result.Dropped, t.Result.Seen, 100*float64(t.Result.Dropped)/float64(max(t.Result.Seen, 1)), what))
	}
	if secs > 0 {
		notes = append(notes, fmt.Sprintf("capture on %s: %d packets, reader thread used %.1f%% of a core (not counted in cpu_tx_pct)",
			t.Interface, t.Result.Seen, t.Result.ReaderCPU.Seconds()/secs*100))
	}
	captured := t.Result.Seen - t.Result.Dropped
	if t.TxPackets > 0 && disagree(float64(captured), float64(t.TxPackets)) {
		notes = append(notes, fmt.Sprintf("capture on %s saw %d outgoing TCP packets, the interface counted %d transmitted packets (other traffic, or a driver that counts segments)",
			t.Interface, captured, t.TxPackets))
	}
	return notes
}

// captureFiles lists the capture files of the run, with a note on each
// that says what its packets are to be compared with.
func (m measurement) captureFiles(notes []string) ([]result.CaptureFile, []string) {
	var files []result.CaptureFile
	for _, t := range append(append([]tapResult(nil), m.Taps...), m.Recv...) {
		if t.File == "" {
			continue
		}
		if t.FileBPF && t.Units != nil {
			f := result.CaptureFile{
				NIC: t.NIC, Interface: t.Ifname, Direction: t.Dir.String(), File: t.File,
				Frames: t.Units.Recorded - t.Cut, DataPackets: t.Units.RecordedData, Dropped: t.Units.RecordLost, Cut: t.Cut,
			}
			files = append(files, f)
			format := "capture file %s: %d packets of %s outgoing as TCP handed them to the device (recorded by the eBPF counter, before software GSO, as tcpdump on a TSO NIC sees them), %d of them TCP data to the servers: the send units, so they match send_units; the record ring lost %d (in the file's interface statistics, captures[].dropped and capture_loss)%s"
			if t.Dir == capture.Incoming {
				format = "capture file %s: %d packets of %s incoming as the receiving device handed them up (recorded by eBPF at its TCX ingress, after GRO when the device aggregates), %d of them TCP data to the servers; the record ring lost %d (in the file's interface statistics, captures[].dropped and capture_loss)%s"
			}
			notes = append(notes, fmt.Sprintf(format, f.File, t.Units.Recorded, t.Interface, f.DataPackets, f.Dropped, cutNote(f)))
			continue
		}
		var data int64
		for _, n := range t.Result.Sizes {
			data += n
		}
		f := result.CaptureFile{
			NIC: t.NIC, Interface: t.Ifname, Direction: t.Dir.String(), File: t.File,
			Frames: t.Result.Written - t.Cut, DataPackets: data, Dropped: t.Result.Dropped, Cut: t.Cut,
		}
		files = append(files, f)
		loss := fmt.Sprintf("the ring dropped %d (tp_drops, in the file's interface statistics and captures[].dropped)%s", f.Dropped, cutNote(f))
		switch {
		case t.Dir == capture.Incoming:
			why := "Options.Counter is ring"
			if m.RecvBPFErr != nil {
				why = fmt.Sprintf("eBPF at TCX ingress is unavailable: %v", m.RecvBPFErr)
			}
			notes = append(notes, fmt.Sprintf("capture file %s: %d frames of %s incoming, %d of them TCP data to the servers, as the receiver's device handed them up (after GRO when it aggregates), from the AF_PACKET ring (%s); %s, counted in capture_loss",
				f.File, t.Result.Written, t.Interface, f.DataPackets, why, loss))
		case t.Units != nil:
			notes = append(notes, fmt.Sprintf("capture file %s: %d frames of %s outgoing, %d of them TCP data to the servers; the ring runs beside the eBPF counter and sees TSO super-packets whole but software-GSO units already cut to MSS, so with TSO on these data packets match send_units, with TSO off (software GSO) data_packets; %s; capture_loss is the eBPF counter's loss, not the file's",
				f.File, t.Result.Written, t.Interface, f.DataPackets, loss))
		default:
			notes = append(notes, fmt.Sprintf("capture file %s: %d frames of %s outgoing, %d of them TCP data to the servers: the ring counted the send units, so they are send_units; %s, which is capture_loss",
				f.File, t.Result.Written, t.Interface, f.DataPackets, loss))
		}
	}
	return files, notes
}

// cutNote says, for a file its size cap cut, how much of what the note
// counts is in it.
func cutNote(f result.CaptureFile) string {
	if f.Cut == 0 {
		return ""
	}
	return fmt.Sprintf("; the file reached -capture-max and holds only the first %d of them (captures[].frames; %d left out, captures[].cut)", f.Frames, f.Cut)
}

// disagree reports whether a and b differ by more than tolerance.
func disagree(a, b float64) bool {
	if a == b {
		return false
	}
	return math.Abs(a-b) > tolerance*math.Max(math.Abs(a), math.Abs(b))
}
