#!/usr/bin/env python3
"""costs.py DIR TAG...: the kernel's CPU per step of the output path, per event, from run.sh's files
DIR/TAG.txt.gz (perf script) and DIR/TAG.json (the run's results). See run.sh."""
import collections, gzip, json, re, sys

SAMPLE_NS = 250_000.0  # cpu-clock at 4 kHz
LAB = re.compile(r'10\.77\.21\.')  # examples/kernel-calibration's addresses
# the kernel engine's workers name their threads "tsl" and 12 hex digits while
# they run (engine/kernel workerName); its other threads keep tsolab
WORKER = re.compile(r'^(tsolab|tsl[0-9a-f]{12})$')
HEAD = re.compile(r'^\s*(.+?)\s+(\d+)\s+([\d.]+):\s+(\S+?):?\s')

STEPS = {
    'copy': ['_copy_to_iter', '_copy_from_iter', 'rep_movs_alternative', 'copy_user_generic', '__skb_datagram_iter',
             'skb_copy_datagram_iter', 'skb_do_copy_data_nocache', 'skb_copy_to_page_nocache', '_copy_from_user',
             '_copy_to_user', 'copy_page_from_iter', 'copy_page_to_iter'],
    'gso': ['skb_segment', 'tcp_gso_segment', 'inet_gso_segment', 'skb_mac_gso_segment', '__skb_gso_segment', 'tcp4_gso_segment'],
    'driver': ['veth_xmit', 'dev_hard_start_xmit', 'xmit_one', 'veth_forward_skb', '__netif_rx', 'netif_rx_internal',
               'enqueue_to_backlog', 'validate_xmit_skb', 'validate_xmit_skb_list', 'sch_direct_xmit', 'netif_rx'],
    'qdisc': ['tbf_enqueue', 'tbf_dequeue', '__qdisc_run', 'dequeue_skb', 'net_tx_action', 'qdisc_watchdog', 'tbf_segment'],
    'stack': ['__tcp_transmit_skb', 'tcp_transmit_skb', '__ip_queue_xmit', 'ip_queue_xmit', 'ip_output', 'ip_finish_output2',
              'ip_finish_output', '__ip_finish_output', 'ip_local_out', '__ip_local_out', '__dev_queue_xmit', 'tcp_write_xmit',
              '__tcp_push_pending_frames', 'tcp_push', 'tcp_tsq_handler', 'tcp_tasklet_func', 'tcp_tsq_write'],
    'free': ['kfree_skb_reason', 'sk_skb_reason_drop', 'consume_skb', '__kfree_skb', 'skb_release_data', 'kfree_skbmem',
             'skb_release_head_state', 'napi_consume_skb', 'skb_attempt_defer_free', 'skb_defer_free_flush', 'tcp_eat_recv_skb',
             'skb_free_head', 'tcp_wfree', 'kfree_skb_list_reason', 'sk_eat_skb', '__kfree_skb_defer', 'napi_skb_cache_put'],
    'ack_tx': ['__tcp_send_ack', '__tcp_send_ack.part.0', 'tcp_send_ack', 'tcp_send_delayed_ack', 'tcp_delack_timer_handler',
               'tcp_delack_timer'],
    'ack_rx': ['tcp_ack'],
    'rx': ['ip_rcv', 'ip_rcv_core', 'ip_rcv_finish', 'ip_local_deliver', 'ip_local_deliver_finish', 'tcp_v4_rcv', 'tcp_v4_do_rcv',
           'tcp_rcv_established', 'tcp_data_queue', 'tcp_queue_rcv', '__netif_receive_skb_core', '__netif_receive_skb_one_core',
           '__netif_receive_skb', 'process_backlog', 'net_rx_action', 'ip_protocol_deliver_rcu', 'tcp_add_backlog',
           '__release_sock', 'release_sock', 'tcp_v4_early_demux', 'ip_rcv_finish_core'],
    'read': ['tcp_recvmsg_locked', 'tcp_recvmsg', 'sock_recvmsg', 'sock_read_iter', 'vfs_read', 'ksys_read', 'inet_recvmsg',
             'tcp_rcv_space_adjust', 'tcp_cleanup_rbuf', '__tcp_cleanup_rbuf', 'sk_wait_data'],
    'write': ['tcp_sendmsg_locked', 'tcp_sendmsg', 'sock_sendmsg', 'sock_write_iter', 'vfs_write', 'ksys_write', 'inet_sendmsg',
              'sk_stream_wait_memory', 'tcp_stream_alloc_skb', 'tcp_skb_entail'],
    'poll': ['do_sys_poll', '__x64_sys_ppoll', '__se_sys_ppoll', '__do_sys_ppoll', '__x64_sys_poll', 'do_poll', 'do_poll.constprop.0', 'tcp_poll',
             'sock_poll', 'poll_freewait', 'poll_schedule_timeout', 'poll_schedule_timeout.constprop.0', '__pollwait'],
}
STEP = {f: s for s, fns in STEPS.items() for f in fns}
# the system call a sample is in: its entry, exit and scheduling (a poll's
# sleep and wake-up) count to the call's step when no inner step names it
CALL = {'ksys_read': 'read', '__x64_sys_read': 'read', 'ksys_write': 'write', '__x64_sys_write': 'write',
        '__x64_sys_ppoll': 'poll', '__se_sys_ppoll': 'poll', '__do_sys_ppoll': 'poll', 'do_sys_poll': 'poll'}
