package capture

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Pcapng is a Sink that writes a ring's frames to a pcapng file: one
// section and one Ethernet interface with the ring's snaplen and filter
// (written by github.com/gopacket/gopacket/pcapgo), an enhanced packet
// block per frame (written here, as pcapgo would) (the captured headers, and the packet's whole length as its
// original length), and when finished an interface statistics block with
// what the kernel offered the ring and what it dropped.
type Pcapng struct {
	buf *bufio.Writer
	w   *pcapgo.NgWriter
	// limit is the file size after which frames are counted but no
	// longer written (SetLimit; 0 = none); size is the size so far.
	limit, size int64
	cut         int64 // frames not written because of limit
}

// SetLimit caps the file at about max bytes: once a frame would take it
// beyond, that frame and every later one is counted (Cut) but not
// written, and the statistics block says so. 0 means no cap.
func (p *Pcapng) SetLimit(max int64) { p.limit = max }

// Cut is how many frames the size cap kept out of the file.
func (p *Pcapng) Cut() int64 { return p.cut }

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
	nw, err := pcapgo.NewNgWriterInterface(buf, ngInterface(ifname, comment, dir, source), ngOptions())
	if err != nil {
		return nil, fmt.Errorf("pcapng header: %w", err)
	}
	return &Pcapng{buf: buf, w: nw, size: int64(buf.Buffered())}, nil
}

// ngInterface is the file's interface description block.
func ngInterface(ifname, comment string, dir Direction, source string) pcapgo.NgInterface {
	return pcapgo.NgInterface{
		Name:                ifname,
		Comment:             comment,
		Description:         fmt.Sprintf("%s: %s, headers only (at most %d bytes), %s", ifname, dir.pcapFilter(), Snaplen, source),
		Filter:              dir.pcapFilter(),
		OS:                  runtime.GOOS,
		LinkType:            layers.LinkTypeEthernet,
		SnapLength:          Snaplen,
		TimestampResolution: 9,
	}
}

// ngOptions is the file's section header.
func ngOptions() pcapgo.NgWriterOptions {
	return pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{
		Hardware:    runtime.GOARCH,
		OS:          runtime.GOOS,
		Application: "tsolab",
	}}
}

// epbSize is the size of the enhanced packet block NgWriter writes for
// a frame of n captured bytes and no options: 28 bytes of fields, the
// data padded to 32 bits, the 4-byte trailer.
func epbSize(n int) int64 { return int64(28 + (n+3)&^3 + 4) }

// Frame writes one frame: an enhanced packet block on interface 0 with
// no options, byte for byte what NgWriter's WritePacket writes, appended
// straight to the buffer (NgWriter's three writes and its checks were
// most of a receiver capture's reader time at a million frames a
// second). The block holds its own copy of data.
func (p *Pcapng) Frame(ts time.Time, data []byte, wireLen int) error {
	if wireLen < len(data) {
		wireLen = len(data)
	}
	n := epbSize(len(data))
	if p.cut > 0 || p.limit > 0 && p.size+n > p.limit {
		p.cut++
		return nil
	}
	p.size += n
	if p.buf.Available() < int(n) {
		if err := p.buf.Flush(); err != nil {
			return err
		}
	}
	le := binary.LittleEndian
	ns := uint64(ts.UnixNano())
	b := p.buf.AvailableBuffer()
	b = le.AppendUint32(b, blockEnhancedPacket)
	b = le.AppendUint32(b, uint32(n))
	b = le.AppendUint32(b, 0) // interface 0
	b = le.AppendUint32(b, uint32(ns>>32))
	b = le.AppendUint32(b, uint32(ns))
	b = le.AppendUint32(b, uint32(len(data)))
	b = le.AppendUint32(b, uint32(wireLen))
	b = append(b, data...)
	var pad [3]byte
	b = append(b, pad[:-len(data)&3]...)
	b = le.AppendUint32(b, uint32(n))
	_, err := p.buf.Write(b)
	return err
}

// blockEnhancedPacket is the pcapng block type of a packet.
const blockEnhancedPacket = 6

// Finish writes the interface statistics of the stopped source (
// isb_ifrecv: what it was offered, drops included, a ring's tp_packets;
// isb_ifdrop: what it could not keep, tp_drops) and flushes. It does not
// close the underlying writer. failed, when not "", says why the run
// ended early; it becomes the block's comment (tshark -r FILE and
// capinfos show it).
func (p *Pcapng) Finish(seen, dropped int64, start, end time.Time, failed string) error {
	var notes []string
	if p.cut > 0 {
		notes = append(notes, fmt.Sprintf("tsolab: the file reached its size cap of %d bytes (-capture-max): the last %d of the %d packets seen are not in it", p.limit, p.cut, seen-dropped))
	}
	if failed != "" {
		notes = append(notes, "tsolab: the run failed, so this capture ends early: "+failed)
	}
	comment := strings.Join(notes, "; ")
	// pcapgo's NgWriter writes no comment in a statistics block, so the
	// block is written here, after what NgWriter buffered.
	err := p.w.Flush()
	if err == nil {
		_, err = p.buf.Write(statisticsBlock(uint64(seen), uint64(dropped), start, end, comment, p.cut))
	}
	if err == nil {
		err = p.buf.Flush()
	}
	if err != nil {
		return fmt.Errorf("pcapng: %w", err)
	}
	return nil
}

// statisticsBlock encodes a pcapng Interface Statistics Block for
// interface 0 (RFC draft-ietf-opsawg-pcapng, section 4.6): little-endian
// as NgWriter writes the section, timestamps in nanoseconds as the
// interface's if_tsresol says.
func statisticsBlock(recv, drop uint64, start, end time.Time, comment string, cut int64) []byte {
	le := binary.LittleEndian
	ns := func(t time.Time) []byte {
		v := uint64(t.UnixNano())
		return le.AppendUint32(le.AppendUint32(nil, uint32(v>>32)), uint32(v))
	}
	var opts []byte
	option := func(code uint16, value []byte) {
		opts = le.AppendUint16(opts, code)
		opts = le.AppendUint16(opts, uint16(len(value)))
		opts = append(opts, value...)
		for len(opts)%4 != 0 {
			opts = append(opts, 0)
		}
	}
	if comment != "" {
		option(1, []byte(comment)) // opt_comment
	}
	option(2, ns(start))                  // isb_starttime
	option(3, ns(end))                    // isb_endtime
	option(4, le.AppendUint64(nil, recv)) // isb_ifrecv
	option(5, le.AppendUint64(nil, drop)) // isb_ifdrop
	option(0, nil)                        // opt_endofopt
	total := uint32(4 + 4 + 4 + 8 + len(opts) + 4)
	b := le.AppendUint32(nil, 5) // block type: Interface Statistics
	b = le.AppendUint32(b, total)
	b = le.AppendUint32(b, 0) // interface 0
	b = append(b, ns(end)...)
	b = append(b, opts...)
	return le.AppendUint32(b, total)
}
