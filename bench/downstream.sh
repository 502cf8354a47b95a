#!/usr/bin/env bash
# Downstream speed (issue 27): `vrlog export --format mcap` against a plain
# copy of the same log, and with zstd chunks against the zstd CLI on the
# same bytes (the Python reader's loop: bench/pyread.sh). Each pair runs
# interleaved, ROUNDS times, on a warm page cache; prints every run, the
# medians and the ratios.
#
#   bench/downstream.sh                 # 1 GiB of 1080p frames, 5 rounds
#   MIB=4096 ROUNDS=7 bench/downstream.sh
#   BASE=main bench/downstream.sh       # also the exports of git rev BASE, interleaved
#
# The log (bench/mkframes: 1 kHz states, 30 Hz 1920x1080 rgb8 frames stored
# raw, chunks sealed every second as the recorder does) and the outputs
# live on a private tmpfs (mounted here when run as root, else in DIR), so
# the figures are the tools' own, not the disk's. `cat LOG > OUT` is the
# floor of any program that reads and writes the bytes in user space (two
# copies where cp, copy_file_range, makes one in the kernel). On a disk, export's
# fsync before it renames its output (it commits files durably) makes it
# wait for the disk, which a plain cp does not. DISK=1 also runs the export
# against `cp && sync FILE` on DIR's disk. Figures: docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
MIB=${MIB:-1024}
DIR=${DIR:-/var/tmp}
TMP=$(mktemp -d "$DIR/vrlog-downstream.XXXXXX")
MNT=""
cleanup() {
	if [ -n "$MNT" ]; then umount "$MNT" || true; fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
CGO_ENABLED=0 go build -o "$TMP/vrlog" ./cmd/vrlog
CGO_ENABLED=0 go build -o "$TMP/mkframes" ./bench/mkframes
if [ -n "${BASE:-}" ]; then
	mkdir "$TMP/base"
	git archive "$BASE" | tar -x -C "$TMP/base"
	(cd "$TMP/base" && CGO_ENABLED=0 go build -o "$TMP/vrlog-base" ./cmd/vrlog)
fi
WORK=$TMP/work
mkdir -p "$WORK"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=$((MIB * 4 + 512))m vrlog-bench "$WORK"; then
	MNT=$WORK
	echo "files on a private tmpfs ($WORK)"
else
	echo "files in $WORK (no private tmpfs: not root)"
fi
LOG=$WORK/frames.vrlog
"$TMP/mkframes" -o "$LOG" -mib "$MIB"
SIZE=$(stat -c %s "$LOG")
echo "log: $SIZE bytes; load: $(uptime)"

# measure CMD...: one run on a warm cache; "WALL CPU" seconds (CPU: user +
# system of the command and its children) into $TMP/took; output
# discarded, failure fatal; the outputs are removed after it, untimed.
measure() {
	cat "$LOG" > /dev/null
	/usr/bin/time -f "%e %U %S" -o "$TMP/time" "$@" > /dev/null
	rm -f "$WORK/out" "$DIR/vrlog-downstream-out"
	awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$TMP/time" > "$TMP/took"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }
mbs() { echo "$SIZE / $1 / 1000000" | bc -l | xargs printf '%.0f'; }

OUT=$WORK/out
DOUT=$DIR/vrlog-downstream-out
# argv PAIR: the command of one side of a pair, in ARGV.
argv() {
	case $1 in
	cp) ARGV=(cp "$LOG" "$OUT") ;;
	cat) ARGV=(sh -c 'cat "$1" > "$2"' sh "$LOG" "$OUT") ;;
	export_none) ARGV=("$TMP/vrlog" export "$LOG" --compression none -f -o "$OUT") ;;
	zstd_T1) ARGV=(zstd -q -f -3 -T1 "$LOG" -o "$OUT") ;;
	zstd_T0) ARGV=(zstd -q -f -3 -T0 "$LOG" -o "$OUT") ;;
	export_zstd) ARGV=("$TMP/vrlog" export "$LOG" --compression zstd -f -o "$OUT") ;;
	base_export_none) ARGV=("$TMP/vrlog-base" export "$LOG" --compression none -f -o "$OUT") ;;
	base_export_zstd) ARGV=("$TMP/vrlog-base" export "$LOG" --compression zstd -f -o "$OUT") ;;
	cp_sync_disk) ARGV=(sh -c 'cp "$1" "$2" && sync "$2"' sh "$LOG" "$DOUT") ;;
	export_none_disk) ARGV=("$TMP/vrlog" export "$LOG" --compression none -f -o "$DOUT") ;;
	esac
}

declare -A T
pairs=(cp cat export_none zstd_T1 zstd_T0 export_zstd)
[ -n "${BASE:-}" ] && pairs+=(base_export_none base_export_zstd)
[ "${DISK:-0}" = 1 ] && pairs+=(cp_sync_disk export_none_disk)
declare -A C
for r in $(seq "$ROUNDS"); do
	for p in "${pairs[@]}"; do
		argv "$p"
		measure "${ARGV[@]}"
		read -r w c < "$TMP/took"
		T[$p]="${T[$p]:-} $w"
		C[$p]="${C[$p]:-} $c"
		printf 'round %d %-18s %8.3f s wall %6s MB/s  %8.3f s cpu\n' "$r" "$p" "$w" "$(mbs "$w")" "$c"
	done
done
declare -A M MC
echo "medians of $ROUNDS rounds ($(nproc) cores; load now: $(uptime | sed 's/.*load average: //')):"
for p in "${pairs[@]}"; do
	M[$p]=$(tr ' ' '\n' <<< "${T[$p]}" | grep . | median)
	MC[$p]=$(tr ' ' '\n' <<< "${C[$p]}" | grep . | median)
	printf '  %-18s %8.3f s wall %6s MB/s  %8.3f s cpu\n' "$p" "${M[$p]}" "$(mbs "${M[$p]}")" "${MC[$p]}"
done
# ratio NAME A B TARGET: A's speed as a share of B's (medians of wall
# time), and of CPU time (robust when other work shares the cores).
ratio() {
	printf '  %-46s %5.0f %% wall  %5.0f %% cpu  (target >= %d %%)\n' "$1" \
		"$(echo "100 * ${M[$3]} / ${M[$2]}" | bc -l)" "$(echo "100 * ${MC[$3]} / ${MC[$2]}" | bc -l)" "$4"
}
echo "ratios (speed of the first against the second):"
ratio "export --compression none vs cp" export_none cp 50
ratio "export --compression none vs cat LOG > OUT" export_none cat 50
ratio "export --compression zstd vs zstd -3 -T1" export_zstd zstd_T1 80
ratio "export --compression zstd vs zstd -3 -T0" export_zstd zstd_T0 80
if [ -n "${BASE:-}" ]; then
	ratio "export none vs $BASE's export none" export_none base_export_none 100
	ratio "export zstd vs $BASE's export zstd" export_zstd base_export_zstd 100
fi
if [ "${DISK:-0}" = 1 ]; then ratio "export none vs cp && sync, on $DIR's disk" export_none_disk cp_sync_disk 50; fi
exit 0