# a context holding one of these is that step whole, as the model charges it
WHOLE = [('ack_tx', {'__tcp_send_ack', '__tcp_send_ack.part.0', 'tcp_send_ack'}), ('ack_rx', {'tcp_ack'}),
         ('gso', {'skb_segment', '__skb_gso_segment'})]
# a copy under one of these is the sender's (into the write queue's pages);
# any other the receiver's (to the reader's buffer)
COPY_TX = {'_copy_from_iter', 'skb_do_copy_data_nocache', 'skb_copy_to_page_nocache', 'copy_page_from_iter',
           '_copy_from_user', 'tcp_sendmsg_locked', 'tcp_sendmsg'}
SOFTIRQ = {'handle_softirqs', '__do_softirq', 'do_softirq', '__irq_exit_rcu', 'irq_exit_rcu'}


def step(frames):
    """The step of a sample whose stack is frames (leaf first), cut at its innermost softirq entry."""
    ctx = []
    for f in frames:
        if f in SOFTIRQ:
            break
        ctx.append(f)
    if any(f.startswith(('perf_', '__perf')) for f in ctx):
        return 'perf'
    names = set(ctx)
    for s, fns in WHOLE:
        if names & fns:
            return s
    call = next((CALL[f] for f in ctx if f in CALL), None)
    for f in ctx:
        if f in STEP:
            if STEP[f] == 'copy':
                return 'copy_tx' if names & COPY_TX else 'copy_rx'
            return call if STEP[f] in CALL.values() and call else STEP[f]
    if call:
        return call
    return 'softirq entry' if len(ctx) < len(frames) else 'other'


def samples(path):
    with gzip.open(path, 'rt', errors='replace') as fh:
        head, frames = None, []
        for line in fh:
            if not line.strip():
                continue
            if line[0] == '\t':
                parts = line.split(None, 1)
                if head is not None and len(parts) == 2:
                    frames.append(parts[1].strip().split('+')[0])
                continue
            if head:
                yield head, frames
            head, frames = line, []
        if head:
            yield head, frames


def windows(path):
    """The lab's runs: spans of its tcp_probe events, split at gaps over 0.5 s."""
    ts = sorted(float(m.group(3)) for h, _ in samples(path) if 'tcp_probe' in h and LAB.search(h) for m in [HEAD.match(h)] if m)
    spans, a, b = [], ts[0], ts[0]
    for t in ts[1:]:
        if t - b > 0.5:
            spans.append((a, b))
            a = t
        b = t
    return spans + [(a, b)]


def run(d, tag):
    path = f'{d}/{tag}.txt.gz'
    spans = windows(path)
    steps, acks, foreign, calls = collections.Counter(), 0, 0, collections.Counter()
    for head, frames in samples(path):
        m = HEAD.match(head)
        if not m or not any(a <= float(m.group(3)) <= b for a, b in spans):
            continue
        comm, ev = m.group(1), m.group(4)
        if ev.startswith('tcp:tcp_probe'):
            if not LAB.search(head):
                foreign += 1
            elif re.search(r'data_len=0\b', head):
                acks += 1
        elif ev.startswith('syscalls:sys_enter_') and WORKER.match(comm):
            calls[ev[len('syscalls:sys_enter_'):]] += 1
        elif ev.startswith('cpu-clock'):
            s = step(frames)
            if WORKER.match(comm) or (any(f in SOFTIRQ for f in frames) or comm.startswith('ksoftirqd')) and s not in ('other', 'perf'):
                steps[s] += 1
    queued = queued_bytes(f'{d}/{tag}.ss', spans)
    r = json.load(open(f'{d}/{tag}.json'))['runs'][0]
    met = r['metrics']
    return {'tag': tag, 'foreign': foreign, 'steps': steps, 'acks': acks, 'reads': calls['read'], 'writes': calls['write'],
            'polls': calls['ppoll'], 'queued': queued, 'calls': sum(calls.values()), 'segs': met['bytes'] / r['mss'],
            'units': met['send_units'], 'bytes': met['bytes'], 'secs': met['duration_s'], 'gbps': met['throughput_bps'] / 1e9,
            'cpu': met['cpu_tx_pct'] + met['cpu_rx_pct']}


