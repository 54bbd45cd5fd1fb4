#!/usr/bin/env bash
# Compare tsolab's kernel-engine stream with iperf3 on the same two
# namespaces joined by a veth pair (MTU 1500, 128 KiB writes), with 1 and
# 4 connections (-P), TSO on and off on the sender's NIC. Each round runs
# every case as a pair, iperf3 and tsolab back to back (which goes first
# alternates by round), so that each ratio is taken within a pair; the
# table shows the medians over the rounds, and the throughput ratio's
# lowest and highest round (range: on a loaded machine one round can
# lose half its throughput to another task). Both throughputs are taken at
# the receiver: iperf3's (-J end.sum_received) is what its server read
# from its TEST_START to its TEST_END (what is still queued then is not
# counted, nor is the time to drain it), tsolab's is everything its
# receivers read until EOF over the run's start to the last worker's
# end, the drain after the deadline included; that tail took 2-18 ms of
# a 3 s run at the run's own rate (session 8, TSO on and off: 14.30
# Gb/s up to the deadline against 14.297 with the tail), so the two
# windows agree within 0.1%. Both tools' CPU is what their own threads
# used over the run, in % of one core per Gbit/s received, as iperf3 -J
# reports it (host_total and remote_total: clock(), the client's and the
# server's process CPU time over each one's test window, user + system,
# which is the threads' runtime; softirq work done in a
# thread's context is part of it, softirq on an idle CPU is not). For
# tsolab the sender is its sending threads plus every other thread of the
# process (Go runtime, sampler), the receiver its receiving threads. The
# tsolab runs count nothing (-capture=false), as iperf3 does not. The
# machine's load average and CPU pressure (/proc/pressure/cpu: the share
# of time some task waited for a CPU) at the start and the end are
# printed with the table: on a loaded machine both tools wait for the
# CPU, and the figures measure the scheduler as much as the tools.
#
#   bench/iperf-compare/run.sh [-d SECONDS] [-r ROUNDS] [-P "1 4"] [-a CC] [-c] [-B "REV..."] [-C] [-G "VARIANTS"] [-k DIR]
#
# -a CC names the congestion control both tools' senders run (default
# cubic, as the examples and the model; -a bbr for this machine's
# default; -a default for whatever the namespaces' default is): iperf3
# -C CC and the driver's -cc CC (TCP_CONGESTION as root, so a congestion
# control outside net.ipv4.tcp_allowed_congestion_control works too; a
# namespace's default can only be an allowed one). The script checks
# what each run's sockets read back (iperf3's sender_tcp_congestion, the
# driver's cc=) and stops on a mismatch; the table's header names it. A
# -B tree whose driver has no -cc (before session 13) runs only with
# -a default. The namespaces' default is set to CC where the kernel
# allows it, reno otherwise: iperf3 applies -C only after connect, and a
# socket that started on BBR stays paced (below). Before session 13 the
# script named none and both tools ran the machine's default (BBR
# here), whose pacing timer sends from
# whatever thread runs.
#
# With -k DIR the per-round rows (rows.P.TSO and, with -B, -C, -G, the
# other trees' and loops' files; their columns are described above the
# rounds' loop below) are copied to DIR, to look at each round's ratios.
#
# With -B REV the driver is also built from git revision REV (e.g. main
# before a change) and run in every round beside the other two (the
# order rotates by round), so that a change's effect is measured in
# pairs: the table adds that tree's throughput and new/old, the medians
# of the per-round ratios of throughput, of sender, of receiver and of
# sender + receiver CPU per Gbit/s. With several revisions (-B "main
# REV2"), each is built and run in every round, the table's columns are
# the first's, and a second table gives the same for each.
#
# With -C (one connection only; needs gcc) every round also runs cloop
# (cloop/cloop.c: tsolab's stream loops in C, two threads of one process, no Go
# runtime) on the same pair, and the table adds its throughput and the
# medians of the per-round ratios cloop/iperf3 (what the loops do) and
# tsolab/cloop (what the Go runtime and the engine add), throughput and
# sender CPU per Gbit/s.
#
# With -G "VARIANTS" (implies -C) every round also runs goloop
# (goloop/main.go: the same loops as a bare Go program, two locked
# goroutines) once per variant, e.g. -G "bare procs+pass+meter raw": each
# variant adds steps of tsolab's workers (goloop's doc lists them), so
# that tsolab/cloop splits into what each step costs. A second table
# gives, per variant, its throughput and the medians of the per-round
# ratios variant/cloop (throughput, sender and receiver CPU per Gbit/s) and
# tsolab/variant (throughput).
#
# The receiving side (session 12; engine/kernel's doc.go "The receiving
# side against iperf3's server" has the figures): tsolab's receivers make
# fewer system calls a GB than iperf3's server and no more context
# switches (receivers.sh counts both tools' receiving threads), set no
# socket option, and sample no more a GB in unpaired runs; reading
# again after a short read, as iperf3's server does, came out level
# with main (-B main -P 1, three runs, load 4-20: throughput 94.3-112.0%,
# receiver CPU per Gbit/s 82.8-102.1%, sender + receiver 97.8-101.5%,
# no gain resolved); fewer
# receiving threads reading several connections from one epoll set, as
# iperf3 3.12's server does, lost throughput and paid more a byte (-B
# main, four connections: one thread 62-68% of main's throughput, sender
# + receiver CPU per Gbit/s 103-106%, load 6-13; two threads 72-87% and
# 104-118%, load 10; one thread under prio.sh 55-64% and 92-101%, load
# 4-10). A driver without the softirq meter (which runs only in
# tsolab's runs) had sender + receiver CPU per Gbit/s 93-103% of main's
# in two runs (load 9-16): no cost resolved. rx_cpu below has no
# target: which side pays for a transmit moves cost between ts_tx and
# ts_rx.
#
# Under CUBIC (-a cubic, session 13) tsolab ran at 289-308% of iperf3
# with TSO on in the lead's quiet run (load 0.6-2.5; 67.9 against 23.0
# Gb/s with one connection), level under BBR. Checked with independent
# counts (rx0's rx_bytes over each run agreed with both tools' figures
# within 0.2%): the figure is true, and iperf3 is held back by where its
# segments are sent from. iperf3's receiver's CPU sends a share of its
# data (23-36% with -A 0,1, 0.005% for tsolab's receiver; sendctx.sh),
# on veth each CPU's transmits go to its own backlog, the flow arrives
# out of order, and CUBIC cuts its window at the spurious fast
# retransmits (iperf3's slow rounds, 13-19 Gb/s, had up to 1489 of
# them, those checked all DSACKed; tsolab's
# 0-10). Why: iperf3 -C sets TCP_CONGESTION after connect(), so its
# socket starts on the namespace's default, BBR, which marks it for
# TCP's internal pacing, and the switch to CUBIC does not clear that:
# iperf3 ran a paced CUBIC (its segments sent by the pacing timer on
# whichever CPU it fired), tsolab (TCP_CONGESTION before connect) an
# unpaced one. Since then (see -a above) the namespaces' default is the
# -a congestion control where allowed, reno otherwise, and the figures
# before it under -a cubic are paced iperf3 against unpaced tsolab.
# With the fix (15:11-15:14 UTC, -d 3 -r 5, load 14-18, CPU pressure
# 97-99%) the ratio stayed 284.5% (59.8 against 21.0 Gb/s), 141.1%,
# 317.7%, 345.7%, tx_cpu 98.3%, 114.9%, 113.0%, 135.3%, iperf3 using
# 17-20% of a core a side with TSO on: not CPU-bound (doc.go). Again
# with -d 3 -r 7 (15:19-15:22, load 14-18, pressure 91-97%): 180.9%
# (62.2 against 34.1 Gb/s), 128.1%, 408.9%, 333.1%; tx_cpu 93.7%,
# 124.6%, 108.3%, 106.1% (three missed); all_cpu 100.4%, 118.2%,
# 100.6%, 107.4%. A third (-r 4 -P 1, 15:27, load 12-19, pressure
# 65-87%) was level: 100.2% and 107.9%, tx_cpu 114.8% and 104.0%,
# all_cpu 102.2% and 103.1%. Not yet run on a quiet machine with the fix.
# Where the two threads of each tool share a CPU (a loaded
# machine) the gap closes to 1.2-1.5. engine/kernel/doc.go, "Session 13,
# against iperf3 under CUBIC", has the figures and the commands.
#
# Session 13, before the namespaces' default was set (so iperf3's
# CUBIC was paced, above; BBR unaffected) (2 December 14:36-14:48, this tree at
# cb99802/b498454, `run.sh -d 3 -r 7 -P 1 -a cubic`, then -P 4, then -a
# bbr -P 1 and -P 4, each under the lock; load 11-28, CPU pressure
# 94-99%): tsolab/iperf3 throughput under CUBIC 254.4% (58.4 against
# 22.1 Gb/s) and 199.6% (10.5 against 5.2) with one connection, TSO on
# and off, 761.8% and 218.7% with four; sender CPU per Gbit/s 66.5%,
# 56.2%, 43.5%, 104.8% (missed), sender + receiver 69.5%, 92.0%, 41.1%,
# 121.6%. Under BBR 186.0%, 272.3%, 616.8%, 471.4%; sender 105.0%
# (missed), 87.8%, 184.8% (missed), 130.1% (missed); sender + receiver
# 101.2%, 99.1%, 102.5%, 115.7%. iperf3 ran at 1.2-22 Gb/s there against
# 12.7-43.7 in the lead's quiet run: at that load the ratios say more
# about where the scheduler put each tool's threads than about the
# tools.
#
# How far the rounds scatter (session 12, 2 December, normal priority,
# one connection: `run.sh -d 3 -r 9 -P 1 -B main -k DIR` with this tree
# at 435ac4e and main a few commits on, whose data path differs only in
# the softirq meter's owner programs (239aa7a-c579e9e); load 7.1 ->
# 10.2, CPU pressure avg10 54% -> 15%): tsolab/iperf3 throughput 110.8%
# with TSO off (rounds 68-241%) and 101.3% on (56-141%), sender CPU per
# Gbit/s 103.7% (rounds 40-448%) and 98.0% (61-173%); new/old
# throughput 103.5% and 98.8% (rounds 0.33-1.83 and 0.43-2.76), sender
# CPU per Gbit/s 96.2% and 95.3% (0.39-2.88 and 0.65-1.05), sender +
# receiver 91.2% and 100.3%. On a loaded machine a round's ratio moves
# by a factor of 2-4 (which thread pays for a transmit follows where
# the threads run: engine/kernel/doc.go, "Session 12, the sending
# side"), so one run of nine rounds resolves only a change of several %.
#
# Session 14 (h1; engine/kernel/doc.go, "Session 14, what the sending
# process does beside the write"): `-d 3 -r 4 -a cubic -P 1 -B
# e04ffd4~1` twice against a cut that kept the workers' thread names over
# their passes (18:54 and 18:58 UTC, load 7.6 -> 7.4 and 7.6 -> 6.0, CPU
# pressure 35-91%): tsolab/iperf3 126.0% and 93.7% with TSO on, 115.5%
# and 152.8% off; sender CPU per Gbit/s 115.4% and 104.7% (on), 125.8%
# and 43.9% (off); new/old throughput 86.7% and 72.3% (on), 90.0% and
# 99.5% (off): the cut was taken back. At load 20-24 (-B "main NOSKB
# NOSIRQ", scratch trees without the softirq meter's skb owner program
# and without the meter) the rounds ranged 0.4x-5x: nothing resolved.
#
# Session 16 (h1), where the spread comes from, under CUBIC, tree
# 2f6fd8d (`flock /work/.netns.lock /work/tools/prio.sh run.sh -d 3 -r 15
# -P 1 -a cubic -k DIR` at 10:29 and 10:33 UTC, load 1.6 -> 3.4, CPU
# pressure 4-50%; -P 4 at 10:40, load 5.2 -> 6.3, pressure 51-65%):
# the guest's steal time was 0 ticks in every run (/proc/stat); the
# guest has no cpufreq (a fixed 2096 MHz); the namespaces keep TCP
# metrics, but with tcp_no_ssthresh_metrics_save 1 a connection inherits
# only the last one's RTT (either tool's), not its ssthresh. The rounds
# share a state that moves both tools: with one connection the sender's
# CPU per Gbit/s of iperf3 and tsolab in the same round correlate
# (log scale) 0.75-0.77 with TSO on and 0.94-0.95 off, where it is
# bimodal (1-2.5 or 5-11 % of a core per Gbit/s in both tools, by
# stretches of rounds; which thread pays for the receive softirq is a
# guess, not measured), and
# the throughputs 0.73-0.77 off; pairing takes that out (sd of the log
# of a tool's sender CPU 0.18-0.83, of the pair's ratio 0.20-0.26). What
# stays, 8-30% a pair with one connection (sd of the log ratio:
# throughput 0.08-0.17, sender CPU 0.20-0.26; 0.18-0.74 with four, whose
# sender CPUs did not correlate), is too much for 7 rounds to place a
# median within 5% of a target: the 95% interval of 15 rounds' median
# spans 6-37 points. Who goes first moved the medians by 1-129 points with no
# sign that held in both throughput and CPU (each half had 7-8
# rounds); the first round after the namespaces were made was inside
# the others' range (one connection, TSO on: throughput 99.2% and
# 101.0%, sender CPU 117.9% and 117.4%); over the seven runs below the
# sender CPU ratio was higher in the rounds tsolab went first in 9 of
# 14 cells. Neither tool pins a thread. A /proc reader sampling every 20
# ms which CPU each thread last ran on (the 10:33 run) saw tsolab's two
# workers on one CPU more often than iperf3's client and server (80.5%
# of 1736 samples against 67.1% of 1283), but it takes a CPU itself at
# each sample and cannot tell tsolab's sender from its receiver; perf
# sched record over `run.sh -d 3 -r 4 -P 1` (10:44-10:50) saw both
# tools' threads alike (each thread's share of time on the other's CPU
# 0.06-0.90 for iperf3, 0.01-0.84 for tsolab; runnable but waiting
# 18-278 ms a run in both). The NET_RX softirqs' CPU moved between the
# two CPUs from run to run in both tools. Why the sender CPU flips (each
# sender busy all of a core in some rounds, about half in others, both
# tools alike): engine/kernel/doc.go, "Session 16".
#
# Session 16's decision (h1; `flock /work/.netns.lock /work/tools/prio.sh
# run.sh -d 3 -r 15 -P N -a cubic -k DIR`, one -P a lock hold, trees
# 2f6fd8d-67f624e, whose data path is main's; steal 0 in every run).
# Median of the per-pair ratios (ci), '!' missed, '?' unresolved, the
# cells TSO on and off, throughput then sender CPU per Gbit/s:
#   -P 1 10:29 (load 1.8 -> 2.9): 102.4% (96-107), 99.7%? (93-104);
#     109.2%? (90-116), 102.1%? (96-121)
#   -P 1 10:33 (load 1.6 -> 3.4, the /proc reader running): 96.8%?
#     (93-99), 95.1%? (84-110); 113.9%! (108-145), 116.9%? (94-130)
#   -P 1 10:50 (load 2.5 -> 8.1): 102.3% (96-136), 110.6%? (94-143);
#     105.9%? (92-119), 129.1%? (97-226)
#   -P 1 10:54 (load 7.9 -> 6.4): 127.0% (100-152), 118.3% (102-133);
#     99.6%? (91-114), 122.9%? (78-205)
#   -P 4 10:39 (load 5.2 -> 6.3): 140.3% (114-191), 164.9% (142-184);
#     114.0%! (108-134), 237.1%! (105-308)
#   -P 4 10:43 (load 5.8 -> 5.1): 168.0% (125-191), 163.8% (156-191);
#     96.3%? (68-117), 112.8%? (84-169)
#   -P 4 10:59 (load 5.6 -> 10.8): 207.2% (147-300), 157.9% (144-220);
#     118.4%! (111-133), 190.0%! (107-322)
# No throughput target was missed in any run; with one connection four
# of the eight intervals reach below 95%, so one run cannot place them.
# All the pairs of a -P together (60 and 45; the same statistic, which
# takes the runs' pairs as alike, though their load differed):
# throughput 100.7% (98.4-104.7), 103.9% (97.3-110.6), 171.2%
# (140.3-191.3), 163.8% (156.1-179.7): met in all four cells; sender
# CPU per Gbit/s 108.1% (103.9-113.9) and 114.0% (107.5-119.7) with TSO
# on: missed, by 4-14 and 8-20 points; 116.5% (98.7-125.7) and 135.3%
# (111.1-220.5) with TSO off: unresolved and missed. Sender + receiver
# CPU per Gbit/s (medians of the same pairs): 102.8%, 102.2%, 95.7%,
# 100.7%. With four connections iperf3 3.12 sends its streams from one
# thread (33% of a core in the 10:59 run against tsolab's four workers'
# 94%) at half tsolab's rate, and its receiver pays more a Gbit/s
# (rx_cpu 87.5% and 93.2% there).
#
# Targets (issues 16 and 14), checked on the median of the per-pair
# ratios (each round's tsolab figure over the same round's iperf3 figure):
#   ratio   tsolab/iperf3 throughput >= 95% in every case
#   tx_cpu  tsolab/iperf3 sender CPU per Gbit/s <= 100% in every case
# Each is printed with a distribution-free confidence interval of that
# median (ci: the order statistics x(k) and x(n+1-k) of the n rounds'
# ratios, k the largest with P(Binomial(n, 1/2) < k) <= 2.5%, so that it
# covers the true median with >= 95%; its coverage is printed; below 6
# rounds no k does, and the interval is the lowest to the highest round
# with less: 93.8% at 5). A target
# is met when the whole interval is on its side, missed when the whole
# interval is on the other side, and unresolved otherwise: with 7 rounds
# the interval is the lowest to the highest round (k = 1), with 15 (the
# default -r since session 16; it was 5) the 4th to the 12th. The script exits 1 when a target is missed, 3 when
# none is missed and one is unresolved, 0 when every one is met. Before
# session 16 it checked the median alone, which flipped between met and
# missed from run to run on the same tree (session 15: 94.4% and 113.2%
# twenty minutes apart, rounds 81-105 and 95-130).
# The table's order line gives the same medians over the rounds where
# iperf3 ran first and over those where tsolab did (the order rotates by
# round), and the header the guest's steal time over the run
# (/proc/stat), so that the order and the hypervisor can be read off.
# With -c each round also runs tsolab with its default send-unit counter
# (eBPF at TCX egress, "+count") and with the AF_PACKET ring ("+ring"),
# and checks (issue 3): the default counter costs <= 5% of the
# throughput, capture_loss < 1% of the packets. Needs root.
set -euo pipefail

