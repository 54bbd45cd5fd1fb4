#!/usr/bin/env bash
# Compare tsolab's kernel-engine stream with iperf3 on the same two
# namespaces joined by a veth pair (MTU 1500), TSO on and off, and the
# cost of tsolab's capture. Prints the medians and the ratios.
#
#   bench/iperf-compare/run.sh [-d SECONDS] [-r ROUNDS] [-P CONNECTIONS]
#
# Targets (issue 3): tsolab >= 95% of iperf3, capture costs <= 5%,
# capture_loss < 1% of packets at TSO off. Needs root.
set -euo pipefail

DUR=3 ROUNDS=3 CONNS=1
while getopts "d:r:P:" o; do
	case $o in
	d) DUR=$OPTARG ;; r) ROUNDS=$OPTARG ;; P) CONNS=$OPTARG ;;
	*) echo "usage: $0 [-d seconds] [-r rounds] [-P connections]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "run.sh needs root (network namespaces)" >&2; exit 1; }
command -v iperf3 >/dev/null || apt-get install -y iperf3 >/dev/null || { apt-get update >/dev/null && apt-get install -y iperf3 >/dev/null; }

LAB=ipcmp$$
TX=tsl.$LAB.tx RX=tsl.$LAB.rx
TXA=10.203.0.1 RXA=10.203.0.2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cleanup() {
	[ -n "${IPERF_PID:-}" ] && kill "$IPERF_PID" 2>/dev/null || true
	ip netns del "$TX" 2>/dev/null || true
	ip netns del "$RX" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$TX"
ip netns add "$RX"
ip -n "$TX" link add tx0 mtu 1500 type veth peer name rx0 netns "$RX" mtu 1500
ip -n "$TX" addr add $TXA/24 dev tx0
ip -n "$RX" addr add $RXA/24 dev rx0
for ns in "$TX" "$RX"; do ip -n "$ns" link set lo up; done
ip -n "$TX" link set tx0 up
ip -n "$RX" link set rx0 up

(cd "$here/../.." && go build -o "$work/iperf-compare" ./bench/iperf-compare)
ip netns exec "$RX" iperf3 -s -B $RXA >/dev/null 2>&1 &
IPERF_PID=$!
# Wait for the iperf3 server's listening socket (an event with a deadline).
for _ in $(seq 100); do
	ip netns exec "$RX" ss -ltn 2>/dev/null | grep -q "$RXA:5201" && break
	sleep 0.05
done

iperf() { # prints bits/s received
	ip netns exec "$TX" iperf3 -c $RXA -t "$DUR" -l 128K -P "$CONNS" -J >"$work/ip.json"
	python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' "$work/ip.json"
}
tsolab() { # $1 = capture true|false; prints the driver's line
	"$work/iperf-compare" -lab "$LAB" -duration "${DUR}s" -write-size 131072 -connections "$CONNS" -capture="$1" 2>>"$work/notes"
}
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf "%-8s %14s %14s %14s %9s %9s %12s\n" tso iperf3_bps tsolab_bps tsolab+cap_bps ratio cap_cost cap_loss
for tso in on off; do
	"$work/iperf-compare" -lab "$LAB" -tso $tso -duration 0.2s -capture=false >/dev/null 2>&1
	: >"$work/i" ; : >"$work/t"; : >"$work/c"; : >"$work/loss"
	for _ in $(seq "$ROUNDS"); do
		iperf >>"$work/i"
		tsolab false | field throughput_bps >>"$work/t"
		line=$(tsolab true)
		echo "$line" | field throughput_bps >>"$work/c"
		loss=$(echo "$line" | field capture_loss) pk=$(echo "$line" | field data_packets)
		echo "$loss $pk" | awk '{printf "%.6f\n", ($2>0)? $1/($1+$2) : 0}' >>"$work/loss"
	done
	i=$(median <"$work/i") t=$(median <"$work/t") c=$(median <"$work/c") l=$(sort -g "$work/loss" | tail -1)
	awk -v tso=$tso -v i="$i" -v t="$t" -v c="$c" -v l="$l" 'BEGIN {
		printf "%-8s %14.0f %14.0f %14.0f %8.1f%% %8.1f%% %11.3f%%\n", tso, i, t, c, 100*t/i, 100*(1-c/t), 100*l }'
done
echo "ratio = tsolab/iperf3 (target >= 95%); cap_cost = 1 - with/without capture (target <= 5%); cap_loss = worst capture_loss/packets (target < 1%)"
[ -s "$work/notes" ] && sort -u "$work/notes" | sed 's/^/  /' || true
