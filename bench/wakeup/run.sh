#!/usr/bin/env bash
# Measure this machine's thread wake-up latency and context-switch cost
# (bench/wakeup/main.go says how), ROUNDS times over a pipe and over TCP
# on loopback, alternating, each round at nice -20 in its own autogroup
# (/work/tools/prio.sh when present), with the load average printed
# before each. Needs root for perf record -a (the kernel's wake-to-run).
#
#   bench/wakeup/run.sh [ROUNDS]
set -euo pipefail
ROUNDS=${1:-5}
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)/wakeup
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./bench/wakeup
prio=()
[ -x /work/tools/prio.sh ] && prio=(/work/tools/prio.sh)
for r in $(seq 1 "$ROUNDS"); do
	for t in pipe tcp; do
		echo "== round $r $t, load $(cut -d' ' -f1-3 /proc/loadavg)"
		"${prio[@]}" "$bin" -rounds 20000 -transport "$t" -perf 2>&1 | grep -v "not valid for"
	done
done
