#!/usr/bin/env bash
# Count what each thread of a loop process does, per GB received: run
# CMD (cloop, goloop, the iperf-compare driver, iperf3 -c ... -J, or
# anything that prints throughput_bps=; it runs at least SECONDS+2 s), attach `perf stat --per-thread` to it 1 s in for
# SECONDS, and print per thread its CPU ms, context switches (voluntary,
# and involuntary: switched out while runnable), migrations, signals delivered, system
# calls (all, and write, read, poll, ppoll, futex, nanosleep,
# sched_yield), softirqs run in its context and IPIs it sent, per GB of
# the run's throughput over the window. The thread that wrote most is
# "tx", the one that read most "rx", the rest "oth" (the Go runtime's
# threads), summed in "othΣ". Counting, not sampling: the
# counts do not depend on where perf's timer lands, which in this VM
# puts kernel samples at the points that re-enable interrupts.
#
#   bench/iperf-compare/threads.sh [-d SECONDS] CMD...
#
# e.g., on the namespaces iperf-compare -setup makes (TSO off):
#   threads.sh ./cloop tsl.L.tx tsl.L.rx 10.203.0.2 5301 5 131072
#   threads.sh ./goloop -v procs+pass+meter tsl.L.tx tsl.L.rx 10.203.0.2 5302 5 131072
#   threads.sh ip netns exec tsl.L.tx iperf3 -c 10.203.0.2 -t 5 -l 128K -C cubic -J
#   (its client only: the server is another process)
# iperf3 -C applies the congestion control after connect(): on a
# namespace whose default is BBR the socket stays paced whatever -C
# says, so set the namespaces' default first (run.sh does: -a CC where
# allowed, reno otherwise), e.g. ip netns exec tsl.L.tx sysctl -w
# net.ipv4.tcp_congestion_control=reno.
# Needs root (perf) and python3.
set -euo pipefail
. "$(dirname "$0")/cmdline.sh"
duration_and_command 2 "$@"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${CMD[@]}" >"$work/out" 2>&1 &
pid=$!
sleep 1
ev=task-clock,context-switches,cpu-migrations,signal:signal_deliver,raw_syscalls:sys_enter
for s in write read poll ppoll futex nanosleep sched_yield; do ev=$ev,syscalls:sys_enter_$s; done
ev=$ev,irq:softirq_entry,ipi:ipi_send_cpu
# A thread that ends while perf attaches (goloop's, that made the
# sockets in the namespaces) fails the attach: try again.
for try in 1 2 3 4 5; do
	perf stat --per-thread -p $pid -x, -o "$work/stat" -e $ev -e sched:sched_switch --filter 'prev_state == 0' -- sleep "$DUR" 2>"$work/perr" && break
	[ $try = 5 ] && { cat "$work/perr" >&2; exit 1; }
	sleep 0.1
done
wait $pid || { echo "${CMD[*]}: failed:" >&2; cat "$work/out" >&2; exit 1; }
cat "$work/out"
python3 - "$work" "$DUR" <<'PY'
import collections, re, sys
work, dur = sys.argv[1], float(sys.argv[2])
out = open(work + '/out').read()
m = re.search(r'throughput_bps=(\d+)', out)
if m:
    bps = float(m.group(1))
else:  # iperf3 -J: what its server received over the whole test
    import json
    bps = float(json.loads(out[out.index('{'):])['end']['sum_received']['bits_per_second'])
gb = bps * dur / 8 / 1e9
short = {'task-clock': 'ms', 'context-switches': 'cs', 'cpu-migrations': 'migr', 'signal:signal_deliver': 'sig',
         'raw_syscalls:sys_enter': 'sysc', 'irq:softirq_entry': 'softirq', 'ipi:ipi_send_cpu': 'ipi'}
cols = ['ms', 'cs', 'vol', 'invol', 'migr', 'sig', 'sysc', 'write', 'read', 'poll', 'ppoll', 'futex',
        'nanosleep', 'sched_yield', 'softirq', 'ipi']
th = collections.defaultdict(dict)
for line in open(work + '/stat'):
    f = line.strip().split(',')
    if len(f) < 4 or f[0].startswith('#') or f[1].startswith('<'):
        continue
    ev = f[3]
    th[f[0].rsplit('-', 1)[1]][short.get(ev, ev.replace('syscalls:sys_enter_', ''))] = float(f[1])
for t in th:  # switches out while runnable are involuntary
    th[t]['invol'] = th[t].get('sched:sched_switch', 0)
    th[t]['vol'] = th[t].get('cs', 0) - th[t]['invol']
tx = max(th, key=lambda t: th[t].get('write', 0))
rx = max(th, key=lambda t: th[t].get('read', 0))
def role(t):
    return 'tx' if t == tx else 'rx' if t == rx else 'oth'
print(f"{bps/1e9:.2f} Gb/s, {gb:.2f} GB in the {dur:g} s window; per GB (ms: CPU ms)")
print('%-7s %-4s' % ('tid', 'role') + ''.join('%8s' % c[:7] for c in cols))
oth = collections.Counter()
for t in sorted(th, key=lambda t: (role(t), t)):
    if th[t].get('ms', 0) == 0:
        continue
    print('%-7s %-4s' % (t, role(t)) + ''.join('%8.0f' % (th[t].get(c, 0) / gb) for c in cols))
    if role(t) == 'oth':
        oth.update({c: th[t].get(c, 0) for c in cols})
print('%-7s %-4s' % ('', 'othΣ') + ''.join('%8.0f' % (oth[c] / gb) for c in cols))
PY
