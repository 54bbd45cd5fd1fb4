#!/usr/bin/env bash
# Count, around one run of CMD on the namespaces tsl.LAB.tx and tsl.LAB.rx
# (iperf-compare -setup), what reordering costs, per GB of the run's
# throughput (CMD prints throughput_bps=, or is iperf3 -J): the sender's
# retransmitted segments (Tcp RetransSegs), its fast retransmits
# (TcpExt TCPFastRetrans) and the DSACKs it got back (TCPDSACKRecv: the
# receiver had the data already, so the retransmit was spurious), and
# the receiver's segments queued out of order (TCPOFOQueue) and
# duplicates it received (DelayedACKLost). With TSO off on veth, TCP's
# segments leave from two CPUs (the sender's write, and the transmit an
# ACK releases in the softirq of the CPU that processed it) into two
# per-CPU backlogs (netif_rx), and can arrive out of order.
#
#   bench/iperf-compare/reorder.sh DURATION_S LAB CMD...
#
# e.g. reorder.sh 3 L ./cloop tsl.L.tx tsl.L.rx 10.203.0.2 5301 3 131072
# (not under a setsid that forks, e.g. inside $(...) of prio.sh: run the
# whole batch under it)
# (DURATION_S is the run's length, for the GB.) Needs root.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 DURATION_S LAB CMD..." >&2; exit 2; }
dur=$1 lab=$2
shift 2
get() { # $1 = tx|rx, $2 = counter name in /proc/net/snmp or netstat (Tcp, TcpExt)
	ip netns exec "tsl.$lab.$1" cat /proc/net/snmp /proc/net/netstat | awk -v k="$2" '
		/^(Tcp|TcpExt):/ { if (!($1 in hdr)) { hdr[$1] = 1; for (i = 2; i <= NF; i++) n[$1, i] = $i; next }
		                   for (i = 2; i <= NF; i++) if (n[$1, i] == k) print $i; delete hdr[$1] }'
}
snap() { echo "$(get tx RetransSegs) $(get tx TCPFastRetrans) $(get tx TCPDSACKRecv) $(get rx TCPOFOQueue) $(get rx DelayedACKLost)"; }
read -r -a a <<<"$(snap)"
out=$("$@" 2>/dev/null)
read -r -a b <<<"$(snap)"
bps=$(echo "$out" | sed -n 's/.*throughput_bps=\([0-9]*\).*/\1/p')
[ -n "$bps" ] || bps=$(echo "$out" | python3 -c 'import json, sys; print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]))')
awk -v bps="$bps" -v dur="$dur" -v r="$((b[0] - a[0]))" -v f="$((b[1] - a[1]))" -v d="$((b[2] - a[2]))" -v o="$((b[3] - a[3]))" -v u="$((b[4] - a[4]))" 'BEGIN {
	gb = bps * dur / 8e9
	printf "%.2f Gb/s; per GB: retransmitted %.0f, fast retransmits %.0f, DSACKs received %.0f; receiver: out of order %.0f, duplicates %.0f\n", bps / 1e9, r / gb, f / gb, d / gb, o / gb, u / gb }'
