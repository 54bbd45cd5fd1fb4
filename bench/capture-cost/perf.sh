#!/usr/bin/env bash
# Where `-capture`'s cost goes, per packet (issue 14): `perf record -a`
# (cpu-clock, every CPU) of tsolab runs of one examples/tso-basics
# scenario without and with `-capture DIR`, alternated by round as in
# run.sh, and, per mode, the CPU time of the samples taken while the
# workload ran (from the first sample in a worker thread to the last;
# workers are the threads named tsl...) divided by the run's
# data_packets: nanoseconds of CPU a wire segment, for the workers'
# threads (the sender's and receiver's system calls and, on a veth pair,
# both ends' softirq work, where the capture programs run), for the
# process's other threads (Go runtime, sampler, capture readers) and for
# everything else on the machine; then the symbols in the workers' and
# the process's threads whose time a packet differs most between the
# modes (the mean over the rounds; a BPF program is named bpf_NAME).
# The window holds the workers' start and end as well: setup of the
# process's that overlaps them (the record rings and spools made as the
# counters open) shows in its other threads, most where the packets are
# few (TSO on); cutting 0.2 s off its start and 0.1 s off its end moved
# a TSO-off MTU 1500 run's figures by 0-4%.
#
#   bench/capture-cost/perf.sh [-r ROUNDS] [-s SCENARIO] [-n SYMBOLS]
#
# BASE=REV also builds tsolab at git revision REV and adds its run with
# `-capture` to each round ("base"), as run.sh does. The files go to
# $CAPDIR (tmpfs by default) and are removed after each run. perf samples
# at -F 4999 Hz: a 2 s run on two CPUs gives ~20k samples, so a symbol
# below ~1 ns a packet is noise; run it where run.sh runs (under the
# netns lock) and compare modes within one run only. On a VM without a
# PMU the samples are cpu-clock (hrtimer) ones: time with interrupts off
# is charged to where they come back on. Needs root and perf.
set -euo pipefail

ROUNDS=3
SCENARIO="tso=false,mtu=1500"
TOP=20
while getopts "r:s:n:" o; do
	case $o in
	r) ROUNDS=$OPTARG ;; s) SCENARIO=$OPTARG ;; n) TOP=$OPTARG ;;
	*) echo "usage: $0 [-r rounds] [-s scenario] [-n symbols]" >&2; exit 2 ;;
	esac
done
command -v perf >/dev/null || { echo "perf.sh needs perf" >&2; exit 1; }
source "$(dirname "$0")/setup.sh" capperf

load() { echo "load $(cut -d' ' -f1-3 /proc/loadavg)"; }
echo "machine at the start: $(load)"
"$work/tsolab" apply -auto-approve -name "$NAME" -scenario "$SCENARIO" "$work/lab" >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
for r in $(seq "$ROUNDS"); do
	set -- $modes
	for _ in $(seq $((r - 1))); do set -- "${@:2}" "$1"; done
	for m in "$@"; do
		bin=$work/tsolab flags=()
		[ "$m" != without ] && flags=(-capture "$CAPDIR/$NAME")
		[ "$m" = base ] && bin=$work/base/tsolab
		rm -rf "${CAPDIR:?}/$NAME"
		perf record -q -a -F 4999 -o "$work/$m-$r.data" -- \
			"$bin" run -name "$NAME" -repeat 1 -json "$work/$m-$r.json" "${flags[@]}" "$work/lab" >"$work/out" 2>&1 ||
			{ cat "$work/out" >&2; exit 1; }
		rm -rf "${CAPDIR:?}/$NAME"
		perf script -i "$work/$m-$r.data" -F comm,time,ip,sym >"$work/$m-$r.txt" 2>/dev/null
		rm "$work/$m-$r.data"
	done
	echo "round $r done ($(load))" >&2
done
echo "machine at the end: $(load)"
python3 - "$work" "$ROUNDS" "$modes" "$TOP" "$SCENARIO" <<'PY'
import collections, json, re, sys
work, rounds, modes, top, scenario = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), int(sys.argv[4]), sys.argv[5]
HZ = 4999
line = re.compile(r"\s*(.+?)\s+(\d+\.\d+):\s+([0-9a-f]+)\s*(.*)$")

def run(mode, r):
    """ns a data packet by thread class and by (class, symbol), and Gb/s."""
    rows = []
    for l in open("%s/%s-%d.txt" % (work, mode, r)):
        m = line.match(l)
        if m:
            sym = re.sub(r"bpf_prog_[0-9a-f]+_", "bpf_", m.group(4).strip() or "[unknown]")
            rows.append((m.group(1), float(m.group(2)), sym))
    worker = [t for c, t, _ in rows if c.startswith("tsl")]
    lo, hi = min(worker), max(worker)
    metrics = json.load(open("%s/%s-%d.json" % (work, mode, r)))["runs"][0]["metrics"]
    per = 1e9 / HZ / metrics["data_packets"]
    byclass, bysym = collections.Counter(), collections.Counter()
    for c, t, s in rows:
        if lo <= t <= hi:
            k = "workers" if c.startswith("tsl") else "tsolab" if c == "tsolab" else "others"
            byclass[k] += per
            if k != "others":
                bysym[(k, s)] += per
    return byclass, bysym, metrics["throughput_bps"] / 1e9

res = {m: [run(m, r) for r in range(1, rounds + 1)] for m in modes}
mean = lambda m, i, k: sum(x[i].get(k, 0) for x in res[m]) / rounds
print("%s, %d rounds: ns of CPU a data packet while the workload ran (mean of the rounds)" % (scenario, rounds))
print("%-28s" % "" + "".join("%10s" % m for m in modes))
print("%-28s" % "Gb/s" + "".join("%10.2f" % (sum(x[2] for x in res[m]) / rounds) for m in modes))
for k in ("workers", "tsolab", "others"):
    print("%-28s" % (k + " threads") + "".join("%10.1f" % mean(m, 0, k) for m in modes))
keys = set()
for m in modes:
    for x in res[m]:
        keys |= set(x[1])
diff = lambda k: max(abs(mean(m, 1, k) - mean("without", 1, k)) for m in modes)
print("symbols whose ns a packet differ most from the run without -capture:")
for k in sorted(keys, key=lambda k: -diff(k))[:top]:
    print("%-8s %-40s" % (k[0], k[1][:40]) + "".join("%10.1f" % mean(m, 1, k) for m in modes))
PY
