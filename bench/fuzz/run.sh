#!/usr/bin/env bash
# Fuzz the lab loader, the state reader and the model, each for a while
# (not in CI):
#
#   bench/fuzz/run.sh [-t DURATION] [-p WORKERS]   (default 10m each, a worker per CPU)
#
# Targets: hcl FuzzLoad (lab files), planner FuzzReadState (state files),
# planner FuzzPlanState (a state the reader accepts is planned, applied
# and destroyed with echoing fake providers), and engine/sim FuzzModel
# (random labs on the model with its invariant checker: every byte
# delivered once and in order, units within the MSS, two runs alike; see
# its comment). Target (issue 9): no panic, no hang. A failure leaves its
# input in the package's testdata/fuzz/FUZZNAME/, which then runs with the
# ordinary tests: commit it with the fix. Pure Go: no root, no namespaces.
#
# New inputs are minimized for at most 5 s (-fuzzminimizetime): with the
# default 60 s, FuzzLoad spends nearly all its time minimizing the
# multi-kilobyte inputs it grows from the example labs (about 20 fuzz
# executions in 4 minutes on the 2-core machine). A hang: Go's fuzz
# worker gives one input 10 s of wall time (a fixed timer in
# internal/fuzz), then dies ("fuzzing process hung or terminated
# unexpectedly: exit status 2"; the worker's output is discarded, so no
# trace) and the input is recorded. Run it alone (go test -run
# FUZZNAME/ID ./PKG): FuzzLoad's and FuzzPlanState's watchdogs (20 s),
# or go test's -timeout, then print where it was. An input merely slower
# than 10 s on a loaded machine is reported the same way: FuzzModel ends
# each run after a budget of events (fuzzEventBudget) to stay well below.
set -euo pipefail
T=10m
P=$(nproc)
while getopts "t:p:" o; do
	case $o in
	t) T=$OPTARG ;;
	p) P=$OPTARG ;;
	*) echo "usage: $0 [-t duration] [-p workers]" >&2; exit 2 ;;
	esac
done
cd "$(dirname "$0")/../.."
status=0
for target in hcl:FuzzLoad planner:FuzzReadState planner:FuzzPlanState engine/sim:FuzzModel; do
	pkg=${target%%:*} name=${target#*:}
	echo "== $name ($pkg), $T"
	start=$(date +%s)
	if ! GOTRACEBACK=all go test -run '^$' -fuzz "^$name\$" -fuzztime "$T" -fuzzminimizetime 5s -parallel "$P" "./$pkg"; then
		status=1
	fi
	echo "== $name: $(( $(date +%s) - start )) s"
done
exit $status