. "$(dirname "$0")/cmdline.sh"
DUR=2 ROUNDS=15 CONNS="1 4" CC=cubic COUNTERS=false OLD= CLOOP=false GOLOOP= KEEP=
while getopts "d:r:P:a:cB:CG:k:" o; do
	case $o in
	d) DUR=$OPTARG ;; r) ROUNDS=$OPTARG ;; P) CONNS=$OPTARG ;; a) CC=$OPTARG ;; c) COUNTERS=true ;; B) OLD=$OPTARG ;; C) CLOOP=true ;; G) GOLOOP=$OPTARG CLOOP=true ;; k) KEEP=$OPTARG ;;
	*) usage "[-d seconds] [-r rounds] [-P \"connection counts\"] [-a congestion-control] [-c] [-B git-revision] [-C] [-G \"goloop variants\"] [-k dir]" ;;
	esac
done
need_root "network namespaces"
command -v iperf3 >/dev/null || apt-get install -y iperf3 >/dev/null || { apt-get update >/dev/null && apt-get install -y iperf3 >/dev/null; }

LAB=ipcmp$$
TX=tsl.$LAB.tx RX=tsl.$LAB.rx
TXA=10.203.0.1 RXA=10.203.0.2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cleanup() {
	[ -n "${IPERF_PID:-}" ] && kill "$IPERF_PID" 2>/dev/null || true
	[ -x "$work/iperf-compare" ] && "$work/iperf-compare" -lab "$LAB" -teardown || true
	[ -n "$KEEP" ] && mkdir -p "$KEEP" && cp "$work"/rows.* "$work"/first.* "$work"/old.* "$work"/c.* "$work"/g.* "$KEEP" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$here/../.." && go build -o "$work/iperf-compare" ./bench/iperf-compare)
set -- $OLD
OLD1=${1:-}
for rev in $OLD; do # the driver of each -B revision: iperf-compare-old.REV
	mkdir "$work/old.$rev"
	git -C "$here/../.." archive "$rev" | tar -x -C "$work/old.$rev"
	(cd "$work/old.$rev" && go build -o "$work/iperf-compare-old.$rev" ./bench/iperf-compare)
done
if $CLOOP; then
	command -v gcc >/dev/null || { echo "-C needs gcc (apt-get install gcc)" >&2; exit 1; }
	gcc -O2 -Wall -pthread -o "$work/cloop" "$here/cloop/cloop.c"
fi
if [ -n "$GOLOOP" ]; then
	(cd "$here/../.." && go build -o "$work/goloop" ./bench/iperf-compare/goloop)
	for v in $GOLOOP; do # a variant's steps are checked before the run
		msg=$("$work/goloop" -v "$v" 2>&1 || true)
		case $msg in *"unknown step"*) echo "-G: ${msg%%$'\n'*}" >&2 && exit 2 ;; esac
	done
