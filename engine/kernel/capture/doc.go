// Package capture counts the TCP send units a sender hands to its NIC,
// from an AF_PACKET TPACKET_V3 ring (github.com/gopacket/gopacket/afpacket,
// pure Go) bound to that NIC.
//
// It owns the ring, its classic-BPF filter (outgoing IPv4/IPv6 TCP only,
// truncated to the headers), the parsing of headers into payload sizes and
// the summaries built from them (send units, payload histogram, data
// packets cut to MSS, single-MSS share, per-second means) and the ring's
// drop count. It never sends anything, never changes the interface and
// keeps no payload bytes.
//
// What it sees: TSO super-packets whole (the tap runs in
// dev_hard_start_xmit before the device cuts them), software-GSO skbs
// already segmented (validate_xmit_skb cut them before the tap).
package capture
