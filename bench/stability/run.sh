#!/usr/bin/env bash
# Run each kernel example N times with the settings it declares and report
# how often each verdict differed from the majority, and what a run costs.
# With -s, run every example on the sim engine instead, run i with seed i
# (0..N-1): a flip there is a verdict that depends on the model's seed.
#
#   bench/stability/run.sh [-n RUNS] [-s] [-l LOCKFILE]
#
# -l takes an exclusive flock on LOCKFILE for each kernel run (a shared
# machine's namespace lock, e.g. /work/.netns.lock: one hold, one run).
#
# Target (issue 12): 0 flips in 10 runs of each kernel example on the
# 2-core development machine, and none at seeds 0..9 on the model. The
# kernel runs need root (network namespaces); each lab runs under its own
# -name (stabLAB), so another lab measuring at once does not collide.
set -euo pipefail
N=10
SIM=
LOCK=
while getopts "n:sl:" o; do
	case $o in
	n) N=$OPTARG ;;
	s) SIM=1 ;;
	l) LOCK=$OPTARG ;;
	*) echo "usage: $0 [-n runs] [-s] [-l lockfile]" >&2; exit 2 ;;
	esac
done
cd "$(dirname "$0")/../.."
if [ -n "$SIM" ]; then
	status=0
	for d in examples/*/; do
		go run ./bench/stability -n "$N" -seeds -args "-engine sim" "${d%/}" || status=1
	done
	exit $status
fi
[ "$(id -u)" = 0 ] || { echo "run.sh needs root (network namespaces)" >&2; exit 1; }
status=0
for d in examples/*/; do
	grep -q 'engine *= *"sim"' "$d"*.tsolab.hcl && continue
	lab=$(basename "$d")
	go run ./bench/stability -n "$N" -lock "$LOCK" -args "-name stab${lab:0:6}" "${d%/}" || status=1
done
exit $status
