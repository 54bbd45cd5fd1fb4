#!/usr/bin/env bash
# Count what the receiving threads of iperf3's server and of tsolab's
# driver do, per GB received: one iperf3 run and then one tsolab run on
# the namespaces `iperf-compare -setup` made, each with `perf stat
# --per-thread` attached 1 s in for SECONDS-2 s, and per receiving thread
# (iperf3's server: its one thread; tsolab: the threads that read more
# than they write) its CPU ms, context switches (all, and involuntary:
# switched out while runnable), system calls (all, and read, the waits,
# futex, setsockopt, clock_gettime, prctl) and softirqs run in its
# context, with tsolab's summed in "rxΣ". A GB is the run's average
# rate over the window (the tools report no rate for the window alone),
# so a run whose rate moves puts its counts a GB off by as much: on a
# loaded machine iperf3's 128 KiB reads came out at 144-161 KB a read.
# The two runs are back to back, not at once: on a loaded machine their
# rates differ, and so may their counts a GB.
#
#   bench/iperf-compare/receivers.sh [-d SECONDS] [-P CONNECTIONS] [-t on|off] DRIVER LAB
#
# DRIVER is a built bench/iperf-compare, LAB the lab id it set up
# (-setup -lab LAB, addresses as run.sh gives them). Needs root (perf),
# iperf3 and python3; hold the namespace lock around it.
set -euo pipefail
. "$(dirname "$0")/cmdline.sh"
DUR=5 P=1 TSO=on
while getopts "d:P:t:" o; do
	case $o in
	d) DUR=$OPTARG ;; P) P=$OPTARG ;; t) TSO=$OPTARG ;;
	*) usage "[-d seconds] [-P connections] [-t on|off] DRIVER LAB" ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 2 ] || usage "[-d seconds] [-P connections] [-t on|off] DRIVER LAB"
DRV=$1 LAB=$2
[ "$DUR" -ge 3 ] || { echo "-d: at least 3 s (perf attaches 1 s in and stops 1 s before the end)" >&2; exit 2; }
TX=tsl.$LAB.tx RX=tsl.$LAB.rx RXA=10.203.0.2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ev=task-clock,context-switches,raw_syscalls:sys_enter,irq:softirq_entry
for s in read write recvfrom poll ppoll select pselect6 epoll_wait epoll_pwait futex setsockopt clock_gettime prctl; do ev=$ev,syscalls:sys_enter_$s; done
stat() { # $1 = pid, $2 = output
	perf stat --per-thread -p "$1" -x, -o "$2" -e $ev -e sched:sched_switch --filter 'prev_state == 0' -- sleep $((DUR - 2)) 2>"$work/perr" || { cat "$work/perr" >&2; exit 1; }
}
"$DRV" -lab "$LAB" -tso "$TSO" -set-tso
ip netns exec "$RX" iperf3 -s -1 -B $RXA >/dev/null 2>&1 &
spid=$!
for _ in $(seq 100); do ip netns exec "$RX" ss -ltn | grep -q "$RXA:5201" && break; sleep 0.05; done
ip netns exec "$TX" iperf3 -c $RXA -t "$DUR" -l 128K -P "$P" -J >"$work/ip.json" &
cpid=$!
sleep 1
stat $spid "$work/ip.stat"
wait $cpid
wait $spid || true
ibps=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' "$work/ip.json")
"$DRV" -lab "$LAB" -duration "${DUR}s" -write-size 131072 -connections "$P" -capture=false >"$work/ts.out" 2>/dev/null &
dpid=$!
sleep 1
stat $dpid "$work/ts.stat"
wait $dpid
tbps=$(sed -n 's/.*throughput_bps=\([0-9]*\).*/\1/p' "$work/ts.out")
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $P connection(s), TSO $TSO"
python3 - "$work" $((DUR - 2)) "$ibps" "$tbps" <<'PY'
import collections, sys
work, dur, ibps, tbps = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
short = {'task-clock': 'ms', 'context-switches': 'cs', 'raw_syscalls:sys_enter': 'sysc',
         'irq:softirq_entry': 'softirq', 'sched:sched_switch': 'invol'}
cols = ['ms', 'cs', 'invol', 'sysc', 'read', 'recvfrom', 'poll', 'ppoll', 'select', 'pselect6', 'epoll_wait',
        'epoll_pwait', 'futex', 'setsockopt', 'clock_gettime', 'prctl', 'softirq']
def threads(name):
    th = collections.defaultdict(dict)
    for line in open(f'{work}/{name}.stat'):
        f = line.strip().split(',')
        if len(f) < 4 or f[0].startswith('#') or f[1].startswith('<'):
            continue
        th[f[0]][short.get(f[3], f[3].replace('syscalls:sys_enter_', ''))] = float(f[1])
    return {t: c for t, c in th.items() if c.get('read', 0) > c.get('write', 0)}
print('%-24s' % 'thread' + ''.join('%8s' % c[:7] for c in cols))
for name, bps in (('ip', ibps), ('ts', tbps)):
    gb = bps * dur / 8 / 1e9
    rx = threads(name)
    print(f"{'iperf3' if name == 'ip' else 'tsolab'}: {bps/1e9:.2f} Gb/s, {gb:.2f} GB in the {dur:g} s window; per GB:")
    total = collections.Counter()
    for t in sorted(rx):
        total.update(rx[t])
        print('%-24s' % t[-24:] + ''.join('%8.0f' % (rx[t].get(c, 0) / gb) for c in cols))
    if len(rx) > 1:
        print('%-24s' % 'rxΣ' + ''.join('%8.0f' % (total[c] / gb) for c in cols))
    if total['read']:
        print(f"  {gb * 1e9 / total['read'] / 1e3:.0f} KB a read (at the run's average rate)")
PY
