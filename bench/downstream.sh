#!/usr/bin/env bash
# Downstream speed (issue 27): `vrlog export --format mcap` against a plain
# copy of the same log, and with zstd chunks against the zstd CLI on the
# same bytes; the Python reader's payload path against reading the same
# file in Python in 1 MiB blocks. Each pair runs interleaved, ROUNDS times,
# on a warm page cache; prints every run, the medians and the ratios.
#
#   bench/downstream.sh                 # 1 GiB of 1080p frames, 5 rounds
#   MIB=4096 ROUNDS=7 bench/downstream.sh
#
# The log (bench/mkframes: 1 kHz states, 30 Hz 1920x1080 rgb8 frames stored
# raw, chunks sealed every second as the recorder does) and the outputs
# live on a private tmpfs (mounted here when run as root, else in DIR), so
# the figures are the tools' own, not the disk's: on a disk, export's
# fsync before it renames its output (it commits files durably) makes it
# wait for the disk, which a plain cp does not. DISK=1 also runs the export
# against `cp && sync FILE` on DIR's disk. Figures: docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
MIB=${MIB:-1024}
DIR=${DIR:-/var/tmp}
PY=${PY:-.venv/bin/python}
TMP=$(mktemp -d "$DIR/vrlog-downstream.XXXXXX")
MNT=""
cleanup() {
	if [ -n "$MNT" ]; then umount "$MNT" || true; fi
	rm -rf "$TMP"
}
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$TMP/vrlog" ./cmd/vrlog
CGO_ENABLED=0 go build -o "$TMP/mkframes" ./bench/mkframes
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

# secs CMD...: wall seconds of one run (output discarded, failure fatal).
secs() {
	local t0 t1
	cat "$LOG" > /dev/null # warm
	t0=$(date +%s.%N)
	"$@" > /dev/null
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }
mbs() { echo "$SIZE / $1 / 1000000" | bc -l | xargs printf '%.0f'; }

run_cp() { cp "$LOG" "$WORK/copy.vrlog" && rm "$WORK/copy.vrlog"; }
run_cp_sync() { cp "$LOG" "$DIR/vrlog-downstream-copy.vrlog" && sync "$DIR/vrlog-downstream-copy.vrlog" && rm "$DIR/vrlog-downstream-copy.vrlog"; }
run_export() { "$TMP/vrlog" export "$LOG" --compression "$1" -f -o "$2" && rm "$2"; }
run_zstd() { zstd -q -3 "-T$1" -c "$LOG" > "$WORK/raw.zst" && rm "$WORK/raw.zst"; }
run_py() { "$PY" bench/pyread.py "$1" "$LOG"; }

declare -A T
pairs=(cp export_none zstd_T1 zstd_T0 export_zstd py_blocks py_payloads py_frames)
[ "${DISK:-0}" = 1 ] && pairs+=(cp_sync_disk export_none_disk)
for r in $(seq "$ROUNDS"); do
	for p in "${pairs[@]}"; do
		case $p in
		cp) s=$(secs run_cp) ;;
		export_none) s=$(secs run_export none "$WORK/out.mcap") ;;
		zstd_T1) s=$(secs run_zstd 1) ;;
		zstd_T0) s=$(secs run_zstd 0) ;;
		export_zstd) s=$(secs run_export zstd "$WORK/out.mcap") ;;
		py_blocks) s=$(secs run_py blocks) ;;
		py_payloads) s=$(secs run_py payloads) ;;
		py_frames) s=$(secs run_py frames) ;;
		cp_sync_disk) s=$(secs run_cp_sync) ;;
		export_none_disk) s=$(secs run_export none "$DIR/vrlog-downstream-out.mcap") ;;
		esac
		T[$p]="${T[$p]:-} $s"
		printf 'round %d %-18s %8.3f s %6s MB/s\n' "$r" "$p" "$s" "$(mbs "$s")"
	done
done
declare -A M
echo "medians of $ROUNDS rounds ($(nproc) cores; load now: $(uptime | sed 's/.*load average: //')):"
for p in "${pairs[@]}"; do
	M[$p]=$(tr ' ' '\n' <<< "${T[$p]}" | grep . | median)
	printf '  %-18s %8.3f s %6s MB/s\n' "$p" "${M[$p]}" "$(mbs "${M[$p]}")"
done
ratio() { printf '  %-46s %5.0f %% (target >= %d %%)\n' "$1" "$(echo "100 * ${M[$3]} / ${M[$2]}" | bc -l)" "$4"; }
echo "ratios (speed of the first against the second):"
ratio "export --compression none vs cp" export_none cp 50
ratio "export --compression zstd vs zstd -3 -T1" export_zstd zstd_T1 80
ratio "export --compression zstd vs zstd -3 -T0" export_zstd zstd_T0 80
ratio "python payloads vs 1 MiB blocks" py_payloads py_blocks 50
ratio "python frames() as numpy vs 1 MiB blocks" py_frames py_blocks 50
[ "${DISK:-0}" = 1 ] && ratio "export none vs cp && sync, on $DIR's disk" export_none_disk cp_sync_disk 50
exit 0
