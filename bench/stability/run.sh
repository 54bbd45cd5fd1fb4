#!/usr/bin/env bash
# Run each kernel example N times with the settings it declares and report
# how often each verdict differed from the majority, and what a run costs.
#
#   bench/stability/run.sh [-n RUNS]
#
# Target (issue 12): 0 flips in 10 runs of each kernel example on the
# 2-core development machine. Needs root (network namespaces).
set -euo pipefail
N=10
while getopts "n:" o; do
	case $o in
	n) N=$OPTARG ;;
	*) echo "usage: $0 [-n runs]" >&2; exit 2 ;;
	esac
done
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "run.sh needs root (network namespaces)" >&2; exit 1; }
labs=()
for d in examples/*/; do
	grep -q 'engine *= *"sim"' "$d"*.tsolab.hcl || labs+=("${d%/}")
done
exec go run ./bench/stability -n "$N" "${labs[@]}"