fi
load() { # the load average (1, 5, 15 min) and the CPU pressure (avg10, avg60)
	echo "load $(cut -d' ' -f1-3 /proc/loadavg), cpu pressure $(awk '/^some/ { print $2, $3 }' /proc/pressure/cpu 2>/dev/null)"
}
load_start=$(load)
stat_cpu() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t }' /proc/stat; } # steal, total (ticks)
stat_start=$(stat_cpu)
# The namespaces, lo up in each, and the veth pair tx0 <-> rx0 (MTU 1500)
# with the two addresses, made through netlink (netnsfs.CreatePair).
"$work/iperf-compare" -lab "$LAB" -tx-addr $TXA/24 -rx-addr $RXA/24 -setup
if [ "$CC" = default ]; then
	CC=$(ip netns exec "$TX" sysctl -n net.ipv4.tcp_congestion_control) CCFLAG=
else
	grep -qw -- "$CC" /proc/sys/net/ipv4/tcp_available_congestion_control || modprobe "tcp_$CC" 2>/dev/null || {
		echo "-a $CC: this kernel has no such congestion control (available: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control))" >&2
		exit 2
	}
	CCFLAG=$CC
	# iperf3 -C sets TCP_CONGESTION after connect(), so its sockets first
	# run the namespace's default, and BBR's init marks a socket for
	# TCP's internal pacing (sk_pacing_status), which no later switch
	# clears: under this machine's default, iperf3 -C cubic ran a paced
	# CUBIC (15-29 k HRTIMER softirqs in a 3 s run against none) while
	# the driver sets it before connect. So the namespaces' default is
	# CC where the kernel allows it, reno (which paces nothing) otherwise.
	grep -qw -- "$CC" /proc/sys/net/ipv4/tcp_allowed_congestion_control && nsdefault=$CC || nsdefault=reno
	for ns in "$TX" "$RX"; do ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control="$nsdefault"; done
	for rev in $OLD; do
		"$work/iperf-compare-old.$rev" -h 2>&1 | grep -q -- '-cc' || {
			echo "-B $rev: that tree's driver has no -cc; run with -a default to compare it (both tools then run the namespaces' default, $(ip netns exec "$TX" sysctl -n net.ipv4.tcp_congestion_control))" >&2
			exit 2
		}
	done
