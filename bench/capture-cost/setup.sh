# Sourced by run.sh and perf.sh after they read their options: what both
# set up and tear down. It needs root (namespaces, eBPF); sets here (this
# directory), work (a temporary directory), CAPDIR (by default a new
# directory in /dev/shm, tmpfs: the capture's own cost, not the disk's)
# and NAME (the lab's name: PREFIX and this process's ID, PREFIX given
# as the argument), builds the tree's tsolab into $work/tsolab and, with
# BASE=REV, REV's into $work/base/tsolab (named tsolab too, so that its
# threads carry the same name) and sets modes ("without with", or
# "without with base"), and copies examples/tso-basics to $work/lab (its
# state file stays out of the repository). On exit it runs the caller's
# on_exit function if there is one, destroys the lab (destroy needs no
# -name: the state names what the run made), removes the base's worktree,
# $work, and the capture files (CAPDIR itself when it made it).
[ "$(id -u)" = 0 ] || { echo "$(basename "$0") needs root (network namespaces, eBPF)" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
made=
[ -n "${CAPDIR:-}" ] || { CAPDIR=$(mktemp -d -p /dev/shm); made=$CAPDIR; }
NAME=$1$$
cleanup() {
	if declare -F on_exit >/dev/null; then on_exit; fi
	[ -x "$work/tsolab" ] && "$work/tsolab" destroy -auto-approve "$work/lab" >/dev/null 2>&1 || true
	[ -n "${BASE:-}" ] && git -C "$here" worktree remove --force "$work/base-src" >/dev/null 2>&1
	rm -rf "$work" ${made:+"$made"}
	[ -n "$made" ] || rm -rf "${CAPDIR:?}/$NAME"
}
trap cleanup EXIT
(cd "$here/../.." && go build -o "$work/tsolab" ./cmd/tsolab)
modes="without with"
if [ -n "${BASE:-}" ]; then
	git -C "$here" worktree add -q --detach "$work/base-src" "$BASE"
	mkdir "$work/base"
	(cd "$work/base-src" && go build -o "$work/base/tsolab" ./cmd/tsolab)
	modes="without with base"
fi
cp -r "$here/../../examples/tso-basics" "$work/lab"
