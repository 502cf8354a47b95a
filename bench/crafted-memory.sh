#!/usr/bin/env bash
# Peak memory (max RSS, /usr/bin/time) and exit code of every verb on each
# crafted file of logfmt's TestCorruptionTable (torn and zeroed tails,
# decompression bombs in payload and metadata, flipped magic, header and
# footer, ...) and on a FIFO with no writer. Fails if a verb's peak
# exceeds LIMIT_MB (default 300), if a verb hangs (TIMEOUT, default 60 s)
# or if a verb crashes (a Go runtime fatal error or panic: exit code 2 with
# a "fatal error"/"panic:" line on stderr, or any signal).
#
#   bench/crafted-memory.sh                 # bin/vrlog (make build)
#   VRLOG=/path/to/old/vrlog LIMIT_MB=100000 bench/crafted-memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VRLOG=${VRLOG:-bin/vrlog}
LIMIT_MB=${LIMIT_MB:-300}
TIMEOUT=${TIMEOUT:-60}
[ -x "$VRLOG" ] || { echo "no $VRLOG: run make build" >&2; exit 2; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/in" "$dir/out"
go test -count=1 -run '^TestCorruptionTable$' ./logfmt/ -args -crafted "$dir/in" >/dev/null
mkfifo "$dir/in/fifo.vrlog"

verbs=(info cat cat-tolerant verify recover cut merge export-mcap export-csv export-parquet analyze analyze-tolerant analyze-dataset replay)
run() { # verb file
	local f=$1 v=$2 o=$dir/out/$v
	rm -rf "$o" "$o".*
	case $v in
	info) echo info "$f" ;;
	cat) echo cat "$f" ;;
	cat-tolerant) echo cat --tolerant "$f" ;;
	verify) echo verify "$f" ;;
	recover) echo recover "$f" -o "$o.vrlog" ;;
	cut) echo cut "$f" -o "$o.vrlog" ;;
	merge) echo merge "$f" "$f" -o "$o.vrlog" ;;
	export-mcap) echo export "$f" --format mcap -o "$o.mcap" ;;
	export-csv) echo export "$f" --format csv -o "$o.csv" ;;
	export-parquet) echo export "$f" --format parquet --payloads -o "$o.parquet" ;;
	analyze) echo analyze "$f" ;;
	analyze-tolerant) echo analyze --tolerant "$f" ;;
	analyze-dataset) echo analyze --tolerant --dataset "$o.dataset" "$f" ;;
	replay) echo replay --rate max -q --linger 0 --no-multicast --listen tcp/127.0.0.1:0 "$f" ;;
	esac
}

printf '%-34s' file
for v in "${verbs[@]}"; do printf ' %16s' "$v"; done
echo
fail=0
worst=0
for f in "$dir"/in/*.vrlog; do
	name=$(basename "$f" .vrlog)
	printf '%-34s' "$name"
	for v in "${verbs[@]}"; do
		# shellcheck disable=SC2046
		set +e
		timeout -k 5 "$TIMEOUT" /usr/bin/time -f %M -o "$dir/rss" "$VRLOG" $(run "$f" "$v") >/dev/null 2>"$dir/err"
		rc=$?
		set -e
		kb=$(tail -1 "$dir/rss" 2>/dev/null | grep -Eo '^[0-9]+$' || echo 0)
		mb=$((kb / 1024))
		cell="${mb}M/$rc"
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			cell="HANG"
			fail=1
		elif [ "$rc" -gt 3 ] || grep -qE '^(fatal error|panic:)' "$dir/err"; then
			cell="CRASH/$rc"
			fail=1
		fi
		if [ "$mb" -gt "$LIMIT_MB" ]; then
			cell="$cell!"
			fail=1
		fi
		worst=$((mb > worst ? mb : worst))
		printf ' %16s' "$cell"
	done
	echo
done
echo "cells: peak RSS in MiB / exit code (0 ok, 1 check failed, 2 input error, 3 runtime); '!' over ${LIMIT_MB} MiB"
echo "highest peak: ${worst} MiB"
exit $fail