fi
iperf3_server "$RX" $RXA

iperf() { # $1 = connections; prints "bits/s sender% receiver%" (received, CPU in % of one core)
	for _ in 1 2; do # a second try when the server was still busy
		if ip netns exec "$TX" iperf3 -c $RXA -t "$DUR" -l 128K -P "$1" ${CCFLAG:+-C "$CCFLAG"} -J >"$work/ip.json" 2>/dev/null; then
			python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["end"]; c=e["cpu_utilization_percent"]; u=e.get("sender_tcp_congestion", sys.argv[2])
if u != sys.argv[2]: sys.exit("iperf3 ran congestion control %s, not %s" % (u, sys.argv[2]))
print(int(e["sum_received"]["bits_per_second"]), c["host_total"], c["remote_total"])' "$work/ip.json" "$CC"
			return
		fi
	done
	echo "iperf3 failed: $(cat "$work/ip.json")" >&2
	exit 1
}
tsolab() { # $1 = connections, $2 = capture true|false, $3 = counter, $4 = driver; prints the driver's line
	line=$("${4:-$work/iperf-compare}" -lab "$LAB" -duration "${DUR}s" -write-size 131072 -connections "$1" ${CCFLAG:+-cc "$CCFLAG"} -capture="$2" -counter "${3:-auto}" 2>>"$work/notes")
	case $line in *" cc="*) [ "${line##* cc=}" = "$CC" ] || { echo "tsolab ran congestion control ${line##* cc=}, not $CC" >&2; exit 1; } ;; esac
	echo "$line"
}
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

