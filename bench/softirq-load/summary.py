#!/usr/bin/env python3
"""Medians of bench/softirq-load/run.sh's runs: summary.py OUT [-v]."""
import glob
import json
import os
import statistics
import sys

out = sys.argv[1]
rows = {}
for f in sorted(glob.glob(os.path.join(out, '*.json'))):
    mode, _, name = os.path.basename(f)[:-5].split('-', 2)
    for r in json.load(open(f))['runs']:
        m = r['metrics']
        notes = [n for n in r.get('notes', []) if n.startswith('softirq')]
        rows.setdefault(name, {}).setdefault(mode, []).append(
            (m['throughput_bps'] / 1e9, m['cpu_tx_pct'], m['cpu_rx_pct'], m['cpu_tx_pct'] + m['cpu_rx_pct'], notes))
cols = ['Gb/s', 'cpu_tx_pct', 'cpu_rx_pct', 'tx+rx']
for name, modes in sorted(rows.items()):
    med = {mode: [statistics.median(r[i] for r in rs) for i in range(4)] for mode, rs in modes.items()}
    for mode, rs in sorted(modes.items(), reverse=True):
        print(f'{name} {mode:5} n={len(rs)} ' + ' '.join(f'{c} {v:.2f}' for c, v in zip(cols, med[mode])))
        if '-v' in sys.argv:
            for r in rs:
                for n in r[4]:
                    print('   ', n)
    for loaded in ('busy', 'beside'):
        if 'quiet' in med and loaded in med:
            print(f'{name} {loaded}/quiet ' + ' '.join(f'{c} {b / q:.2f}x' for c, q, b in zip(cols, med['quiet'], med[loaded]) if q))
