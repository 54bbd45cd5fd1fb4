// Package capture counts the TCP send units a sender hands to its NIC,
// from an AF_PACKET TPACKET_V3 ring (github.com/gopacket/gopacket/afpacket,
// pure Go) bound to that NIC, and can hand every frame it stores to a Sink
// such as a pcapng file (Pcapng, github.com/gopacket/gopacket/pcapgo).
//
// It owns the ring, its classic-BPF filter (IPv4/IPv6 TCP in one
// direction, outgoing for a sender, incoming for a receiver, truncated to
// the headers), the parsing of headers into payload sizes and the
// summaries built from them (send units, payload histogram, data packets
// cut to MSS, single-MSS share, per-second means), the ring's drop count
// and the pcapng encoding of its frames. It never sends anything, never
// changes the interface, keeps no payload bytes (the ring holds Snaplen
// bytes of headers) and does not choose where files go: the caller hands
// NewPcapng a writer.
//
// What it sees: TSO super-packets whole (the tap runs in
// dev_hard_start_xmit before the device cuts them), software-GSO skbs
// already segmented (validate_xmit_skb cut them before the tap). An
// Incoming ring sees what the device hands up (after GRO when it
// aggregates).
package capture
