package sim

// skb is one buffer of the write queue (struct sk_buff with its
// tcp_skb_cb): a run of payload bytes [seq, end) that leaves as one send
// unit unless tso_fragment/tcp_fragment cuts it first.
type skb struct {
	seq, end int64 // TCP_SKB_CB(skb)->seq / end_seq, bytes of the stream
	pcount   int64 // tcp_skb_pcount: segments it becomes on the wire (tcp_set_skb_tso_segs)
	sentAt   int64 // when it was last handed to the NIC, ns (TCP_SKB_CB(skb)->when)
	linear   bool  // payload in the linear area (no SG, select_size): never a GSO frame
	// head is the payload bytes at the buffer's start in its linear
	// area, with the headers (skb_headlen less the headers); the rest is
	// in page frags from pgOff on (skbLayout). Unused when linear.
	head    uint16
	pgOff   uint16 // offset in its page of the first paged byte (TCP_OFF when it was copied)
	fin     bool   // TCPCB_FLAG_FIN: the last buffer of the stream
	retrans bool   // sent more than once (Karn's rule: no RTT sample)
}

func (b *skb) len() int64 { return b.end - b.seq }

// writeQueue is sk_write_queue: sent-but-unacked buffers from head to
// sendHead, unsent ones after. Indices are into q; head moves as ACKs
// arrive and the slice is compacted now and then, so steady state does not
// allocate.
type writeQueue struct {
	q        []skb
	head     int // first unacknowledged buffer (tcp_write_queue_head)
	sendHead int // first unsent buffer (sk_send_head); == len(q) when all is sent
}

func (w *writeQueue) unsent() bool      { return w.sendHead < len(w.q) }
func (w *writeQueue) isLast(i int) bool { return i == len(w.q)-1 }
func (w *writeQueue) tail() *skb {
	if len(w.q) == w.head {
		return nil
	}
	return &w.q[len(w.q)-1]
}

// insertAfter puts b right after index i (tcp_insert_write_queue_after).
func (w *writeQueue) insertAfter(i int, b skb) {
	w.q = append(w.q, skb{})
	copy(w.q[i+2:], w.q[i+1:])
	w.q[i+1] = b
	if w.sendHead > i {
		w.sendHead++
	}
}

// compact drops acknowledged buffers from the front of the slice.
func (w *writeQueue) compact() {
	if w.head < 256 || w.head < len(w.q)/2 {
		return
	}
	n := copy(w.q, w.q[w.head:])
	w.q = w.q[:n]
	w.sendHead -= w.head
	w.head = 0
}
