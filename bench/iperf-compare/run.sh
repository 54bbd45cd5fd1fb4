#!/usr/bin/env bash
# Compare tsolab's kernel-engine stream with iperf3 on the same two
# namespaces joined by a veth pair (MTU 1500), TSO on and off, and the
# cost of tsolab's send-unit counters: the default one (eBPF at
# TCX egress, "+count") and the AF_PACKET ring ("+ring"). Prints the
# medians and the ratios.
#
#   bench/iperf-compare/run.sh [-d SECONDS] [-r ROUNDS] [-P CONNECTIONS]
#
# Targets (issue 3): tsolab >= 95% of iperf3, counting costs <= 5%,
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
	[ -x "$work/iperf-compare" ] && "$work/iperf-compare" -lab "$LAB" -teardown || true
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$here/../.." && go build -o "$work/iperf-compare" ./bench/iperf-compare)
# The namespaces, lo up in each, and the veth pair tx0 <-> rx0 (MTU 1500)
# with the two addresses, made through netlink (netnsfs.CreatePair).
"$work/iperf-compare" -lab "$LAB" -tx-addr $TXA/24 -rx-addr $RXA/24 -setup
ip netns exec "$RX" iperf3 -s -B $RXA >/dev/null 2>&1 &
IPERF_PID=$!
# Wait for the iperf3 server's listening socket (an event with a deadline).
for _ in $(seq 100); do
	ip netns exec "$RX" ss -ltn 2>/dev/null | grep -q "$RXA:5201" && break
	sleep 0.05
done

iperf() { # prints bits/s received; retries once when the server was still busy
	for _ in 1 2; do
		if ip netns exec "$TX" iperf3 -c $RXA -t "$DUR" -l 128K -P "$CONNS" -J >"$work/ip.json" 2>/dev/null; then
			python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' "$work/ip.json"
			return
		fi
	done
	echo "iperf3 failed: $(cat "$work/ip.json")" >&2
	exit 1
}
tsolab() { # $1 = capture true|false, $2 = counter; prints the driver's line
	"$work/iperf-compare" -lab "$LAB" -duration "${DUR}s" -write-size 131072 -connections "$CONNS" -capture="$1" -counter "${2:-auto}" 2>>"$work/notes"
}
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Each round runs iperf3, then tsolab without a counter, with the default
# counter and with the AF_PACKET ring, back to back; ratios are taken
# within a round (paired), then the median over rounds.
printf "%-5s %8s %8s %8s %8s %7s %9s %9s %9s %9s %s\n" tso iperf3 tsolab +count +ring ratio cnt_cost ring_cost cnt_loss ring_loss "(Gb/s; medians of $ROUNDS paired rounds)"
for tso in on off; do
	"$work/iperf-compare" -lab "$LAB" -tso $tso -duration 0.2s -capture=false >/dev/null 2>&1
	: >"$work/rows"
	for _ in $(seq "$ROUNDS"); do
		i=$(iperf)
		t=$(tsolab false | field throughput_bps)
		line=$(tsolab true auto)
		c=$(echo "$line" | field throughput_bps) cl=$(echo "$line" | field capture_loss) cp=$(echo "$line" | field data_packets)
		src=$(echo "$line" | field source)
		[ "$src" = bpf ] || echo "warning: the default counter was $src, not eBPF (see the notes below)" >&2
		line=$(tsolab true ring)
		r=$(echo "$line" | field throughput_bps) rl=$(echo "$line" | field capture_loss) rp=$(echo "$line" | field data_packets)
		echo "$i $t $c $r $cl $cp $rl $rp" >>"$work/rows"
	done
	col() { awk '{ i=$1; t=$2; c=$3; r=$4; print '"$1"' }' "$work/rows" | median; }
	worst() { awk '{ l=$'"$1"'; p=$'"$2"'; v = (l+p > 0) ? 100*l/(l+p) : 0; if (v > m) m = v } END { print m+0 }' "$work/rows"; }
	printf "%-5s %8.2f %8.2f %8.2f %8.2f %6.1f%% %8.1f%% %8.1f%% %8.3f%% %8.3f%%\n" $tso \
		"$(col 'i/1e9')" "$(col 't/1e9')" "$(col 'c/1e9')" "$(col 'r/1e9')" "$(col '100*t/i')" \
		"$(col '100*(1-c/t)')" "$(col '100*(1-r/t)')" "$(worst 5 6)" "$(worst 7 8)"
done
echo "ratio = tsolab/iperf3 (target >= 95%); cnt_cost = 1 - with/without the default counter"
echo "(eBPF at TCX egress; target <= 5%); ring_cost = the same for the AF_PACKET ring;"
echo "*_loss = worst capture_loss/(counted+lost) over the rounds (target < 1%)"
grep -v "^note: capture on\|capture disabled\|^note: send units counted by" "$work/notes" | sort -u | sed 's/^/  /' || true
