#!/usr/bin/env bash
# Compare tsolab's kernel-engine stream across git revisions, without
# iperf3: the driver (iperf-compare) is built from each REV ("." is the
# working tree) and each round runs every tree once per TSO setting on
# one veth pair (MTU 1500, 128 KiB writes, no counter), the order
# rotating by round. It prints every round's Gb/s and, per tree, its
# per-round ratios over the first tree (sorted), their median and how many rounds
# it was ahead. Rounds are short and many, so that a change's effect
# shows against the round-to-round spread on a loaded machine; run it at
# normal priority as well as under an autogroup at nice -20: a change
# that relies on the Go scheduler handing a worker between threads
# (unlocked passes) was ahead at nice -20 and behind at normal priority
# (engine/kernel/doc.go, "Against iperf3").
#
#   bench/iperf-compare/trees.sh [-d SECONDS] [-r ROUNDS] [-P CONNECTIONS] [-t "on off"] REV...
#
# e.g. trees.sh -r 10 main . Needs root (network namespaces).
set -euo pipefail
. "$(dirname "$0")/cmdline.sh"
DUR=3 ROUNDS=8 CONNS=1 TSOS="on off"
while getopts "d:r:P:t:" o; do
	case $o in
	d) DUR=$OPTARG ;; r) ROUNDS=$OPTARG ;; P) CONNS=$OPTARG ;; t) TSOS=$OPTARG ;;
	*) usage "[-d seconds] [-r rounds] [-P connections] [-t \"on off\"] REV..." ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || usage "[-d seconds] [-r rounds] [-P connections] [-t \"on off\"] REV..."
need_root "network namespaces"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
LAB=trees$$
revs=("$@")
cleanup() {
	[ -x "$work/drv.0" ] && "$work/drv.0" -lab "$LAB" -teardown || true
	rm -rf "$work"
}
trap cleanup EXIT
for i in "${!revs[@]}"; do # drv.I is the driver of revs[I]
	if [ "${revs[$i]}" = . ]; then
		(cd "$root" && go build -o "$work/drv.$i" ./bench/iperf-compare)
	else
		mkdir "$work/src.$i"
		git -C "$root" archive "${revs[$i]}" | tar -x -C "$work/src.$i"
		(cd "$work/src.$i" && go build -o "$work/drv.$i" ./bench/iperf-compare)
	fi
done
"$work/drv.0" -lab "$LAB" -tx-addr 10.203.0.1/24 -rx-addr 10.203.0.2/24 -setup
echo "start: load $(cut -d' ' -f1-3 /proc/loadavg)"
n=${#revs[@]}
for r in $(seq "$ROUNDS"); do
	for tso in $TSOS; do
		"$work/drv.0" -lab "$LAB" -tso "$tso" -set-tso
		declare -A got=()
		for k in $(seq 0 $((n - 1))); do
			i=$(((k + r) % n))
			line=$("$work/drv.$i" -lab "$LAB" -duration "${DUR}s" -write-size 131072 -connections "$CONNS" -capture=false 2>>"$work/notes") || { cat "$work/notes" >&2; exit 1; }
			got[$i]=$(echo "$line" | sed -n 's/.*throughput_bps=\([0-9]*\).*/\1/p')
		done
		row="$r $tso"
		for i in "${!revs[@]}"; do row="$row ${got[$i]}"; done
		echo "$row" >>"$work/rows"
		printf "round %d TSO %-3s" "$r" "$tso"
		for i in "${!revs[@]}"; do printf "  %s %.2f" "${revs[$i]}" "$(echo "${got[$i]}" | awk '{ print $1 / 1e9 }')"; done
		echo "  (load $(cut -d' ' -f1 /proc/loadavg))"
	done
done
echo "end: load $(cut -d' ' -f1-3 /proc/loadavg)"
for tso in $TSOS; do
	for i in $(seq 1 $((n - 1))); do
		awk -v tso="$tso" -v c=$((i + 3)) -v name="${revs[$i]}/${revs[0]}" '$2 == tso { r[++n] = $c / $3; if ($c > $3) a++ }
			END { for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++) if (r[y] < r[x]) { t = r[x]; r[x] = r[y]; r[y] = t }
				printf "TSO %-3s %s, the rounds sorted:", tso, name
				for (x = 1; x <= n; x++) printf " %.2f", r[x]
				printf "; median %.3f, ahead in %d of %d\n", r[int((n + 1) / 2)], a, n }' "$work/rows"
	done
done
