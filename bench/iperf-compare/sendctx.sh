#!/usr/bin/env bash
# Which threads put a run's data on the sender's NIC: record
# net:net_dev_xmit on every CPU (perf record -a) for SECONDS, starting 1 s
# into a run of CMD (iperf3 -c ... or the iperf-compare driver, on the
# namespaces iperf-compare -setup makes), and print per thread (comm,
# tid, CPU) the data packets and MB it handed to tx0 (packets over 200
# bytes; the ACKs on rx0 are left out), and the share of the data that
# left from threads other than the one that sent most (the sender). A
# segment an ACK frees is sent by whoever processes the ACK unless the
# sender's socket is owned (the sender inside write(): the ACK waits in
# the socket's backlog and release_sock sends from the sender's call);
# on veth each CPU's transmits go to its own backlog (netif_rx), so a
# flow sent from two CPUs can arrive out of order (reorder.sh counts
# what that costs). engine/kernel's doc.go, "Session 13, against iperf3
# under CUBIC", has what it showed.
#
#   bench/iperf-compare/sendctx.sh [-d SECONDS] CMD...
#
# e.g. (TSO on, CUBIC, client on CPU 0 and server on CPU 1 as a quiet
# 2-core machine places them):
#   sendctx.sh ip netns exec tsl.L.tx iperf3 -c 10.203.0.2 -t 3 -l 128K -C cubic -A 0,1
#   sendctx.sh ./iperf-compare -lab L -duration 3s -cc cubic -capture=false
# iperf3 -C applies the congestion control after connect(): on a
# namespace whose default is BBR the socket stays paced whatever -C
# says, so set the namespaces' default first (run.sh does: -a CC where
# allowed, reno otherwise), e.g. ip netns exec tsl.L.tx sysctl -w
# net.ipv4.tcp_congestion_control=reno.
# Needs root (perf).
set -euo pipefail
. "$(dirname "$0")/cmdline.sh"
duration_and_command 1.5 "$@"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(sleep 1 && perf record -q -a -e net:net_dev_xmit -o "$work/perf.data" sleep "$DUR" 2>/dev/null) &
rec=$!
"${CMD[@]}" >"$work/out" 2>/dev/null
wait "$rec"
grep -o 'throughput_bps=[0-9]*\|"retransmits":[^,]*' "$work/out" | tail -1 | tr '\n' ' '
echo
perf script -i "$work/perf.data" -F comm,tid,cpu,trace 2>/dev/null | awk '
	{ dev = ""; len = 0
	  for (i = 1; i <= NF; i++) { if ($i ~ /^dev=/) dev = substr($i, 5); if ($i ~ /^len=/) len = substr($i, 5) + 0 }
	  if (dev != "tx0" || len <= 200) next
	  k = $1 " " $2 " " $3; n[k]++; b[k] += len; t += len; bt[$2] += len }
	END {
	  for (k in n) printf "%8d packets %9.1f MB  %s\n", n[k], b[k] / 1e6, k
	  for (id in bt) if (bt[id] > top) top = bt[id]
	  if (t > 0) printf "data not sent by the thread that sent most: %.1f%% of %.1f MB\n", 100 * (t - top) / t, t / 1e6
	}' | sort -k1,1nr
