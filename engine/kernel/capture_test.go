package kernel_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/engine/kernel/capture"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/result"
)

// pcapCount is what a pcapng file holds, decoded by gopacket.
type pcapCount struct {
	Frames, Data int64 // every frame; those with TCP payload
	Payload      int64 // TCP payload bytes of the data frames
	Dropped      uint64
	Comment      string // of the interface statistics block
}

// readPcapng decodes a capture file independently of the engine:
// pcapgo's reader, gopacket's Ethernet/IPv4/TCP layers, the payload from
// the IPv4 total length (the frames are truncated to the headers).
func readPcapng(t *testing.T, path string) pcapCount {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.NgReaderOptions{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var c pcapCount
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: frame %d: %v", path, c.Frames+1, err)
		}
		c.Frames++
		p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.NoCopy)
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if ip == nil || tcp == nil {
			t.Fatalf("%s: frame %d is not IPv4 TCP: %v", path, c.Frames, p)
		}
		if n := int(ip.Length) - int(ip.IHL)*4 - int(tcp.DataOffset)*4; n > 0 {
			c.Data++
			c.Payload += int64(n)
		}
	}
	intf, err := r.Interface(0)
	if err != nil {
		t.Fatal(err)
	}
	c.Dropped, c.Comment = intf.Statistics.PacketsDropped, intf.Statistics.Comment
	return c
}

// tsharkData counts the TCP data packets of a file with tshark, or
// returns -1 when tshark is not installed (and fails t under
// TSOLAB_REQUIRE_NETNS=1: .ci/run installs it).
func tsharkData(t *testing.T, path string) int64 {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		if os.Getenv(netnstest.RequireEnv) == "1" {
			t.Fatalf("%s=1 but tshark is not installed: the capture files would go without their cross-check (apt-get install tshark)", netnstest.RequireEnv)
		}
		return -1
	}
	out, err := exec.Command("tshark", "-r", path, "-Y", "tcp.len > 0", "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("tshark -r %s: %v\n%s", path, err, ee.Stderr)
		}
		t.Fatalf("tshark -r %s: %v", path, err)
	}
	var n int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			n++
		}
	}
	return n
}

