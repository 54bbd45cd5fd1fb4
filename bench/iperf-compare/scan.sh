#!/usr/bin/env bash
# Scan the machine's states: alternate short runs of iperf3 and of one or
# more tsolab drivers on one veth pair (one connection, 128 KiB writes,
# CUBIC, the namespaces' default reno, as run.sh) for MINUTES, a line a
# run, then compare each driver run with the iperf3 runs on either side
# of it (a triplet), by the state the machine was in: "usual" where both
# iperf3 runs were below -s Gb/s, "fast" where both were at or above -f.
# This 2-core guest now and then runs a veth stream twice as fast for
# seconds to minutes (issue 16, session 19: iperf3 85-106 Gb/s with TSO
# on against 30-55), too seldom and too briefly for run.sh's rounds to
# land in it; a scan catches it in the triplets that fall inside. With
# -k K it hunts instead: 1 s iperf3 probes until one reaches -f Gb/s,
# then K rotations and a closing iperf3 run, then probes again (the
# probes are not in the table).
#
#   bench/iperf-compare/scan.sh [-m MINUTES] [-d SECONDS] [-t on|off] [-s GBPS] [-f GBPS] [-k K] [-o FILE] NAME=DRIVER...
#
# DRIVER is a built bench/iperf-compare (e.g. one from another tree, or
# main's: NAME=main); the rotation is iperf3, then each driver in the
# order given. Each line: unix time, tag (I for iperf3, else NAME), Gb/s
# received, sender CPU in % of one core (iperf3's host_total; the
# driver's task_tx_pct, which holds its other threads), receiver CPU,
# and for a driver its other threads' part. The table (scan.py): per
# driver and state, the triplets, the medians of the ratios to the
# flanking iperf3 runs' mean (throughput, sender CPU per Gb/s, sender +
# receiver), and with two or more drivers the median ratio of each to
# the first in the same rotation. iperf3's JSON goes to a file, never a
# pipe: a reader started on the pipe competes with iperf3's first
# hundreds of ms, and its host_total read 87% at 2 s where it was 99%.
# Needs root, iperf3 and python3; hold the namespace lock around it.
set -euo pipefail
. "$(dirname "$0")/cmdline.sh"
MIN=20 DUR=2 TSO=on SLOW=65 FAST=80 OUT= HUNT=0
while getopts "m:d:t:s:f:k:o:" o; do
	case $o in
	m) MIN=$OPTARG ;; d) DUR=$OPTARG ;; t) TSO=$OPTARG ;; s) SLOW=$OPTARG ;; f) FAST=$OPTARG ;; k) HUNT=$OPTARG ;; o) OUT=$OPTARG ;;
	*) usage "[-m minutes] [-d seconds] [-t on|off] [-s gbps] [-f gbps] [-k k] [-o file] NAME=DRIVER..." ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage "[-m minutes] [-d seconds] [-t on|off] [-s gbps] [-f gbps] [-k k] [-o file] NAME=DRIVER..."
[[ $MIN =~ ^[0-9]+$ && $DUR =~ ^[0-9]+$ && $HUNT =~ ^[0-9]+$ ]] || usage "-m, -d and -k take whole numbers"
need_root "network namespaces"
declare -a names drivers
for a in "$@"; do
	case $a in
	I=* | *=) usage "NAME=DRIVER: NAME not I, DRIVER not empty ($a)" ;;
	*=*) names+=("${a%%=*}") drivers+=("${a#*=}") ;;
	*) usage "NAME=DRIVER, not $a" ;;
	esac
done
LAB=scan$$
TX=tsl.$LAB.tx RX=tsl.$LAB.rx
TXA=10.219.0.1 RXA=10.219.0.2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
out=${OUT:-$work/scan}
: >"$out"
D0=${drivers[0]}
cleanup() {
	[ -n "${IPERF_PID:-}" ] && kill "$IPERF_PID" 2>/dev/null || true
	"$D0" -lab "$LAB" -teardown || true
	rm -rf "$work"
}
trap cleanup EXIT
"$D0" -lab "$LAB" -tx-addr $TXA/24 -rx-addr $RXA/24 -setup
for ns in "$TX" "$RX"; do ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control=reno; done
"$D0" -lab "$LAB" -tso "$TSO" -set-tso
iperf3_server "$RX" $RXA
# iperf SECONDS: one iperf3 run; prints its line.
iperf() {
	ip netns exec "$TX" iperf3 -c $RXA -t "$1" -l 128K -C cubic -J >"$work/ip.json" 2>/dev/null || return 1
	python3 -c 'import json,sys,time; e=json.load(open(sys.argv[1]))["end"]; c=e["cpu_utilization_percent"]
print("%.2f I %.3f %.1f %.1f" % (time.time(), e["sum_received"]["bits_per_second"]/1e9, c["host_total"], c["remote_total"]))' "$work/ip.json"
}
# rotation: iperf3, then each driver, a line each into $out.
rotation() {
	iperf "$DUR" >>"$out" || return 0
	for i in "${!drivers[@]}"; do
		line=$("${drivers[$i]}" -lab "$LAB" -tx-addr $TXA/24 -rx-addr $RXA/24 -duration "${DUR}s" -cc cubic -capture=false 2>/dev/null) || continue
		python3 -c 'import re,sys,time; f=dict(re.findall(r"(\w+)=([0-9.e+-]+)", sys.argv[2]))
print("%.2f %s %.3f %s %s %s" % (time.time(), sys.argv[1], float(f["throughput_bps"])/1e9, f["task_tx_pct"], f["task_rx_pct"], f["task_other_pct"]))' "${names[$i]}" "$line" >>"$out"
	done
}
end=$(($(date +%s) + 60 * MIN))
while [ "$(date +%s)" -lt "$end" ]; do
	if [ "$HUNT" = 0 ]; then
		rotation
		continue
	fi
	p=$(iperf 1) || continue
	echo "$p" >>"$out.probes"
	awk -v g="$(echo "$p" | cut -d' ' -f3)" -v f="$FAST" 'BEGIN { exit !(g >= f) }' || continue
	for _ in $(seq "$HUNT"); do rotation; done
	iperf "$DUR" >>"$out" || true
done
echo "scan of $MIN min$([ "$HUNT" = 0 ] || echo ", hunting ($(grep -c . "$out.probes" 2>/dev/null || echo 0) probes)"), runs of $DUR s, TSO $TSO, one connection, CUBIC; $(wc -l <"$out") runs; load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/scan.py" -s "$SLOW" -f "$FAST" "$out" "${names[@]}"
