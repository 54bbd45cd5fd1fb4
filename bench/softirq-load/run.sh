#!/usr/bin/env bash
# Whether an unrelated CPU load moves the kernel engine's CPU figures
# (engine/kernel doc.go, CPU): runs of one cell alternate between a quiet
# machine and one with a shell busy loop pinned to every CPU, for each
# tsolab binary given, in the same rounds.
#
#   [ROUNDS=3] [REPEAT=2] [OUT=DIR] [BESIDE="LAB2 CELL2"] bench/softirq-load/run.sh LAB CELL BIN...
#
# e.g. bench/softirq-load/run.sh examples/kernel-calibration \
#        tso=false,mtu=1500,rate=2gbit /tmp/tsolab-before /tmp/tsolab-after
#
# Each run is `BIN test -engine kernel -name sirqload -no-capture -repeat
# REPEAT -scenario CELL LAB` (its own -name: no lock needed; the busy
# loops run at the default nice, as an unrelated job would). summary.py
# prints, per binary and mode, the medians of throughput, cpu_tx_pct,
# cpu_rx_pct and their sum, and the busy/quiet ratio of each median;
# with -v, each run's softirq meter note (time by vector and class, the
# lab's share of the machine's packets). The load average at each run's
# start is in OUT/log: other jobs' traffic on the machine shows as a
# lab share below 100% in the notes.
#
# With BESIDE, the loaded mode is "beside" instead of "busy": each run
# starts 2 s into a run of CELL2 of another lab LAB2 (`BIN test -engine
# kernel -name sirqbeside -no-capture -scenario CELL2 LAB2`; give its
# workload a duration that covers the run, e.g. 8s), another job's
# traffic in namespaces of its own (engine/kernel doc.go, CPU: the
# softirq meter's owner programs). bench/softirq-load/other is such a
# lab: BESIDE="bench/softirq-load/other tso=true".
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,20p' "$0"; exit 2; }
LAB=$1 CELL=$2
shift 2
ROUNDS=${ROUNDS:-3} REPEAT=${REPEAT:-2}
OUT=${OUT:-$(mktemp -d /tmp/softirq-load.XXXXXX)}
mkdir -p "$OUT"
loops=()
stop() {
	for p in "${loops[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${loops[@]}"; do wait "$p" 2>/dev/null || true; done
	loops=()
}
trap stop EXIT
loaded=busy
[ -z "${BESIDE:-}" ] || loaded=beside
for i in $(seq 1 "$ROUNDS"); do
	for mode in quiet $loaded; do
		if [ $mode = busy ]; then
			for cpu in $(seq 0 $(($(nproc) - 1))); do
				taskset -c "$cpu" sh -c 'while :; do :; done' &
				loops+=($!)
			done
		fi
		for bin in "$@"; do
			name=$(basename "$bin")
			other=
			if [ $mode = beside ]; then
				read -r lab2 cell2 <<<"$BESIDE"
				"$bin" test -engine kernel -name sirqbeside -no-capture -scenario "$cell2" "$lab2" \
					>"$OUT/$mode-$i-$name.other.out" 2>&1 &
				other=$!
				sleep 2
			fi
			echo "$mode $name $i load=$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/log"
			"$bin" test -engine kernel -name sirqload -no-capture -repeat "$REPEAT" -scenario "$CELL" \
				-json "$OUT/$mode-$i-$name.json" "$LAB" >"$OUT/$mode-$i-$name.out" 2>&1 || true
			[ -z "$other" ] || wait "$other" || true
		done
		stop
	done
done
python3 "$(dirname "$0")/summary.py" "$OUT"
echo "files in $OUT"
