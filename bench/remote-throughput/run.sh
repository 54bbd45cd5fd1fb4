#!/usr/bin/env bash
# Throughput of a stream between two namespaces through a machine's agent
# against the same lab run locally (issue 10: the control path must not
# slow the data path).
#
#   bench/remote-throughput/run.sh [-r ROUNDS] [-m MTU] [-c CONNECTIONS] [-d DURATION] [-a]
#
# Target: median over the rounds of throughput(remote) / throughput(local)
# >= 0.95, each ratio taken within one round (the two runs back to back,
# the order rotating by round). "remote" is a sender here and a
# receiver on machine r1, a real OpenSSH server in a namespace of its own
# (package remotetest), joined by a veth cable; "local" is the same two
# hosts both here, joined by a veth pair: one veth between two namespaces
# of this kernel either way. The script exits 1 when the target is missed.
# -a adds a third lab, "agent": both hosts on r1, the whole stream in its
# agent (one process, as locally), to tell the agent's own cost from that
# of splitting the sides between two processes on this one machine.
# Needs root (namespaces, sshd, eBPF) and openssh-server. The labs and
# sshd's namespaces are its own (rthru-*, tsltest.ssh*), but the figures
# are throughput: run it under the machine's lock when others measure
# (flock /work/.netns.lock bench/remote-throughput/run.sh).
set -euo pipefail
ROUNDS=10 MTU=9000 CONNS=1 DUR=3s AGENT=false
while getopts "r:m:c:d:a" o; do
	case $o in
	r) ROUNDS=$OPTARG ;; m) MTU=$OPTARG ;; c) CONNS=$OPTARG ;; d) DUR=$OPTARG ;; a) AGENT=true ;;
	*) echo "usage: $0 [-r rounds] [-m mtu] [-c connections] [-d duration] [-a]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "run.sh needs root (namespaces, sshd, eBPF)" >&2; exit 1; }
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/tsolab" ./cmd/tsolab
go build -o "$bin/remote-throughput" ./bench/remote-throughput
"$bin/remote-throughput" -tsolab "$bin/tsolab" -r "$ROUNDS" -mtu "$MTU" -c "$CONNS" -d "$DUR" -agent="$AGENT"
