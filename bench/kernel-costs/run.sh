#!/usr/bin/env bash
# What this machine's kernel spends on each step of the TCP output path
# that the model's `modern` profile charges (engine/sim cpu.go), per
# event, measured in cells of examples/kernel-calibration (issue 11).
#
#   [RUNS=2] [OUT=DIR] bench/kernel-costs/run.sh [CELL ...]
#
# RUNS runs of each CELL (default: the two TSO-off cells behind the tbf),
# files in OUT (default a new directory in /tmp).
#
# Each run is `tsolab test -engine kernel -repeat 1 -scenario CELL` under
#   perf record -a -g -e cpu-clock/freq=4000/ (call graphs; a sample is
#     250 us of CPU), tcp:tcp_probe (every segment TCP receives, without
#     call graphs: pure ACKs are those with data_len 0 at the senders'
#     sockets), the workers' read, write and poll calls (comm tsolab or
#     tsl and 12 hex digits: engine/kernel names its workers' threads),
# with its own -name (no lock needed) and the eBPF send-unit counter on.
# costs.py then puts each CPU sample of tsolab's threads, and each
# softirq sample of any thread, in the window of the lab's segments into
# a step: the sample's context is cut at its innermost softirq entry, and
# the innermost kernel function of it that names a step wins (a context
# inside __tcp_send_ack or tcp_ack is that step whole, as the model
# charges it). The figures per event use the run's counts: segments =
# bytes / MSS, units = send_units, ACKs from tcp_probe, reads, writes and
# polls (Go's unix.Poll is ppoll) from their sys_enter tracepoints; a
# sample in a read, write or poll call that no inner step names (entry,
# exit, a poll's sleep and wake-up) is that call's. A run whose window
# holds other labs' TCP segments (tcp_probe not from 10.77.21.x) is left
# out: their softirq work in shared threads
# cannot be told from the lab's. The table prints each run and the
# pooled figures.
#
# While each run goes, sample_queues reads the lab's sockets' queues with
# ss every 100 ms (the bytes between a byte's write and its read), and
# costs.py prints each copy apart (the sender's into the write queue, the
# receiver's to its buffer) with the bytes a read and a write.
#
# copy.c, beside it, measures the copy alone on this machine: what a byte
# copied costs against the bytes written between its write and its read,
# and after a sleep (docs/engine.md, Why the kernel's copy is cheaper
# unshaped).
#
# Limits: cpu-clock on this VM cannot sample with interrupts off, so time
# in a hardirq or an irq-off section shows where interrupts come back on
# (the softirq entry's share is printed, unattributed). perf's own cost is
# left out (samples in perf_* functions). Needs root and perf.
set -euo pipefail
RUNS=${RUNS:-2}
OUT=${OUT:-$(mktemp -d /tmp/kernel-costs.XXXX)}
CELLS=("$@")
[ ${#CELLS[@]} -gt 0 ] || CELLS=(tso=false,mtu=1500,rate=2gbit tso=false,mtu=9000,rate=2gbit)
# the kernel engine's workers name their threads "tsl" and 12 hex digits
# while they run (engine/kernel workerName); its other threads keep tsolab
WORKERS='comm == "tsolab" || comm ~ "tsl*"'
# sample_queues FILE: every 50 ms, the lab's sockets' memory (ss -m:
# wmem_queued, the send queue, and rmem_alloc, the receive queue) in each
# of the run's namespaces, a line a socket stamped with the sample's
# number: the bytes between the writers' copies and the readers'
# (costs.py, queued w+r).
sample_queues() {
	local i=0
	while :; do
		i=$((i + 1))
		for ns in $(ip netns list | awk '{print $1}' | grep "kcost$$" || true); do
			nsenter --net="/run/netns/$ns" ss -tmnHO 2>/dev/null | sed "s/^/$i /" || true
		done
		sleep 0.05
	done >"$1"
}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
go build -o "$OUT/tsolab" "$ROOT/cmd/tsolab"
tags=()
for i in $(seq 1 "$RUNS"); do
	for c in "${CELLS[@]}"; do
		tag=$(echo "$c" | tr ',=' '_-')_r$i
		uptime >"$OUT/$tag.load"
		sample_queues "$OUT/$tag.ss" &
		sampler=$!
		perf record -q -a -g -m 8M -e cpu-clock/freq=4000/ -e tcp:tcp_probe/call-graph=no/ \
			-e syscalls:sys_enter_read/call-graph=no/ --filter "$WORKERS" \
			-e syscalls:sys_enter_write/call-graph=no/ --filter "$WORKERS" \
			-e syscalls:sys_enter_ppoll/call-graph=no/ --filter "$WORKERS" -o "$OUT/$tag.perf" -- \
			"$OUT/tsolab" test -engine kernel -name kcost$$ -repeat 1 -json "$OUT/$tag.json" -scenario "$c" \
			"$ROOT/examples/kernel-calibration" >"$OUT/$tag.out" 2>&1 || true
		kill "$sampler"
		wait "$sampler" 2>/dev/null || true
		uptime >>"$OUT/$tag.load"
		# perf script exits non-zero when the record lost events (it
		# warns "Check IO/CPU overload!"); the run is still read, and its
		# warning kept beside it.
		{ perf script -i "$OUT/$tag.perf" -F comm,tid,time,event,ip,sym,trace 2>"$OUT/$tag.script-warnings" || true; } |
			gzip -1 >"$OUT/$tag.txt.gz"
		rm -f "$OUT/$tag.perf"
		tags+=("$tag")
	done
done
python3 "$ROOT/bench/kernel-costs/costs.py" "$OUT" "${tags[@]}"
echo "files in $OUT"
