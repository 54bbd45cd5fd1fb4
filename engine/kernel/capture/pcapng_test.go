package capture

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// The file reads back with pcapgo's reader: the interface as described,
// every frame with its timestamp, captured bytes and whole length, and
// the ring's counters as interface statistics.
func TestPcapngReadsBack(t *testing.T) {
	var file bytes.Buffer
	p, err := NewPcapng(&file, "tx0", "tsolab nic tx0 in tsl.lab.tx", Outgoing, "AF_PACKET TPACKET_V3 ring")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1700000000, 123456789)
	type pkt struct {
		TS      time.Time
		Data    []byte
		WireLen int
	}
	want := []pkt{
		{start.Add(time.Millisecond), frame(false, 40000, 5201, 32), 14 + 20 + 32 + 65160},
		{start.Add(2 * time.Millisecond), frame(true, 40000, 5201, 32), 14 + 40 + 32 + 1448},
	}
	for _, f := range want {
		// The ring reuses its slot after Frame returns: scribble over
		// the caller's buffer to show the file kept its own copy.
		data := append([]byte(nil), f.Data...)
		if err := p.Frame(f.TS, data, f.WireLen); err != nil {
			t.Fatal(err)
		}
		for i := range data {
			data[i] = 0xff
		}
	}
	end := start.Add(time.Second)
	if err := p.Finish(5, 3, start, end, ""); err != nil {
		t.Fatal(err)
	}

	r, err := pcapgo.NewNgReader(&file, pcapgo.NgReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []pkt
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ci.CaptureLength != len(data) || ci.InterfaceIndex != 0 {
			t.Errorf("capture info %+v for %d bytes, want the data's length on interface 0", ci, len(data))
		}
		got = append(got, pkt{ci.Timestamp, append([]byte(nil), data...), ci.Length})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames read back (-want +got):\n%s", diff)
	}
	if n := r.NInterfaces(); n != 1 {
		t.Fatalf("%d interfaces, want 1", n)
	}
	intf, err := r.Interface(0)
	if err != nil {
		t.Fatal(err)
	}
	if intf.Name != "tx0" || intf.LinkType != layers.LinkTypeEthernet || intf.SnapLength != Snaplen || intf.Filter != "outbound and tcp" {
		t.Errorf("interface = %+v, want tx0, Ethernet, snaplen %d, filter outbound and tcp", intf, Snaplen)
	}
	wantStats := pcapgo.NgInterfaceStatistics{LastUpdate: end, StartTime: start, EndTime: end, PacketsReceived: 5, PacketsDropped: 3}
	if diff := cmp.Diff(wantStats, intf.Statistics); diff != "" {
		t.Errorf("interface statistics (-want +got):\n%s", diff)
	}
}

// A run that failed says so, and why, in the statistics block's comment,
// which tshark and capinfos show.
func TestPcapngFailedRun(t *testing.T) {
	var file bytes.Buffer
	p, err := NewPcapng(&file, "tx0", "tsolab nic tx0", Outgoing, "eBPF")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1700000000, 0)
	if err := p.Finish(0, 0, start, start.Add(time.Second), "nothing received for 10s"); err != nil {
		t.Fatal(err)
	}
	r, err := pcapgo.NewNgReader(&file, pcapgo.NgReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.ReadPacketData(); !errors.Is(err, io.EOF) {
		t.Fatalf("reading an empty capture: %v, want EOF", err)
	}
	intf, err := r.Interface(0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "tsolab: the run failed, so this capture ends early: nothing received for 10s"; intf.Statistics.Comment != want {
		t.Errorf("statistics comment %q, want %q", intf.Statistics.Comment, want)
	}
}

// A size cap keeps every frame after the first that does not fit out of
// the file, and the statistics block says how many.
func TestPcapngLimit(t *testing.T) {
	var file bytes.Buffer
	p, err := NewPcapng(&file, "rx0", "tsolab nic rx0", Incoming, "AF_PACKET TPACKET_V3 ring")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1700000000, 0)
	f := frame(true, 40000, 5201, 32)
	// Room for the headers and two frames, not three.
	p.SetLimit(int64(p.buf.Buffered()) + 2*epbSize(len(f)) + epbSize(len(f))/2)
	for i := range 5 {
		if err := p.Frame(start.Add(time.Duration(i)*time.Millisecond), f, len(f)+1448); err != nil {
			t.Fatal(err)
		}
	}
	if p.Cut() != 3 {
		t.Errorf("Cut = %d, want 3", p.Cut())
	}
	if err := p.Finish(5, 0, start, start.Add(time.Second), ""); err != nil {
		t.Fatal(err)
	}
	r, err := pcapgo.NewNgReader(&file, pcapgo.NgReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	intf, err := r.Interface(0)
	if err != nil {
		t.Fatal(err)
	}
	want := "the last 3 of the 5 packets seen are not in it"
	if n != 2 || !strings.Contains(intf.Statistics.Comment, want) {
		t.Errorf("%d frames, statistics comment %q; want 2 and one saying %q", n, intf.Statistics.Comment, want)
	}
}

// Frame writes, byte for byte, the enhanced packet blocks pcapgo's
// NgWriter writes for the same frames (tshark reads the files in
// tests, and earlier files were NgWriter's), with every padding.
func TestPcapngFramesAsNgWriter(t *testing.T) {
	var file bytes.Buffer
	p, err := NewPcapng(&file, "rx0", "tsolab nic rx0", Incoming, "eBPF")
	if err != nil {
		t.Fatal(err)
	}
	var ref bytes.Buffer
	refBuf := bufio.NewWriterSize(&ref, pcapngBuffer)
	w, err := pcapgo.NewNgWriterInterface(refBuf, ngInterface("rx0", "tsolab nic rx0", Incoming, "eBPF"), ngOptions())
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1700000000, 987654321)
	for i, n := range []int{54, 66, 67, 68, 69, 1, 0, 134} {
		data := bytes.Repeat([]byte{byte(i + 1)}, n)
		wireLen := n + 1448*i
		ts = ts.Add(time.Duration(i) * time.Microsecond)
		if err := p.Frame(ts, data, wireLen); err != nil {
			t.Fatal(err)
		}
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: n, Length: wireLen}, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.buf.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file.Bytes(), ref.Bytes()) {
		t.Errorf("file of %d bytes differs from NgWriter's of %d:\n%x\n%x", file.Len(), ref.Len(), file.Bytes(), ref.Bytes())
	}
	if want := int64(ref.Len()); p.size != want {
		t.Errorf("size %d, want the %d bytes written", p.size, want)
	}
}
