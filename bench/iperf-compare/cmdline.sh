# The command lines of bench/iperf-compare's scripts, and the steps they
# share, in one place: each script sources this file (`. "$(dirname
# "$0")/cmdline.sh"`) and answers a command line it does not take, or a
# run it cannot make, with these functions, so that the scripts word and
# exit alike, and starts iperf3's server with iperf3_server. $0 is the
# script that sourced it.

# usage TEXT: print "usage: SCRIPT TEXT" on stderr and exit 2.
usage() {
	echo "usage: $0 $*" >&2
	exit 2
}

# need_root WHY: exit 1 with "SCRIPT needs root (WHY)" unless run as root.
need_root() {
	[ "$(id -u)" = 0 ] || { echo "$(basename "$0") needs root ($1)" >&2; exit 1; }
}

# duration_and_command DEFAULT ARGS...: the command line of the scripts
# that watch one run of a command (sendctx.sh, threads.sh),
# "[-d SECONDS] CMD...": sets DUR (DEFAULT without -d) and the array CMD;
# anything else is usage.
duration_and_command() {
	DUR=$1
	shift
	local o OPTIND=1
	while getopts "d:" o; do
		case $o in
		d) DUR=$OPTARG ;;
		*) usage "[-d seconds] CMD..." ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# -gt 0 ] || usage "[-d seconds] CMD..."
	CMD=("$@")
}

# iperf3_server NS ADDR: start iperf3's server in namespace NS, bound to
# ADDR, in the background (its pid in IPERF_PID, for the caller's
# cleanup), and wait for its listening socket (an event with a
# deadline: 5 s).
iperf3_server() {
	ip netns exec "$1" iperf3 -s -B "$2" >/dev/null 2>&1 &
	IPERF_PID=$!
	for _ in $(seq 100); do
		ip netns exec "$1" ss -ltn 2>/dev/null | grep -q "$2:5201" && return 0
		sleep 0.05
	done
}