// With Options.Capture the engine writes a pcapng file per captured NIC:
// the sender's outgoing TCP and the receiver's incoming TCP. The files
// hold what Captures says, open with pcapgo's reader and tshark, and the
// sender's data packets are the run's send units whether TSO or software
// GSO cuts them (the eBPF counter records them before GSO), within the
// losses the run reports; the receiver's (eBPF at TCX ingress) carry the
// same payload, every byte sent. Without eBPF (CounterRing) the ring
// writes both files, the sender's after software GSO, and counts what it
// wrote; when only the receiver's program cannot load, its ring takes
// over and the file's note says why.
func TestCaptureFiles(t *testing.T) {
	noIngress := errors.New("test: no TCX ingress")
	for _, tt := range []struct {
		name     string
		tso      bool
		counter  kernel.Counter
		noIn     bool   // the receiver's eBPF program fails to load
		source   string // in the sender file's note
		received string // in the receiver file's note
	}{
		{"tso on", true, kernel.CounterAuto, false, "eBPF counter", "recorded by eBPF at its TCX ingress"},
		{"tso off", false, kernel.CounterAuto, false, "eBPF counter", "recorded by eBPF at its TCX ingress"},
		{"tso off, ring", false, kernel.CounterRing, false, "the ring counted the send units", "from the AF_PACKET ring (Options.Counter is ring)"},
		{"tso off, receiver without eBPF", false, kernel.CounterAuto, true, "eBPF counter", "from the AF_PACKET ring (eBPF at TCX ingress is unavailable: eBPF receiver capture on rx0: test: no TCX ingress)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newPair(t, 1500)
			p.setFeatures(t, "tx", "tx0", map[string]bool{featSG: true, featTSO: tt.tso, featGSO: true})
			dir := t.TempDir()
			var targets []kernel.CaptureTarget
			opts := kernel.Options{Counter: tt.counter, Capture: func(ct kernel.CaptureTarget) (io.WriteCloser, string, error) {
				targets = append(targets, ct)
				return createIn(dir, fmt.Sprintf("%s-%s", ct.NIC, ct.Direction))
			}}
			if tt.noIn {
				opts = kernel.WithoutBPF(opts, capture.Incoming, noIngress)
			}
			res := runWorkload(t, p, &config.Workload{
				Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
				Connections: 1, WriteSize: 65536, Bytes: 40_000_000,
			}, opts)
			if len(targets) != 2 || targets[0].NIC != "tx0" || targets[0].Direction.String() != "out" ||
				targets[1].NIC != "rx0" || targets[1].Direction.String() != "in" || targets[0].Scenario != "test" || targets[0].Workload != "bulk" {
				t.Fatalf("capture targets = %+v, want tx0 out and rx0 in for test/bulk", targets)
			}
			if n := sourceNote(t, res); (tt.counter == kernel.CounterAuto) != bytes.Contains([]byte(n), []byte("eBPF")) {
				t.Errorf("source note %q with counter %v: capturing keeps the counter asked for", n, tt.counter)
			}
			if len(res.Captures) != 2 {
				t.Fatalf("captures = %+v, want the two files", res.Captures)
			}
			if !hasNote(res, "capture file "+res.Captures[0].File+": ", tt.source) {
				t.Errorf("notes %q: want the sender's file described as from the %s", res.Notes, tt.source)
			}
			if !hasNote(res, "capture file "+res.Captures[1].File+": ", tt.received) {
				t.Errorf("notes %q: want the receiver's file described as %s", res.Notes, tt.received)
			}
			m := res.Metrics
			var payload [2]int64 // sender, receiver
			for i, cf := range res.Captures {
				got := readPcapng(t, cf.File)
				payload[i] = got.Payload
				if got.Frames != cf.Frames || got.Data != cf.DataPackets || got.Dropped != uint64(cf.Dropped) {
					t.Errorf("%s holds %+v, the result says %d frames, %d data packets, %d dropped", cf.File, got, cf.Frames, cf.DataPackets, cf.Dropped)
				}
				if got.Data == 0 {
					t.Errorf("%s holds no TCP data packets", cf.File)
				}
				if n := tsharkData(t, cf.File); n >= 0 && n != got.Data {
					t.Errorf("tshark -r %s counts %d TCP data packets, gopacket %d", cf.File, n, got.Data)
				} else if n < 0 {
					t.Logf("tshark not installed: %s checked with pcapgo's reader only", cf.File)
				}
				if cf.Direction != "out" {
					t.Logf("%s: %d frames, %d data packets, %d dropped, %d payload bytes", cf.File, cf.Frames, cf.DataPackets, cf.Dropped, got.Payload)
					continue
				}
				// The eBPF counter's misses (capture_loss) and the ring's
				// drops are the two sides' losses.
				want, loss := m[result.MetricSendUnits], m[result.MetricCaptureLoss]+float64(cf.Dropped)
				if d := float64(cf.DataPackets) - want; d > loss || -d > loss {
					t.Errorf("%s: %d TCP data packets, send_units = %v: differ by more than the reported loss %v", cf.File, cf.DataPackets, want, loss)
				}
				t.Logf("%s: %d frames, %d data packets, %d dropped; send_units %v, data_packets %v, capture_loss %v",
					cf.File, cf.Frames, cf.DataPackets, cf.Dropped, m[result.MetricSendUnits], m[result.MetricDataPackets], m[result.MetricCaptureLoss])
			}
			// The receiver's file carries what the sender's does: every
			// payload byte sent (retransmissions in both), unless a file
			// lost packets, which capture_loss then says.
			if m[result.MetricCaptureLoss] == 0 && (payload[0] != payload[1] || payload[1] < 40_000_000) {
				t.Errorf("TCP payload in the sender's file %d bytes, in the receiver's %d: want the same, at least the 40000000 sent", payload[0], payload[1])
			}
		})
	}
}

// hasNote reports whether a note of res starts with prefix and holds part.
func hasNote(res *result.WorkloadResult, prefix, part string) bool {
	for _, n := range res.Notes {
		if bytes.HasPrefix([]byte(n), []byte(prefix)) && bytes.Contains([]byte(n), []byte(part)) {
			return true
		}
	}
	return false
}

// Capturing needs the ring that DisableCapture turns off.
func TestCaptureRefusedWithoutCapture(t *testing.T) {
	p := newPair(t, 1500)
	w := &config.Workload{Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"}, Duration: 300 * time.Millisecond}
	_, err := kernel.New(kernel.Options{DisableCapture: true, Capture: func(kernel.CaptureTarget) (io.WriteCloser, string, error) {
		t.Error("Capture called with DisableCapture")
		return nil, "", errors.New("not expected")
	}}).Run(context.Background(), engine.RunRequest{Scenario: p.Scenario, Workload: w, Naming: p.Naming})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("DisableCapture")) {
		t.Errorf("Run error = %v, want one naming DisableCapture", err)
	}
}

// discardable is a capture file the engine may take back, as -capture's.
type discardable struct{ *os.File }

