package result

import "strings"

// WorkloadResult is one measured run of one workload in one scenario.
type WorkloadResult struct {
	Scenario   string `json:"scenario"`
	Workload   string `json:"workload"`
	Kind       string `json:"kind"`
	Repetition int    `json:"repetition"`
	Engine     string `json:"engine"`
	// Kernel is the running kernel's release (kernel engine); Stack the
	// stack profile of the sender (sim engine).
	Kernel string `json:"kernel,omitempty"`
	Stack  string `json:"stack,omitempty"`
	MSS    int    `json:"mss"`
	// CongestionControl is the sender's congestion control: the name
	// TCP_CONGESTION reads back from the client's sockets (kernel; the
	// machine's net.ipv4.tcp_congestion_control when the workload sets no
	// `cc`), or the one the sender's stack profile ran (sim).
	CongestionControl string `json:"congestion_control,omitempty"`

	// Sides says where each end of the run ran (kernel engine): the
	// client host, then every server host, each with its machine (the
	// lab's machine block; "" = the machine tsolab ran on) and that
	// machine's kernel.
	Sides []Side `json:"sides,omitempty"`

	// Offloads in force per NIC, read back from the device (kernel) or as
	// the model resolved them after the feature fix-ups (sim).
	Offloads map[string]map[string]bool `json:"offloads"`

	// Metrics holds the metrics of Metrics() the engine reports, by name.
	Metrics map[string]float64 `json:"metrics"`

	// Provenance is what this run ran on: the NICs' drivers, firmware and
	// features and the hosts' TCP sysctls (kernel), or the model's
	// profiles (sim). The machine and the lab are in Results.Provenance.
	Provenance *Run `json:"provenance,omitempty"`

	// SendUnitHistogram counts send units by payload size in MSS units:
	// bucket i holds units of ceil(payload/MSS) == i+1 segments.
	SendUnitHistogram []int64 `json:"send_unit_histogram"`

	// Series holds one sample per second of workload time.
	Series []Sample `json:"series"`

	// StopReasons counts why the sender stopped sending, by the names of
	// StopReasons; sim engine only.
	StopReasons map[string]int64 `json:"stop_reasons,omitempty"`
	// Acks counts ACKs by the kinds of AckKinds; sim engine only.
	Acks map[string]int64 `json:"acks,omitempty"`

	// Notes are facts worth showing beside the numbers (a capture that
	// dropped packets, an attribute this engine does not apply).
	Notes []string `json:"notes,omitempty"`

	// Captures lists the packet capture files this run wrote (kernel
	// engine with -capture), one per captured NIC and direction.
	Captures []CaptureFile `json:"captures,omitempty"`
}

// Side is one end of a run and the machine it ran on.
type Side struct {
	Side    string `json:"side"` // "client" or "server"
	Host    string `json:"host"`
	Machine string `json:"machine,omitempty"` // the lab's machine block; omitted for the machine tsolab ran on
	Kernel  string `json:"kernel,omitempty"`  // uname -r of that machine
}

// CaptureFile is one pcapng file of a run and what it holds.
type CaptureFile struct {
	NIC       string `json:"nic"`       // the lab's NIC (or lo@HOST)
	Interface string `json:"interface"` // the device name in its namespace
	Direction string `json:"direction"` // "out" (the sender's NIC) or "in" (the receiver's)
	File      string `json:"file"`      // where it was written, as the caller named it
	// Frames is every frame in the file; DataPackets those carrying TCP
	// payload to the workload's servers (the sender's send units as the
	// ring saw them, see engine/kernel).
	Frames      int64 `json:"frames"`
	DataPackets int64 `json:"data_packets"`
	// Dropped is what the ring could not store (tp_drops, also in the
	// file's interface statistics): the file misses that many frames.
	Dropped int64 `json:"dropped"`
	// Cut is what the file's size cap (-capture-max) kept out: the last
	// Cut packets the capture saw are not in it, and DataPackets counts
	// what the capture saw, the file's Frames being the first ones.
	Cut int64 `json:"cut,omitempty"`
}

// Sample is one point of a workload's time series.
type Sample struct {
	T             float64 `json:"t_s"`             // seconds since the workload started
	ThroughputBps float64 `json:"throughput_bps"`  // over the interval ending at T
	CwndSegments  float64 `json:"cwnd_segments"`   // congestion window, in segments (first connection)
	SendUnitBytes float64 `json:"send_unit_bytes"` // mean send-unit payload over the interval
}

// Results is the file `-json FILE` writes: every run of every scenario.
type Results struct {
	FormatVersion int    `json:"format_version"` // 1
	Lab           string `json:"lab"`
	Engine        string `json:"engine"`
	// Provenance says which tsolab, lab revision and machine produced
	// the runs.
	Provenance *Provenance      `json:"provenance,omitempty"`
	Runs       []WorkloadResult `json:"runs"`
	// Observations puts each observed figure of the lab (an observed
	// block's value) beside the model's or the kernel's, and says whether
	// a calibration was fitted to it or it is a prediction.
	Observations []Observation `json:"observations,omitempty"`
}

// Observation is one observed figure beside the measured one.
type Observation struct {
	Observed string `json:"observed"` // the observed block
	Source   string `json:"source,omitempty"`
	Scenario string `json:"scenario"`
	// RelativeTo, when set, is the scenario Value and Measured are
	// relative to: the metric in Scenario over the metric in RelativeTo.
	RelativeTo string  `json:"relative_to,omitempty"`
	Workload   string  `json:"workload"`
	Metric     string  `json:"metric"`
	Value      float64 `json:"value"`    // observed
	Measured   float64 `json:"measured"` // the median of this engine's runs
	Error      float64 `json:"error"`    // measured/value - 1
	// Role is "fitted" when a calibration was fitted to the figure,
	// "predicted" otherwise.
	Role string `json:"role"`
}

// Sides says where each workload's sides ran (the kernel engine's
// runs[].sides), one workload after another: "bulk: client tx here,
// server rx on machine r1 (kernel 6.1.0); ...". It is "" when every side
// ran on the machine tsolab ran on.
func (r *Results) Sides() string {
	var parts []string
	seen := map[string]bool{}
	remote := false
	for _, run := range r.Runs {
		if seen[run.Workload] || len(run.Sides) == 0 {
			continue
		}
		seen[run.Workload] = true
		var sides []string
		for _, s := range run.Sides {
			where := "here"
			if s.Machine != "" {
				where, remote = "on machine "+s.Machine, true
				if s.Kernel != "" {
					where += " (kernel " + s.Kernel + ")"
				}
			}
			sides = append(sides, s.Side+" "+s.Host+" "+where)
		}
		parts = append(parts, run.Workload+": "+strings.Join(sides, ", "))
	}
	if !remote {
		return ""
	}
	return strings.Join(parts, "; ")
}
