#!/usr/bin/env bash
# How often this machine's kernel ACKs, and how evenly its connections
# share the path, in cells of examples/kernel-calibration (issue 11: the
# model's Linux receiver, docs/engine.md "The receiver's ACKs").
#
#   [ROUNDS=1] [NAME=kacks] bench/kernel-acks/run.sh [CELL ...]
#
# For each CELL (default: all eight), ROUNDS times: one run of
#   tsolab test -engine kernel -name NAME -repeat 1 -no-capture -keep -scenario CELL
# with its own -name (no lock needed), the receiver namespace's TCP
# counters read before and after (/proc/net/snmp, /proc/net/netstat in
# tsl.NAME.rx): the receiver sends nothing but pure ACKs after the
# handshake, so OutSegs counts them; TcpExtDelayedACKs counts the
# delayed-ACK timer's. Segments are the run's bytes / MSS (its -json).
# About 1.5 s into the run, `ss -tin` in the same namespace gives each
# connection's bytes_received: the least over the greatest is how evenly
# the connections share. The lab is destroyed at the end. (The kernel
# engine's capture sees one direction, so it cannot count ACKs.)
# `perf stat` around the run counts the receivers' reads: read(2) calls
# that ask for READ bytes (the workload's read_size, 128 KiB by default;
# engine/kernel drain), an in-kernel count at the syscalls:sys_enter_read
# tracepoint, filtered on the size asked for, so no other read counts;
# and the run's reads that returned EAGAIN (sys_exit_read, ret == -11):
# the drain loop reads until one does and then sleeps in poll(2), so
# those are its sleeps, and the calls less them (data reads) the reads
# that brought data (any other read of the run's tsolab that returns
# EAGAIN would count as a sleep too). KB/dread is bytes per data read.
# Run it under the namespace lock: flock /work/.netns.lock bench/kernel-acks/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-1}
NAME=${NAME:-kacks}
READ=${READ:-131072}
LAB=examples/kernel-calibration
OUT=$(mktemp -d /tmp/kernel-acks.XXXXXX)
BIN=$OUT/tsolab
go build -o "$BIN" ./cmd/tsolab
cells=("$@")
if [ ${#cells[@]} -eq 0 ]; then
	for tso in false true; do for mtu in 1500 9000; do for rate in 2gbit line; do
		cells+=("tso=$tso,mtu=$mtu,rate=$rate")
	done; done; done
fi
ns=tsl.$NAME.rx
cleanup() { "$BIN" destroy -auto-approve -name "$NAME" "$LAB" >/dev/null 2>&1 || true; rm -rf "$LAB/.tsolab"; }
trap cleanup EXIT
# counter NAME...: the values of the named TCP/TcpExt counters in ns.
counters() {
	ip netns exec "$ns" cat /proc/net/snmp /proc/net/netstat 2>/dev/null | awk -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		/^(Tcp|TcpExt):/ { if (!($1 in head)) { for (i = 2; i <= NF; i++) name[$1, i] = $i; head[$1] = 1; next }
			for (i = 2; i <= NF; i++) v[name[$1, i]] = $i }
		END { for (i = 1; i <= n; i++) printf "%s ", (w[i] in v) ? v[w[i]] : 0; print "" }'
}
printf '%-30s %6s %9s %7s %9s %8s %7s %7s %8s %6s  %s\n' cell load pure_acks timer segments seg/ack reads sleeps KB/dread Gb/s "shares (least/greatest; bytes by connection)"
for r in $(seq 1 "$ROUNDS"); do
	for cell in "${cells[@]}"; do
		read -r out0 dl0 < <(counters OutSegs DelayedACKs)
		json=$OUT/$r-$cell.json
		perf stat -e syscalls:sys_enter_read --filter "count == $READ" -e syscalls:sys_exit_read --filter 'ret == -11' -x, -o "$OUT/$r-$cell.perf" -- \
			"$BIN" test -engine kernel -name "$NAME" -repeat 1 -no-capture -keep -json "$json" -scenario "$cell" "$LAB" >"$OUT/$r-$cell.log" 2>&1 &
		pid=$!
		for _ in $(seq 1 600); do grep -q '^running' "$OUT/$r-$cell.log" && break; sleep 0.1; done
		sleep 1.5
		shares=$(ip netns exec "$ns" ss -tin 2>/dev/null | grep -o 'bytes_received:[0-9]*' | cut -d: -f2 | tr '\n' ' ')
		wait $pid || true
		read -r out1 dl1 < <(counters OutSegs DelayedACKs)
		python3 - "$json" "$cell" "$(cut -d' ' -f1 /proc/loadavg)" $((out1 - out0)) $((dl1 - dl0)) "$shares" "$OUT/$r-$cell.perf" <<'PY'
import json, sys
path, cell, load, acks, timer, shares, perf = sys.argv[1:8]
reads = [int(l.split(",")[0]) for l in open(perf) if "sys_enter_read" in l][0]
sleeps = [int(l.split(",")[0]) for l in open(perf) if "sys_exit_read" in l][0]
run = json.load(open(path))["runs"][0]
m = run["metrics"]
segs = m["bytes"] / run["mss"]
b = [int(x) for x in shares.split()]
fair = "%.2f; %s" % (min(b) / max(b), " ".join("%.0f" % (x / 1e6) for x in b)) if b else "-"
print("%-30s %6s %9d %7d %9.0f %8.1f %7d %7d %8.1f %6.2f  %s" % (cell, load, int(acks), int(timer), segs, segs / max(int(acks), 1), reads, sleeps, m["bytes"] / max(reads - sleeps, 1) / 1e3, m["throughput_bps"] / 1e9, fair))
PY
	done
done
echo "files in $OUT"
