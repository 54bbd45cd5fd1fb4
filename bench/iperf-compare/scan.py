#!/usr/bin/env python3
"""The table of a scan.sh file: each driver run against the iperf3 runs
on either side of it (a triplet), by the machine's state, and each
driver against the first in the same rotation.

    scan.py [-s SLOW] [-f FAST] FILE NAME...

A line of FILE: unix time, tag (I: iperf3, else a driver's NAME), Gb/s
received, sender CPU and receiver CPU in % of one core, and for a driver
its other threads' part (already in its sender CPU)."""

import argparse
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-s", type=float, default=65, help="both iperf3 runs below: the usual state")
    ap.add_argument("-f", type=float, default=80, help="both iperf3 runs at or above: the fast state")
    ap.add_argument("file")
    ap.add_argument("names", nargs="+")
    a = ap.parse_args()
    runs = []
    for line in open(a.file):
        f = line.split()
        if len(f) >= 5:
            runs.append((f[1], float(f[2]), float(f[3]), float(f[4])))

    def state(lo, hi):
        if hi < a.s:
            return "usual"
        if lo >= a.f:
            return "fast"
        return None

    # Ratios to the flanking iperf3 runs' mean: throughput, sender CPU
    # per Gb/s, sender + receiver CPU per Gb/s.
    trip = {}
    for i, (tag, gbps, tx, rx) in enumerate(runs):
        if tag == "I" or gbps <= 0:
            continue
        before = next((r for r in reversed(runs[:i]) if r[0] == "I"), None)
        after = next((r for r in runs[i + 1:] if r[0] == "I"), None)
        if not before or not after or before[1] <= 0 or after[1] <= 0:
            continue
        st = state(min(before[1], after[1]), max(before[1], after[1]))
        if st is None:
            continue
        ig = (before[1] + after[1]) / 2
        itx = (before[2] / before[1] + after[2] / after[1]) / 2
        iall = ((before[2] + before[3]) / before[1] + (after[2] + after[3]) / after[1]) / 2
        trip.setdefault((tag, st), []).append((gbps / ig, tx / gbps / itx, (tx + rx) / gbps / iall))
    print("against iperf3 (the mean of the runs on either side), medians:")
    print("%-10s %-6s %5s %10s %14s %14s" % ("driver", "state", "runs", "throughput", "sender CPU/Gb", "all CPU/Gb"))
    for name in a.names:
        for st in ("usual", "fast"):
            t = trip.get((name, st), [])
            if t:
                print("%-10s %-6s %5d %9.1f%% %13.1f%% %13.1f%%" % (
                    name, st, len(t), 100 * statistics.median(x[0] for x in t),
                    100 * statistics.median(x[1] for x in t), 100 * statistics.median(x[2] for x in t)))
    if len(a.names) < 2:
        return
    # Each driver against the first in the same rotation (the runs
    # between two iperf3 runs), by the state of those iperf3 runs.
    first = a.names[0]
    pairs = {}
    i = 0
    while i < len(runs):
        if runs[i][0] != "I":
            i += 1
            continue
        j = i + 1
        rot = {}
        while j < len(runs) and runs[j][0] != "I":
            rot[runs[j][0]] = runs[j]
            j += 1
        if j < len(runs) and first in rot and rot[first][1] > 0:
            st = state(min(runs[i][1], runs[j][1]), max(runs[i][1], runs[j][1]))
            f = rot[first]
            for name, r in rot.items():
                if name != first and st and r[1] > 0:
                    pairs.setdefault((name, st), []).append((r[1] / f[1], (r[2] / r[1]) / (f[2] / f[1])))
        i = j
    print("against %s in the same rotation, medians:" % first)
    for name in a.names[1:]:
        for st in ("usual", "fast"):
            p = pairs.get((name, st), [])
            if p:
                print("%-10s %-6s %5d %9.1f%% %13.1f%%" % (
                    name, st, len(p), 100 * statistics.median(x[0] for x in p), 100 * statistics.median(x[1] for x in p)))


if __name__ == "__main__":
    main()
