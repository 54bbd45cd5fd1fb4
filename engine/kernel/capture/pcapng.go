package capture

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Pcapng is a Sink that writes a ring's frames to a pcapng file
// (github.com/gopacket/gopacket/pcapgo): one section, one Ethernet
// interface with the ring's snaplen and filter, an enhanced packet block
// per frame (the captured headers, and the packet's whole length as its
// original length), and when finished an interface statistics block with
// what the kernel offered the ring and what it dropped.
type Pcapng struct {
	buf *bufio.Writer
	w   *pcapgo.NgWriter
}

// pcapngBuffer batches the file's writes: a frame is ~160 bytes and a
// TSO-off stream on veth stores several hundred thousand a second.
const pcapngBuffer = 1 << 20

// NewPcapng writes the section and interface headers to w's buffer and
// returns the sink; nothing reaches w before Finish (or a megabyte of
// frames). ifname names the interface in the file (Wireshark shows it),
// comment says where it was (lab NIC, namespace), source what saw the
// packets (the AF_PACKET ring, the eBPF counter).
func NewPcapng(w io.Writer, ifname, comment string, dir Direction, source string) (*Pcapng, error) {
	// NgWriter keeps a *bufio.Writer at least 4096 bytes large as it is.
	buf := bufio.NewWriterSize(w, pcapngBuffer)
	nw, err := pcapgo.NewNgWriterInterface(buf, pcapgo.NgInterface{
		Name:                ifname,
		Comment:             comment,
		Description:         fmt.Sprintf("%s: %s, headers only (at most %d bytes), %s", ifname, dir.pcapFilter(), Snaplen, source),
		Filter:              dir.pcapFilter(),
		OS:                  runtime.GOOS,
		LinkType:            layers.LinkTypeEthernet,
		SnapLength:          Snaplen,
		TimestampResolution: 9,
	}, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{
		Hardware:    runtime.GOARCH,
		OS:          runtime.GOOS,
		Application: "tsolab",
	}})
	if err != nil {
		return nil, fmt.Errorf("pcapng header: %w", err)
	}
	return &Pcapng{buf: buf, w: nw}, nil
}

// Frame writes one frame; NgWriter copies data into its buffer before it
// returns.
func (p *Pcapng) Frame(ts time.Time, data []byte, wireLen int) error {
	if wireLen < len(data) {
		wireLen = len(data)
	}
	return p.w.WritePacket(gopacket.CaptureInfo{
		Timestamp: ts, CaptureLength: len(data), Length: wireLen,
	}, data)
}

// Finish writes the interface statistics of the stopped source (
// isb_ifrecv: what it was offered, drops included, a ring's tp_packets;
// isb_ifdrop: what it could not keep, tp_drops) and flushes. It does not
// close the underlying writer.
func (p *Pcapng) Finish(seen, dropped int64, start, end time.Time) error {
	err := p.w.WriteInterfaceStats(0, pcapgo.NgInterfaceStatistics{
		LastUpdate:      end,
		StartTime:       start,
		EndTime:         end,
		PacketsReceived: uint64(seen),
		PacketsDropped:  uint64(dropped),
	})
	if err == nil {
		err = p.w.Flush()
	}
	if err == nil {
		err = p.buf.Flush()
	}
	if err != nil {
		return fmt.Errorf("pcapng: %w", err)
	}
	return nil
}
