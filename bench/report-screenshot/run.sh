#!/usr/bin/env bash
# Render tsolab's HTML report in headless Chromium (Debian's chromium) and
# take screenshots for docs/report.md: a model report from
# examples/freebsd-tso-trim and, as root, a kernel report from
# examples/tso-basics. Fails when Chromium logs a console message (the
# report has no script, so any is an error) or when a report is 2 MB or
# more.
#
#   bench/report-screenshot/run.sh [-o DIR] [-k]
#
#   -o DIR  where to put the PNGs (default: docs/img)
#   -k      skip the kernel report even as root
#
# Chromium runs with every network feature off and a host resolver that
# resolves nothing, so a report that tried to load anything would show it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/docs/img
kernel=1
while getopts "o:k" o; do
	case $o in
	o) out=$OPTARG ;; k) kernel=0 ;;
	*) echo "usage: $0 [-o dir] [-k]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || kernel=0

install() { # install Debian packages once
	local missing=()
	for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
	[ ${#missing[@]} -eq 0 ] && return
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
}
# chromium renders; imagemagick cuts the tall page into screenshots;
# fonts-liberation is the font the charts name.
install chromium imagemagick fonts-liberation

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
(cd "$root" && go build -o "$work/tsolab" ./cmd/tsolab)

# shoot HTML NAME: check the report renders without console messages, then
# write NAME-1.png (the top, 1400x3000) and NAME-2.png.. (the rest of the
# page in 1400x3000 pieces).
shoot() {
	local html=$1 name=$2 size
	size=$(stat -c %s "$html")
	echo "$name: report is $size bytes"
	if [ "$size" -ge 2000000 ]; then
		echo "FAIL $name: report is $size bytes, over 2 MB" >&2
		return 1
	fi
	local profile
	profile=$(mktemp -d "$work/profile.XXXX")
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--host-resolver-rules="MAP * ~NOTFOUND" \
		--user-data-dir="$profile" --enable-logging=stderr --v=0 \
		--screenshot="$work/$name-full.png" --window-size=1400,12000 \
		"file://$html" >"$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; return 1; }
	if grep -E "CONSOLE|Uncaught|net::ERR_" "$work/$name.log" >&2; then
		echo "FAIL $name: Chromium logged console messages or network errors (above)" >&2
		return 1
	fi
	[ -s "$work/$name-full.png" ] || { echo "FAIL $name: no screenshot" >&2; return 1; }
	# Cut the page at its content's end (the trim box's bottom), then into
	# pieces of 3000 px.
	local box end
	box=$(convert "$work/$name-full.png" -format '%@' info:) # WxH+X+Y
	end=$(echo "$box" | awk -F'[x+]' '{ print $2 + $4 + 24 }')
	convert "$work/$name-full.png" -crop "1400x${end}+0+0" +repage "$work/$name-trim.png"
	rm -f "$out/$name"-*.png
	convert "$work/$name-trim.png" -crop 1400x3000 +repage "$out/$name-%d.png"
	# ImageMagick numbers from 0; docs number from 1.
	local i n
	n=$(ls "$out/$name"-*.png | wc -l)
	for ((i = n - 1; i >= 0; i--)); do mv "$out/$name-$i.png" "$out/$name-$((i + 1)).png"; done
	echo "$name: $n screenshots in $out ($(identify -format '%h' "$work/$name-trim.png") px of page)"
}

# The model: deterministic, no root needed. Exit 3 (a failed expectation)
# still makes a report worth looking at.
rc=0
"$work/tsolab" test -engine sim -json "$work/sim.json" -report "$work/report-sim.html" "$root/examples/freebsd-tso-trim" >"$work/sim.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$work/sim.out" >&2; exit 1; }
shoot "$work/report-sim.html" report-sim

# The same report from the results file, with itself as the baseline: the
# baseline column and grey bars.
"$work/tsolab" report -lab "$root/examples/freebsd-tso-trim" -baseline "$work/sim.json" -o "$work/report-sim-baseline.html" "$work/sim.json" 2>/dev/null
shoot "$work/report-sim-baseline.html" report-sim-baseline

if [ $kernel = 1 ]; then
	rc=0
	"$work/tsolab" test -json "$work/kernel.json" -report "$work/report-kernel.html" "$root/examples/tso-basics" >"$work/kernel.out" 2>&1 || rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$work/kernel.out" >&2; exit 1; }
	shoot "$work/report-kernel.html" report-kernel
else
	echo "kernel report skipped (needs root; -k given or not root)"
fi
echo "ok: reports render in headless Chromium without console messages"
