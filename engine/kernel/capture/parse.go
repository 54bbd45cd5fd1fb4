package capture

import "encoding/binary"

// segment is what one captured frame says about a TCP packet.
type segment struct {
	SrcPort, DstPort uint16
	Payload          int  // TCP payload bytes of the whole packet (before truncation)
	OK               bool // the headers parsed
}

// parseFrame reads an Ethernet frame truncated to the headers; wireLen is
// the length of the whole packet (tp_len), so payload counts bytes the
// snapshot did not keep. TSO and GSO super-packets are sized by wireLen,
// not by the IP length field (0 for BIG TCP).
func parseFrame(data []byte, wireLen int) segment {
	if len(data) < 14 {
		return segment{}
	}
	var ipLen, proto int
	l3 := data[14:]
	switch binary.BigEndian.Uint16(data[12:14]) {
	case 0x0800:
		if len(l3) < 20 {
			return segment{}
		}
		ipLen = int(l3[0]&0x0f) * 4
		proto = int(l3[9])
	case 0x86dd:
		if len(l3) < 40 {
			return segment{}
		}
		ipLen = 40
		proto = int(l3[6])
	default:
		return segment{}
	}
	if proto != 6 || len(l3) < ipLen+20 {
		return segment{}
	}
	tcp := l3[ipLen:]
	doff := int(tcp[12]>>4) * 4
	payload := wireLen - 14 - ipLen - doff
	if doff < 20 || payload < 0 {
		return segment{}
	}
	return segment{
		SrcPort: binary.BigEndian.Uint16(tcp[0:2]),
		DstPort: binary.BigEndian.Uint16(tcp[2:4]),
		Payload: payload,
		OK:      true,
	}
}
