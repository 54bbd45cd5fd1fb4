package capture

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// frame builds a headers-only Ethernet frame: IPv4 (ihl 20) or IPv6, and a
// TCP header of tcpLen bytes.
func frame(ipv6 bool, src, dst uint16, tcpLen int) []byte {
	b := make([]byte, 14)
	if ipv6 {
		binary.BigEndian.PutUint16(b[12:], 0x86dd)
		ip := make([]byte, 40)
		ip[0] = 0x60
		ip[6] = 6
		b = append(b, ip...)
	} else {
		binary.BigEndian.PutUint16(b[12:], 0x0800)
		ip := make([]byte, 20)
		ip[0] = 0x45
		ip[9] = 6
		b = append(b, ip...)
	}
	tcp := make([]byte, tcpLen)
	binary.BigEndian.PutUint16(tcp[0:], src)
	binary.BigEndian.PutUint16(tcp[2:], dst)
	tcp[12] = byte(tcpLen/4) << 4
	return append(b, tcp...)
}

func TestParseFrame(t *testing.T) {
	udp := frame(false, 1, 2, 20)
	udp[14+9] = 17
	tests := []struct {
		name    string
		data    []byte
		wireLen int
		want    segment
	}{
		{"ipv4 with timestamps, one MSS", frame(false, 40000, 5201, 32), 14 + 20 + 32 + 1448, segment{40000, 5201, 1448, true}},
		{"ipv4 TSO super-packet sized by tp_len", frame(false, 1, 2, 32), 14 + 20 + 32 + 65160, segment{1, 2, 65160, true}},
		{"ipv6 pure ACK", frame(true, 5201, 40000, 32), 14 + 40 + 32, segment{5201, 40000, 0, true}},
		{"not TCP", udp, 100, segment{}},
		{"truncated", frame(false, 1, 2, 20)[:30], 100, segment{}},
		{"tp_len shorter than headers", frame(false, 1, 2, 32), 40, segment{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseFrame(tt.data, tt.wireLen)); diff != "" {
				t.Errorf("parseFrame (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name  string
		sizes map[int]int64
		mss   int
		want  Summary
	}{
		{"empty", nil, 1448, Summary{}},
		{
			"TSO off: MSS units and a tail",
			map[int]int64{1448: 9, 500: 1}, 1448,
			Summary{SendUnits: 10, PayloadBytes: 9*1448 + 500,
				DataPackets: 10, SingleMSS: 9, Histogram: []int64{10}},
		},
		{
			"TSO super-packets cut to MSS",
			map[int]int64{3 * 1448: 2, 1449: 1}, 1448,
			Summary{SendUnits: 3, PayloadBytes: 6*1448 + 1449,
				DataPackets: 8, Histogram: []int64{0, 1, 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Summarize(tt.sizes, tt.mss)); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterAssembles(t *testing.T) {
	for _, tt := range []struct {
		dir     Direction
		pktType uint32
	}{{Outgoing, unix.PACKET_OUTGOING}, {Incoming, unix.PACKET_HOST}} {
		t.Run(tt.dir.String(), func(t *testing.T) {
			prog, err := filter(tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(prog), 11; got != want {
				t.Errorf("filter has %d instructions, want %d", got, want)
			}
			if got := prog[1].K; got != tt.pktType {
				t.Errorf("filter keeps packet type %d, want %d", got, tt.pktType)
			}
			if last := prog[len(prog)-2]; last.K != Snaplen {
				t.Errorf("keep returns %d bytes, want the snaplen %d", last.K, Snaplen)
			}
		})
	}
}