def median(xs):
    xs = sorted(x for x in xs if x == x)
    return xs[len(xs) // 2] if xs else float('nan')


SKMEM = re.compile(r'skmem:\(r(\d+),rb\d+,t\d+,tb\d+,f\d+,w(\d+)')


def queued_bytes(path, spans):
    """The median over run.sh's ss samples in the lab's window of the bytes between the writers and the readers: the
    sum over the lab's sockets of the send queue (wmem_queued) and the receive queue (rmem_alloc), in truesize."""
    at = collections.Counter()
    try:
        fh = open(path)
    except OSError:
        return float('nan')
    for line in fh:
        parts = line.split(None, 1)
        m = SKMEM.search(line)
        if len(parts) == 2 and m and LAB.search(line):
            at[parts[0]] += int(m.group(1)) + int(m.group(2))
    # ss's clock is the wall clock, perf's the monotonic one: the samples
    # are kept while the lab's sockets hold data, which is the run
    return median([v for v in at.values() if v > 0])


def figures(rs):
    """Per event over the runs rs pooled: ns, or ns/B for the copy."""
    n = lambda k: sum(r[k] for r in rs)
    st = lambda s: sum(r['steps'][s] for r in rs) * SAMPLE_NS
    per = lambda s, k: st(s) / n(k) if n(k) else float('nan')
    return [('Gb/s', n('gbps') / len(rs)), ('cpu_tx+cpu_rx %', n('cpu') / len(rs)),
            ('counted % of a core (steps)', sum(v for r in rs for s, v in r['steps'].items() if s not in ('softirq entry', 'other', 'perf')) * SAMPLE_NS / 1e7 / n('secs')),
            ('softirq entry % (unattributed)', st('softirq entry') / 1e7 / n('secs')),
            ('stack_per_skb ns/unit', per('stack', 'units')), ('gso_per_seg ns/seg', per('gso', 'segs')),
            ('driver_per_unit ns/seg', per('driver', 'segs')), ('qdisc ns/seg (not modelled)', per('qdisc', 'segs')),
            ('tx_completion ns/seg', per('free', 'segs')), ('ack_tx ns/ACK', per('ack_tx', 'acks')),
            ('ack_rx ns/ACK', per('ack_rx', 'acks')), ('rx_per_skb ns/seg', per('rx', 'segs')),
            ('copy_per_byte ns/B (x2 copies)', (st('copy_tx') + st('copy_rx')) / (2 * n('bytes'))),
            ('  the sender\'s copy ns/B', st('copy_tx') / n('bytes')), ('  the receiver\'s copy ns/B', st('copy_rx') / n('bytes')),
            ('bytes a read (KB)', n('bytes') / n('reads') / 1e3 if n('reads') else float('nan')),
            ('bytes a write (KB)', n('bytes') / n('writes') / 1e3 if n('writes') else float('nan')),
            ('queued w+r, median (MB)', median([r['queued'] for r in rs]) / 1e6), ('read ns/read', per('read', 'reads')),
            ('poll ns/poll', per('poll', 'polls')), ('read cycle ns/poll (reads+polls)', (st('read') + st('poll')) / n('polls') if n('polls') else float('nan')),
            ('write ns/write', per('write', 'writes')),
            ('segments', n('segs')), ('units', n('units')), ('pure ACKs', n('acks')), ('reads', n('reads')), ('polls', n('polls')),
            ('writes', n('writes'))]


def main():
    d, tags = sys.argv[1], sys.argv[2:]
    rs = []
    for t in tags:
        r = run(d, t)
        if r['foreign']:
            print(f'{t}: left out, {r["foreign"]} segments of other labs in its window')
        else:
            rs.append(r)
    if not rs:
        sys.exit('no run free of other labs\' traffic')
    cols = [(r['tag'], figures([r])) for r in rs]
    for cell in sorted({r['tag'].rsplit('_r', 1)[0] for r in rs}):
        cols.append((cell + ' pooled', figures([r for r in rs if r['tag'].rsplit('_r', 1)[0] == cell])))
    cols.append(('all pooled', figures(rs)))
    print('%-32s' % 'figure' + ''.join('%26s' % c[:26] for c, _ in cols))
    for i, (name, _) in enumerate(cols[0][1]):
        print('%-32s' % name + ''.join('%26.4g' % f[i][1] for _, f in cols))


main()
