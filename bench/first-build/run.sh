#!/usr/bin/env bash
# What README's first command costs on a fresh machine: `go run ./cmd/tsolab`
# with an empty module cache and an empty build cache. It measures, in one
# run and in this order:
#   1. the modules the build needs, downloaded (go list -deps: no compiling):
#      their size in the module cache and the time it took;
#   2. the build of tsolab as go run makes it (-pgo=auto: with
#      cmd/tsolab/default.pgo every package is compiled with the profile);
#   3. with -p, the same build without the profile (-pgo=off), from a second
#      empty build cache, for what PGO adds.
# It prints the load average before and after each step: the times depend on
# what else the machine runs. It builds the tree it is in: a rebase of that
# tree while it runs breaks the builds (run it from a copy: git archive HEAD).
#
#   bench/first-build/run.sh [-p]
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
nopgo=0
while getopts "p" o; do
	case $o in
	p) nopgo=1 ;;
	*) echo "usage: $0 [-p]" >&2; exit 2 ;;
	esac
done

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOMODCACHE=$work/mod GOCACHE=$work/cache GOFLAGS=-buildvcs=false
cd "$root"

load() { cut -d' ' -f1-3 /proc/loadavg; }
now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$2" 'BEGIN { s = b - a; printf "%dm%04.1fs (%.1f s)", s / 60, s - 60 * int(s / 60), s }'; }

echo "go: $(go version); revision: $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $(nproc) CPUs"
echo "load before: $(load)"
t0=$(now)
go list -deps ./cmd/tsolab >/dev/null
t1=$(now)
echo "download: $(du -sm "$GOMODCACHE" | cut -f1) MB in the module cache, $(took "$t0" "$t1"); load $(load)"

t0=$(now)
go build -o "$work/tsolab" ./cmd/tsolab
t1=$(now)
echo "build, empty build cache, -pgo=auto (default.pgo): $(took "$t0" "$t1"); build cache $(du -sm "$GOCACHE" | cut -f1) MB; load $(load)"

t0=$(now)
go build -o "$work/tsolab" ./cmd/tsolab
t1=$(now)
echo "build again (cache warm): $(took "$t0" "$t1"); load $(load)"

if [ "$nopgo" = 1 ]; then
	export GOCACHE=$work/cache-nopgo
	t0=$(now)
	go build -pgo=off -o "$work/tsolab-nopgo" ./cmd/tsolab
	t1=$(now)
	echo "build, empty build cache, -pgo=off: $(took "$t0" "$t1"); load $(load)"
fi