run_iperf() { i=$(iperf "$p"); }
drive() { # $1 = driver; prints "bits/s sender% receiver% other%" (other: in sender%; none from older drivers)
	line=$(tsolab "$p" false auto "$1")
	echo "$(echo "$line" | field throughput_bps) $(echo "$line" | field task_tx_pct) $(echo "$line" | field task_rx_pct) $(echo "$line" | field task_other_pct)"
}
run_tsolab() { d=$(drive "$work/iperf-compare"); t=${d% *} toth=${d##* }; }
declare -A o # -B revision -> "bits/s sender% receiver%" of this round
run_old() { d=$(drive "$work/iperf-compare-old.$1"); o[$1]=${d% *}; } # $1 = revision
run_cloop() { # one connection only: with more, nothing
	c=
	[ "$p" = 1 ] || return 0
	line=$("$work/cloop" "$TX" "$RX" $RXA 5301 "$DUR" 131072)
	c="$(echo "$line" | field throughput_bps) $(echo "$line" | field task_tx_pct) $(echo "$line" | field task_rx_pct)"
}
declare -A g # goloop variant -> "bits/s sender% receiver%" of this round
run_goloop() { # $1 = variant; one connection only
	g[$1]=
	[ "$p" = 1 ] || return 0
	line=$("$work/goloop" -v "$1" "$TX" "$RX" $RXA 5302 "$DUR" 131072)
	g[$1]="$(echo "$line" | field throughput_bps) $(echo "$line" | field task_tx_pct) $(echo "$line" | field task_rx_pct)"
}
# The members of a round in the first round's order; each round starts
# one further along.
members="run_iperf run_tsolab"
for rev in $OLD; do members="$members run_old=$rev"; done
$CLOOP && members="$members run_cloop"
for v in $GOLOOP; do members="$members run_goloop=$v"; done
# rows.P.TSO: one line per round:
# i_bps i_tx i_rx t_bps t_tx t_rx [c_bps c_loss c_pkts r_bps r_loss r_pkts] t_other
# old.P.TSO.REV (with -B): o_bps o_tx o_rx t_bps t_tx t_rx
# c.P.TSO (with -C, P=1): i_bps i_tx i_rx c_bps c_tx c_rx t_bps t_tx t_rx
# g.P.TSO.VARIANT (with -G, P=1): c_bps c_tx c_rx g_bps g_tx g_rx t_bps t_tx t_rx
for r in $(seq "$ROUNDS"); do
	for p in $CONNS; do
		for tso in on off; do
			"$work/iperf-compare" -lab "$LAB" -tso $tso -set-tso
			set -- $members
			for _ in $(seq $(((r - 1) % $#))); do set -- "${@:2}" "$1"; done
			echo "$1" >>"$work/first.$p.$tso" # who went first in this round
			for m in "$@"; do
				case $m in run_goloop=*) run_goloop "${m#*=}" ;; run_old=*) run_old "${m#*=}" ;; *) $m ;; esac
			done
			for rev in $OLD; do echo "${o[$rev]} $t" >>"$work/old.$p.$tso.$rev"; done
			[ -n "${c:-}" ] && echo "$i $c $t" >>"$work/c.$p.$tso"
			for v in $GOLOOP; do [ -n "${g[$v]}" ] && echo "$c ${g[$v]} $t" >>"$work/g.$p.$tso.$v"; done
			extra=
			if $COUNTERS; then
				line=$(tsolab "$p" true auto)
				src=$(echo "$line" | field source)
				[ "$src" = bpf ] || echo "warning: the default counter was $src, not eBPF (see the notes below)" >&2
				extra="$(echo "$line" | field throughput_bps) $(echo "$line" | field capture_loss) $(echo "$line" | field data_packets)"
				line=$(tsolab "$p" true ring)
				extra="$extra $(echo "$line" | field throughput_bps) $(echo "$line" | field capture_loss) $(echo "$line" | field data_packets)"
			fi
			echo "$i $t $extra $toth" >>"$work/rows.$p.$tso"
		done
	done
done

# col FILE EXPR: the median over the rounds of an awk expression of a row.
col() { awk '{ print '"$2"' }' "$1" | median; }
# span FILE EXPR: the lowest and highest round of an awk expression of a row, "lo-hi".
span() { awk '{ v = '"$2"'; if (NR == 1 || v < lo) lo = v; if (NR == 1 || v > hi) hi = v } END { printf "%.0f-%.0f", lo, hi }' "$1"; }
# ci FILE EXPR: "lo hi coverage%" of the median of an awk expression of a
# row over the rounds (the order statistics above; bench/pairs/ci.awk).
ci() { awk '{ print '"$2"' }' "$1" | sort -g | awk -f "$here/../pairs/ci.awk"; }
worst() { awk '{ l=$'"$2"'; p=$'"$3"'; v = (l+p > 0) ? 100*l/(l+p) : 0; if (v > m) m = v } END { print m+0 }' "$1"; }
ok=true
check() { # $1 = the measured value, $2 = the awk condition on v, $3 = what missed
	if awk -v v="$1" 'BEGIN { exit !('"$2"') }'; then echo -n " "; else echo -n "!"; ok=false; echo "MISSED: $3 ($1)" >>"$work/missed"; fi
}
unresolved=false
# verdict MEDIAN "LO HI COV" CONDITION WHAT: a target on the median of the
# per-pair ratios: met (" ") when both ends of its interval meet
# CONDITION on v, missed ("!") when neither does, unresolved ("?") else.
verdict() {
	set -- "$1" $2 "$3" "$4"
	local lo hi
	awk -v v="$2" 'BEGIN { exit !('"$5"') }' && lo=1 || lo=0
	awk -v v="$3" 'BEGIN { exit !('"$5"') }' && hi=1 || hi=0
	if [ $lo$hi = 11 ]; then
		echo -n " "
	elif [ $lo$hi = 00 ]; then
		echo -n "!"
		ok=false
		echo "MISSED: $6 (median $1, ci $2-$3 at $4%)" >>"$work/missed"
	else
		echo -n "?"
		unresolved=true
		echo "UNRESOLVED: $6 (median $1, ci $2-$3 at $4%)" >>"$work/unresolved"
	fi
}
echo "medians of $ROUNDS paired rounds of ${DUR} s; Gb/s received; CPU in % of one core per Gb/s (tx: sender, rx: receiver)"
echo "congestion control: $CC (-a; both tools' senders, read back from each run's sockets; the namespaces' default ${nsdefault:-left as it was}, as iperf3 -C applies CC only after connect)"
echo "at the start: $load_start; at the end: $(load)"
stat_end=$(stat_cpu)
echo "steal time over the run: $(echo "$stat_start $stat_end" | awk '{ d = $4 - $2; printf "%.2f%% of the CPUs (%d ticks)", (d > 0 ? 100 * ($3 - $1) / d : 0), $3 - $1 }')"
printf "%-5s %-4s %7s %7s %7s %8s %9s  %7s %7s %7s %8s %9s %7s  %7s %7s %7s  %7s" P tso iperf3 tsolab ratio range ci ip_tx ts_tx tx_cpu tx_range tx_ci ts_oth ip_rx ts_rx rx_cpu all_cpu
$COUNTERS && printf "  %7s %7s %8s %8s %9s %9s" +count +ring cnt_cost ring_cost cnt_loss ring_loss
[ -n "$OLD" ] && printf "  %7s %7s %7s %7s %7s" old new/old tx_n/o rx_n/o all_n/o
$CLOOP && printf "  %7s %7s %7s %7s" cloop c/ip3 ts/c tx_ts/c
echo
for p in $CONNS; do
	for tso in on off; do
		f=$work/rows.$p.$tso
		ratio=$(col "$f" '100*$4/$1') txr=$(col "$f" '100*($5/$4)/($2/$1)')
		printf "%-5s %-4s %7.2f %7.2f %6.1f%%" "$p" $tso "$(col "$f" '$1/1e9')" "$(col "$f" '$4/1e9')" "$ratio"
		rci=$(ci "$f" '100*$4/$1')
		verdict "$ratio" "$rci" 'v >= 95' "throughput ratio, P=$p TSO $tso, want >= 95%"
		printf "%8s" "$(span "$f" '100*$4/$1')"
		printf " %9s" "$(echo $rci | awk '{ printf "%.0f-%.0f", $1, $2 }')"
		printf " %7.2f %7.2f %6.1f%%" "$(col "$f" '$2/($1/1e9)')" "$(col "$f" '$5/($4/1e9)')" "$txr"
		tci=$(ci "$f" '100*($5/$4)/($2/$1)')
		verdict "$txr" "$tci" 'v <= 100' "sender CPU per Gbit/s, tsolab/iperf3, P=$p TSO $tso, want <= 100%"
		printf "%8s" "$(span "$f" '100*($5/$4)/($2/$1)')"
		printf " %9s" "$(echo $tci | awk '{ printf "%.0f-%.0f", $1, $2 }')"
		printf " %7.2f" "$(col "$f" '$NF/($4/1e9)')"
		printf " %7.2f %7.2f %6.1f%%  %6.1f%%" "$(col "$f" '$3/($1/1e9)')" "$(col "$f" '$6/($4/1e9)')" "$(col "$f" '100*($6/$4)/($3/$1)')" "$(col "$f" '100*(($5+$6)/$4)/(($2+$3)/$1)')"
		if $COUNTERS; then
			cc=$(col "$f" '100*(1-$7/$4)')
			printf "  %7.2f %7.2f %7.1f%%" "$(col "$f" '$7/1e9')" "$(col "$f" '$10/1e9')" "$cc"
			check "$cc" 'v <= 5' "default counter's cost, P=$p TSO $tso, want <= 5%"
			cl=$(worst "$f" 8 9)
			printf " %7.1f%% %8.3f%%" "$(col "$f" '100*(1-$10/$4)')" "$cl"
			check "$cl" 'v < 1' "default counter's capture_loss, P=$p TSO $tso, want < 1%"
			printf " %8.3f%%" "$(worst "$f" 11 12)"
		fi
		if [ -n "$OLD" ]; then
			f=$work/old.$p.$tso.$OLD1
			printf "  %7.2f %6.1f%% %6.1f%% %6.1f%% %6.1f%%" "$(col "$f" '$1/1e9')" "$(col "$f" '100*$4/$1')" "$(col "$f" '100*($5/$4)/($2/$1)')" "$(col "$f" '100*($6/$4)/($3/$1)')" "$(col "$f" '100*(($5+$6)/$4)/(($2+$3)/$1)')"
		fi
		f=$work/c.$p.$tso
		if [ -s "$f" ]; then
			printf "  %7.2f %6.1f%% %6.1f%% %6.1f%%" "$(col "$f" '$4/1e9')" "$(col "$f" '100*$4/$1')" "$(col "$f" '100*$7/$4')" "$(col "$f" '100*($8/$7)/($5/$4)')"
		fi
		echo
	done
done
echo "ratio = tsolab/iperf3 throughput, the median of the per-pair ratios (target >= 95%), range = its"
echo "lowest and highest round, ci = the median's confidence interval (coverage $(ci "$work/rows.${CONNS%% *}.on" '$1' | cut -d' ' -f3)%, order statistics:"
echo "the target is met when all of it is on the target's side, '!' missed when none is, '?' unresolved);"
echo "ip_tx, ts_tx = sender CPU per Gb/s of iperf3 and tsolab; tx_cpu = tsolab/iperf3 of it"
echo "(target <= 100%), tx_range = its lowest and highest round, tx_ci its ci; ts_oth = the part of ts_tx"
echo "that is tsolab's other threads (Go runtime: sysmon, the threads its workers' scheduler"
echo "passes wake; the sampler), which iperf3's processes do not have; ip_rx, ts_rx = the"
echo "receivers'; rx_cpu = tsolab/iperf3 of it (no target);"
echo "all_cpu = tsolab/iperf3 of sender + receiver CPU per Gb/s (which side pays for a"
echo "transmit varies from run to run on veth: an ACK the receiver processes sends the next"
echo "segments from its context when the sender sleeps on a full buffer)"
[ -n "$OLD" ] && echo "old = tsolab built from $OLD1; new/old, tx_n/o, rx_n/o, all_n/o = this tree's throughput, sender,
receiver and sender + receiver CPU per Gb/s over that tree's, medians of the per-round ratios (no
target: they show a change's effect; all_n/o does not move with which side paid for a transmit)"
$CLOOP && echo "cloop = tsolab's loops in C (cloop/cloop.c, one connection); c/ip3 = its throughput over iperf3's
(what the loops do), ts/c = tsolab's over it (what the Go runtime and the engine add), tx_ts/c =
tsolab's sender CPU per Gb/s over cloop's; medians of the per-round ratios (no target)"
if [ "$OLD" != "$OLD1" ]; then
	echo
	echo "each -B tree against this one, medians of the per-round ratios:"
	printf "%-5s %-4s %-24s %7s %7s %7s %7s %7s\n" P tso tree old new/old tx_n/o rx_n/o all_n/o
	for p in $CONNS; do
		for tso in on off; do
			for rev in $OLD; do
				f=$work/old.$p.$tso.$rev
				printf "%-5s %-4s %-24s %7.2f %6.1f%% %6.1f%% %6.1f%% %6.1f%%\n" "$p" $tso "$rev" "$(col "$f" '$1/1e9')" "$(col "$f" '100*$4/$1')" "$(col "$f" '100*($5/$4)/($2/$1)')" "$(col "$f" '100*($6/$4)/($3/$1)')" "$(col "$f" '100*(($5+$6)/$4)/(($2+$3)/$1)')"
			done
		done
	done
fi
if [ -n "$GOLOOP" ]; then
	echo
	echo "goloop (goloop/main.go: the loops in bare Go; one connection), medians of the per-round ratios:"
	printf "%-5s %-4s %-24s %7s %7s %7s %7s %7s\n" P tso variant goloop g/c tx_g/c rx_g/c ts/g
	for p in $CONNS; do
		for tso in on off; do
			for v in $GOLOOP; do
				f=$work/g.$p.$tso.$v
				[ -s "$f" ] || continue
				printf "%-5s %-4s %-24s %7.2f %6.1f%% %6.1f%% %6.1f%% %6.1f%%\n" "$p" $tso "$v" "$(col "$f" '$4/1e9')" "$(col "$f" '100*$4/$1')" "$(col "$f" '100*($5/$4)/($2/$1)')" "$(col "$f" '100*($6/$4)/($3/$1)')" "$(col "$f" '100*$7/$4')"
			done
		done
	done
	echo "goloop = the variant's Gb/s; g/c = its throughput over cloop's, tx_g/c = its sender CPU per Gb/s"
	echo "(sending thread + the process's other threads) over cloop's, rx_g/c its receiving thread's;"
	echo "ts/g = tsolab's throughput over it"
fi
$COUNTERS && echo "cnt_cost = 1 - with/without the default counter (target <= 5%); ring_cost the same for the
AF_PACKET ring; *_loss = worst capture_loss/(counted+lost) over the rounds (target < 1%)"
echo "order (who went first in a pair), medians of the per-pair ratios with iperf3 first / tsolab first:"
for p in $CONNS; do
	for tso in on off; do
		f=$work/rows.$p.$tso
		paste -d' ' "$work/first.$p.$tso" "$f" >"$work/ord"
		for who in run_iperf run_tsolab; do
			grep "^$who " "$work/ord" | cut -d' ' -f2- >"$work/ord.$who" || true
		done
		printf "  P=%s TSO %-3s throughput %.1f%% / %.1f%%, sender CPU per Gb/s %.1f%% / %.1f%% (%d / %d rounds)\n" "$p" $tso \
			"$(col "$work/ord.run_iperf" '100*$4/$1')" "$(col "$work/ord.run_tsolab" '100*$4/$1')" \
			"$(col "$work/ord.run_iperf" '100*($5/$4)/($2/$1)')" "$(col "$work/ord.run_tsolab" '100*($5/$4)/($2/$1)')" \
			"$(wc -l <"$work/ord.run_iperf")" "$(wc -l <"$work/ord.run_tsolab")"
	done
done
echo "the senders' CPU in % of one core (median, lowest-highest round), iperf3 / tsolab: a sender near"
echo "100% sent its segments itself; near half, the receiver's side sent the rest (see all_cpu):"
for p in $CONNS; do
	for tso in on off; do
		f=$work/rows.$p.$tso
		printf "  P=%s TSO %-3s %.0f%% (%s) / %.0f%% (%s)\n" "$p" $tso "$(col "$f" '$2')" "$(span "$f" '$2')" "$(col "$f" '$5')" "$(span "$f" '$5')"
	done
done
# The softirq meter's note comes once a tsolab run with its own figures:
# one is shown, with how many there were.
notes=$(grep -v "^note: capture on\|capture disabled\|^note: send units counted by\|^note: CPU in %" "$work/notes" | sort -u || true)
echo "$notes" | grep -v "^note: softirq time timed" | sed 's/^/  /' || true
n=$(echo "$notes" | grep -c "^note: softirq time timed" || true)
[ "$n" -gt 0 ] && echo "$notes" | grep -m1 "^note: softirq time timed" | sed "s/^/  /; s/\$/ (one of $n such notes, one a tsolab run; sorted, so the lowest)/"
if ! $ok; then
	echo "'!' marks a missed target:"
	cat "$work/missed"
	[ -s "$work/unresolved" ] && echo "'?' marks an unresolved one:" && cat "$work/unresolved"
	exit 1
fi
if $unresolved; then
	echo "no target missed; '?' marks an unresolved one (more rounds narrow the interval):"
	cat "$work/unresolved"
	exit 3
fi
echo "every target met (each median's interval on the target's side)"
