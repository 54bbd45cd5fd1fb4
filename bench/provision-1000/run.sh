#!/usr/bin/env bash
# Applies, plans (no changes) and destroys a 1000-host lab (1000
# namespaces, each with a veth to one switch) through the tsolab CLI, as a
# user would, and prints the wall time and peak RSS of each command next
# to the kernel's floor for the same work measured in the same run with
# `ip -batch` (namespaces made, veth pairs made in place, namespaces
# deleted). Target (issue 14): apply <= 1.5 s, destroy <= 1.5 s, plan
# <= 0.5 s, peak RSS < 200 MB. Needs root; run it under
# `flock /work/.netns.lock` on a shared machine.
#
# HOSTS=N changes the lab's size (targets are checked for 1000 only).
# PROFILE=DIR writes a CPU profile of each command to DIR/{apply,plan,destroy}.pprof
# (TSOLAB_CPUPROFILE); read one with `go tool pprof -top DIR/apply.pprof`.
set -euo pipefail
cd "$(dirname "$0")/../.."
hosts=${HOSTS:-1000}
work=$(mktemp -d)
bin=$work/tsolab
go build -o "$bin" ./cmd/tsolab
lab=$work/lab
mkdir -p "$lab"
floor=tslfloor$$
cleanup() {
	"$bin" destroy -auto-approve "$lab" >/dev/null 2>&1 || true
	for i in $(seq 1 "$hosts"); do echo "netns delete $floor.$i"; done | ip -force -batch - >/dev/null 2>&1 || true
	ip netns delete "$floor.sw" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
{
	echo "lab \"bench$hosts\" {}"
	echo 'switch "sw" {}'
	for i in $(seq 1 "$hosts"); do
		printf 'host "h%d" {}\n' "$i"
		printf 'nic "n%d" {\n  host = host.h%d\n  connect = switch.sw\n  address = "10.99.%d.%d/16"\n  mtu = 9000\n}\n' \
			"$i" "$i" $((i / 250)) $((i % 250 + 1))
	done
} >"$lab/lab.tsolab.hcl"

# timed NAME CMD...: runs CMD, records "NAME wall_s peak_rss_kb cpu_s" in
# $work/times (cpu: user + system time, which other load on a shared
# machine inflates less than wall time).
timed() {
	local name=$1
	shift
	/usr/bin/time -f "$name %e %M %U %S" -a -o "$work/times" "$@"
}
prof() { [ -n "${PROFILE:-}" ] && mkdir -p "$PROFILE" && echo "TSOLAB_CPUPROFILE=$PROFILE/$1.pprof" || echo "TSOLAB_CPUPROFILE="; }

timed apply env "$(prof apply)" "$bin" apply -auto-approve "$lab" >"$work/apply.log"
tail -1 "$work/apply.log"
timed plan env "$(prof plan)" "$bin" plan -detailed-exitcode "$lab" >"$work/plan.log"
tail -1 "$work/plan.log"
timed destroy env "$(prof destroy)" "$bin" destroy -auto-approve "$lab" >"$work/destroy.log"
tail -1 "$work/destroy.log"
left=$(ip netns list | grep -c "^tsl.bench$hosts[.]" || true)

# The kernel's floor: the same namespaces and veths made by iproute2 in
# one process each (no addresses, no MTU, no ownership marks, no state),
# the namespaces deleted (and with them the veths). LINKDEL=1 also times
# deleting the veths one by one first, as tsolab's destroy does (17 s for
# 1000 with ip -batch here: each waits for the kernel's RCU grace period;
# tsolab overlaps them).
{
	echo "netns add $floor.sw"
	for i in $(seq 1 "$hosts"); do echo "netns add $floor.$i"; done
} >"$work/ns.batch"
for i in $(seq 1 "$hosts"); do
	echo "link add n$i netns $floor.$i type veth peer name p$i netns $floor.sw"
done >"$work/veth.batch"
{
	for i in $(seq 1 "$hosts"); do echo "netns delete $floor.$i"; done
	echo "netns delete $floor.sw"
} >"$work/del.batch"
timed floor-netns ip -batch "$work/ns.batch"
for i in $(seq 1 "$hosts"); do echo "link del p$i"; done >"$work/linkdel.batch"
timed floor-veth ip -batch "$work/veth.batch"
if [ -n "${LINKDEL:-}" ]; then
	timed floor-linkdel ip -n "$floor.sw" -batch "$work/linkdel.batch"
fi
timed floor-delete ip -batch "$work/del.batch"

awk -v n="$hosts" -v left="$left" '
	{ wall[$1] = $2; rss[$1] = $3; cpu[$1] = $4 + $5 }
	END {
		split("apply plan destroy floor-netns floor-veth floor-linkdel floor-delete", order)
		for (i = 1; i <= 7; i++) {
			c = order[i]
			if (!(c in wall)) continue
			printf "%-13s wall=%6.3fs cpu=%6.3fs peak_rss=%5.1fMB\n", c, wall[c], cpu[c], rss[c] / 1024
		}
		fl = wall["floor-netns"] + wall["floor-veth"]
		fd = wall["floor-delete"]
		printf "hosts=%d apply=%.3fs (%.1fx the floor %.3fs) plan(no changes)=%.3fs destroy=%.3fs (%.1fx the floor %.3fs) namespaces_left=%d\n",
			n, wall["apply"], wall["apply"] / fl, fl, wall["plan"], wall["destroy"], wall["destroy"] / fd, fd, left
		max = rss["apply"]; if (rss["plan"] > max) max = rss["plan"]; if (rss["destroy"] > max) max = rss["destroy"]
		if (left > 0) { print "FAIL: namespaces left"; exit 1 }
		if (n == 100) {
			if (wall["apply"] >= 2 || wall["destroy"] >= 2) { print "FAIL: target is under 2 s each"; exit 1 }
			print "OK: under 2 s each"
		}
		if (n != 1000) exit 0
		if (wall["apply"] > 1.5 || wall["destroy"] > 1.5 || wall["plan"] > 0.5 || max >= 200 * 1024) {
			print "FAIL: targets are apply <= 1.5 s, destroy <= 1.5 s, plan <= 0.5 s, peak RSS < 200 MB"; exit 1
		}
		print "OK: apply <= 1.5 s, destroy <= 1.5 s, plan <= 0.5 s, peak RSS < 200 MB"
	}' "$work/times"
