package nic

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/vishvananda/netlink"
)

// shaping is a NIC's egress shaping: a tbf qdisc for a rate alone, a
// netem qdisc (with its own rate) when there is a delay.
type shaping struct {
	rate  uint64        // bits/s; 0 = none
	queue int64         // bytes queued at most; 0 = the default
	delay time.Duration // one-way delay; 0 = none
}

func (s shaping) none() bool { return s.rate == 0 && s.delay == 0 }

// tbfHZ is the timer frequency tbf's burst is sized for (CONFIG_HZ=250 is
// the slowest common one; a faster kernel just gets a deeper bucket).
const tbfHZ = 250

// minBurst keeps the bucket deep enough for one 64 KiB TSO/GSO packet
// with its headers counted per segment (qdisc_pkt_len), so tbf never cuts
// super-packets into segments itself (tbf_segment) and the sender's NIC
// sees what TCP built.
const minBurst = 128 << 10

// burst is the bucket size in bytes: a timer tick's worth at the rate, at
// least minBurst.
func (s shaping) burst() uint32 {
	b := s.rate / 8 / tbfHZ
	if b < minBurst {
		b = minBurst
	}
	if b > 1<<31 {
		b = 1 << 31
	}
	return uint32(b)
}

// limit is the queue in bytes: the declared queue, or the bucket plus
// 50 ms at the rate.
func (s shaping) limit() uint32 {
	if s.queue > 0 {
		return uint32(min(s.queue, 1<<31))
	}
	return uint32(min(uint64(s.burst())+s.rate/8/20, 1<<31))
}

// qdisc is the root qdisc that gives s on link index.
func (s shaping) qdisc(index, mtu int) netlink.Qdisc {
	attrs := netlink.QdiscAttrs{LinkIndex: index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
	if s.delay > 0 {
		if mtu <= 0 {
			mtu = 1500
		}
		// netem's limit counts packets.
		pkts := uint32(1000)
		if s.queue > 0 {
			pkts = uint32(max(s.queue/int64(mtu), 1))
		}
		return netlink.NewNetem(attrs, netlink.NetemQdiscAttrs{
			Latency: uint32(s.delay / time.Microsecond),
			Limit:   pkts,
			Rate64:  s.rate / 8,
		})
	}
	rate := s.rate / 8
	return &netlink.Tbf{
		QdiscAttrs: attrs,
		Rate:       rate,
		Limit:      s.limit(),
		Buffer:     netlink.Xmittime(rate, s.burst()),
	}
}

// readShaping returns the shaping the link's root qdisc gives: a tbf or
// netem qdisc; anything else is no shaping.
func readShaping(c *nsConn, l netlink.Link) (shaping, netlink.Qdisc, error) {
	qs, err := c.nl.QdiscList(l)
	if err != nil {
		return shaping{}, nil, fmt.Errorf("list qdiscs: %w", err)
	}
	for _, q := range qs {
		if q.Attrs().Parent != netlink.HANDLE_ROOT {
			continue
		}
		switch q := q.(type) {
		case *netlink.Tbf:
			return shaping{rate: q.Rate * 8, queue: int64(q.Limit)}, q, nil
		case *netlink.Netem:
			// netem reports its latency in psched ticks.
			us := math.Round(float64(q.Latency) / netlink.TickInUsec())
			return shaping{rate: q.Rate64 * 8, delay: time.Duration(us) * time.Microsecond}, q, nil
		}
	}
	return shaping{}, nil, nil
}

// applyShaping makes the root qdisc give want: replaced when it differs,
// removed (back to the device's default) when want is none and the root
// is a tbf or netem qdisc.
func applyShaping(c *nsConn, l netlink.Link, want shaping, queueManaged bool) error {
	have, q, err := readShaping(c, l)
	if err != nil {
		return err
	}
	if want.none() {
		if q == nil {
			return nil
		}
		if err := c.nl.QdiscDel(q); err != nil {
			return fmt.Errorf("remove %s qdisc: %w", q.Type(), err)
		}
		return nil
	}
	wantQ := want.qdisc(l.Attrs().Index, l.Attrs().MTU)
	if q != nil && q.Type() == wantQ.Type() && have.rate == want.rate && have.delay == want.delay &&
		(!queueManaged || have.queue == int64(want.limit())) {
		return nil
	}
	if err := c.nl.QdiscReplace(wantQ); err != nil {
		return fmt.Errorf("set %s qdisc (rate %s bit/s): %w", wantQ.Type(), strconv.FormatUint(want.rate, 10), err)
	}
	return nil
}