// createIn creates the capture file DIR/NAME.pcapng.
func createIn(dir, name string) (io.WriteCloser, string, error) {
	path := filepath.Join(dir, name+".pcapng")
	f, err := os.Create(path)
	if err != nil {
		return nil, path, err
	}
	return discardable{f}, path, nil
}

func (f discardable) Discard() error {
	f.Close()
	return os.Remove(f.Name())
}

// A run that fails keeps the capture files that hold packets, finished so
// that readers open them and marked as cut short, and its error names
// them; the path here breaks mid-run as in TestStalledRunEnds.
func TestCaptureOfFailedRun(t *testing.T) {
	p := newPair(t, 1500)
	dir := t.TempDir()
	w := &config.Workload{
		Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 1, WriteSize: 65536, Bytes: 1 << 40,
	}
	p.Scenario.Workloads = []*config.Workload{w}
	var files []string
	opts := kernel.Options{StallTimeout: 2 * time.Second, Capture: func(ct kernel.CaptureTarget) (io.WriteCloser, string, error) {
		w, name, err := createIn(dir, ct.NIC)
		files = append(files, name)
		return w, name, err
	}}
	_, err := kernel.New(opts).Run(context.Background(), engine.RunRequest{
		Scenario: p.Scenario, Workload: w, Naming: p.Naming, Progress: breakPath(t, p),
	})
	if err == nil || !strings.Contains(err.Error(), "nothing received for") {
		t.Fatalf("Run after the path broke: err = %v, want one saying nothing was received", err)
	}
	if len(files) != 2 {
		t.Fatalf("capture files opened: %v, want the sender's and the receiver's", files)
	}
	for _, name := range files {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name the capture file %s: %v", name, err)
		}
		c := readPcapng(t, name)
		if c.Data == 0 {
			t.Errorf("%s holds no data packet from the second before the path broke", name)
		}
		if got := c.Comment; !strings.Contains(got, "the run failed") || !strings.Contains(got, "nothing received for") {
			t.Errorf("%s: statistics comment %q, want it to say the run failed and why", name, got)
		}
	}
}

// A capture file that no source wrote (the run failed before its counter
// started: here the receiver's file cannot be created) is taken back, so
// a failed run leaves no empty file.
func TestCaptureNotStartedIsDiscarded(t *testing.T) {
	p := newPair(t, 1500)
	dir := t.TempDir()
	opts := kernel.Options{Capture: func(ct kernel.CaptureTarget) (io.WriteCloser, string, error) {
		if ct.Direction.String() == "in" {
			return nil, "", errors.New("disk full")
		}
		return createIn(dir, ct.NIC)
	}}
	w := &config.Workload{
		Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 1, WriteSize: 65536, Bytes: 1_000_000,
	}
	p.Scenario.Workloads = []*config.Workload{w}
	_, err := kernel.New(opts).Run(context.Background(), engine.RunRequest{Scenario: p.Scenario, Workload: w, Naming: p.Naming})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Run = %v, want the capture file's error", err)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Errorf("the failed run left %v in the capture directory, want nothing", left)
	}
}

// CaptureMaxBytes caps each file: the packets after the cap are counted
// (captures[].cut) but not written, captures[].frames is what the file
// holds, and the file's statistics block says how many it left out.
func TestCaptureMax(t *testing.T) {
	p := newPair(t, 1500)
	p.setFeatures(t, "tx", "tx0", map[string]bool{featSG: true, featTSO: false, featGSO: false})
	dir := t.TempDir()
	const max = 16 << 10
	opts := kernel.Options{CaptureMaxBytes: max, Capture: func(ct kernel.CaptureTarget) (io.WriteCloser, string, error) {
		return createIn(dir, ct.NIC)
	}}
	res := runWorkload(t, p, &config.Workload{
		Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 1, WriteSize: 65536, Bytes: 20_000_000,
	}, opts)
	if len(res.Captures) != 2 {
		t.Fatalf("captures %+v, want the sender's and the receiver's", res.Captures)
	}
	for _, f := range res.Captures {
		c := readPcapng(t, f.File)
		st, err := os.Stat(f.File)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d frames in %d bytes, %d cut; comment %q", f.File, c.Frames, st.Size(), f.Cut, c.Comment)
		if f.Cut == 0 || c.Frames != f.Frames || st.Size() > max+1024 {
			t.Errorf("%s: %d frames in the file (captures says %d), %d cut, %d bytes: want it cut at %d bytes and the count to match", f.File, c.Frames, f.Frames, f.Cut, st.Size(), max)
		}
		if want := fmt.Sprintf("the last %d of the", f.Cut); !strings.Contains(c.Comment, want) {
			t.Errorf("%s: statistics comment %q, want it to say %q", f.File, c.Comment, want)
		}
	}
}
