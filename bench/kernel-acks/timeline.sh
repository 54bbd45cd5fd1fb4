#!/usr/bin/env bash
# When this machine's kernel ACKs over a run: one kernel run of a cell of
# examples/kernel-calibration (issue 11: the receiver's window growth,
# docs/engine.md "The receiver's window growth").
#
#   [NAME=kackt] bench/kernel-acks/timeline.sh CELL
#
# The receiver namespace's Tcp InSegs and OutSegs (/proc/net/snmp; the
# receiver sends nothing but pure ACKs after the handshake) are read every
# ~10 ms while `tsolab test -engine kernel -repeat 1 -no-capture -keep
# -scenario CELL` runs; the table gives both, cumulative, 25, 50, 100,
# 200, 500, 1000 and 2000 ms after the data began (the first reading with
# more than 100 segments in, less one reading's interval). InSegs counts
# what TCP received as it came: with TSO on behind a veth, units, not
# segments. `ss -tinm` in the namespace 1.4 s into the run gives each
# connection's receive buffer (skmem rb) and rcv_ssthresh. The lab is
# destroyed at the end. Run it under the namespace lock:
# flock /work/.netns.lock bench/kernel-acks/timeline.sh CELL
set -euo pipefail
cd "$(dirname "$0")/../.."
CELL=${1:?usage: timeline.sh CELL}
NAME=${NAME:-kackt}
LAB=examples/kernel-calibration
OUT=$(mktemp -d /tmp/kernel-acks-timeline.XXXXXX)
BIN=$OUT/tsolab
go build -o "$BIN" ./cmd/tsolab
ns=tsl.$NAME.rx
cleanup() {
	[ -n "${poll:-}" ] && kill "$poll" 2>/dev/null || true
	"$BIN" destroy -auto-approve -name "$NAME" "$LAB" >/dev/null 2>&1 || true
	rm -rf "$LAB/.tsolab"
}
trap cleanup EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)
"$BIN" test -engine kernel -name "$NAME" -repeat 1 -no-capture -keep -scenario "$CELL" "$LAB" >"$OUT/log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ -e "/run/netns/$ns" ] && break; sleep 0.05; done
ip netns exec "$ns" bash -c 'while :; do echo "$(date +%s%N) $(grep "^Tcp: [0-9]" /proc/net/snmp)"; sleep 0.01; done' >"$OUT/snmp" 2>/dev/null &
poll=$!
for _ in $(seq 1 600); do grep -q '^running' "$OUT/log" && break; sleep 0.02; done
sleep 1.4
ip netns exec "$ns" ss -tinm >"$OUT/ss" 2>&1 || true
wait $pid || true
kill "$poll" 2>/dev/null || true
python3 - "$OUT/snmp" "$OUT/ss" "$CELL" "$load0" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import re, sys
snmp, ss, cell, load0, load1 = sys.argv[1:6]
rows = []
for l in open(snmp):
    f = l.split()
    if len(f) > 12 and f[1] == "Tcp:":
        rows.append((int(f[0]), int(f[11]), int(f[12])))  # time, InSegs, OutSegs
t0, in0, out0 = rows[0]
start = next(rows[i - 1][0] for i, r in enumerate(rows) if i > 0 and r[1] - in0 > 100)
print("%s, load %s -> %s" % (cell, load0, load1))
print("%8s %8s %9s %9s %8s" % ("ms", "read at", "segs in", "pure ACKs", "seg/ack"))
for ms in (25, 50, 100, 200, 500, 1000, 2000):
    t, i, o = [r for r in rows if r[0] <= start + ms * 1e6][-1]
    print("%8d %8.0f %9d %9d %8.1f" % (ms, (t - start) / 1e6, i - in0, o - out0, (i - in0) / max(o - out0, 1)))
text = open(ss).read()
rb = re.findall(r"rb(\d+)", text)
th = re.findall(r"rcv_ssthresh:(\d+)", text)
print("at 1.4 s, rb / rcv_ssthresh (KB):", " ".join("%d/%d" % (int(a) / 1024, int(b) / 1024) for a, b in zip(rb, th)))
PY
