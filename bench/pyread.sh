#!/usr/bin/env bash
# The Python reader's payload loop against a plain Python read of the same
# file (issue 40, 3; target >= 0.5x), timed as a user times it: the loop in
# the process (bench/pyread.py), the imports left out on both sides. Three
# logs as the recorder stores them:
#   states       1 M real 200-byte states at 1 kHz, lz4 (bench/mkstates)
#   frames_none  MIB MiB of 1920x1080 rgb8 frames at 30 Hz stored raw, with
#                1 kHz lz4 states (bench/mkframes)
#   frames_zstd  the same frames in zstd-1 chunks (the recorder's default
#                for iceoryx2 channels)
# Per log, every round runs the peer (blocks: readinto a reused 1 MiB
# buffer), the reader (payloads: records() with every header and payload;
# frames: frames() with every pixels() array) and on the state log the
# floor (a loop over as many prebuilt records: what any reader's user loop
# costs), each with two touches: len (the loop reads no byte itself) and
# crc32 (zlib.crc32 reads every byte, on both sides). Interleaved, ROUNDS
# times, on a warm page cache; prints every run, the medians and the
# ratios (the peer's time over the reader's: the reader's speed as a
# share of the peer's), by wall clock and by CPU time.
#
#   bench/pyread.sh                    # 5 rounds, 1 GiB of frames, in /var/tmp
#   ROUNDS=9 MIB=2048 DIR=/mnt/disk bench/pyread.sh
#   BASE=main bench/pyread.sh          # also the reader of git rev BASE, interleaved
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
MIB=${MIB:-1024}
DIR=${DIR:-/var/tmp}
PY=${PY:-.venv/bin/python}
TMP=$(mktemp -d "$DIR/vrlog-pyread.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
export PYTHONPATH=$PWD/python # the checkout's reader
if [ -n "${BASE:-}" ]; then
	mkdir "$TMP/base"
	git archive "$BASE" python | tar -x -C "$TMP/base"
fi
CGO_ENABLED=0 go build -o "$TMP/mkstates" ./bench/mkstates
CGO_ENABLED=0 go build -o "$TMP/mkframes" ./bench/mkframes
"$TMP/mkstates" -o "$TMP/states.vrlog" -n 1000000
"$TMP/mkframes" -o "$TMP/frames_none.vrlog" -mib "$MIB"
"$TMP/mkframes" -o "$TMP/frames_zstd.vrlog" -mib "$MIB" -frames zstd
LOGS=(states frames_none frames_zstd)
for l in "${LOGS[@]}"; do echo "$l: $(stat -c %s "$TMP/$l.vrlog") bytes"; done
echo "load before: $(uptime)"
modes() { if [ "$1" = states ]; then echo blocks payloads floor; else echo blocks payloads frames; fi; }
: > "$TMP/runs"
for r in $(seq "$ROUNDS"); do
	for l in "${LOGS[@]}"; do
		cat "$TMP/$l.vrlog" > /dev/null
		for touch in len crc32; do
			for m in $(modes "$l"); do
				out=$("$PY" bench/pyread.py "$m" "$touch" "$TMP/$l.vrlog")
				echo "$r $l $out" | tee -a "$TMP/runs"
				if [ -n "${BASE:-}" ] && [ "$m" != blocks ] && [ "$m" != floor ]; then
					out=$(PYTHONPATH=$TMP/base/python "$PY" bench/pyread.py "$m" "$touch" "$TMP/$l.vrlog")
					echo "$r $l $m@$BASE ${out#* }" | tee -a "$TMP/runs"
				fi
			done
		done
	done
done
echo "load after: $(uptime)"
# medians and ratios: runs lines are "ROUND LOG MODE TOUCH WALL CPU BYTES"
awk -v rounds="$ROUNDS" '
function median(s,   n, a, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $2 " " $3 " " $4; w[k] = w[k] " " $5; c[k] = c[k] " " $6; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
END {
	printf "medians of %d rounds (wall s, cpu s) and the speed as a share of the peer (blocks, same touch):\n", rounds
	for (i = 1; i <= n; i++) {
		split(order[i], f, " ")
		mw = median(w[order[i]]); mc = median(c[order[i]])
		b = f[1] " blocks " f[3]
		pw = median(w[b]); pc = median(c[b])
		printf "  %-12s %-9s %-6s %8.3f %8.3f", f[1], f[2], f[3], mw, mc
		if (f[2] != "blocks") printf "   %5.3fx wall  %5.3fx cpu", pw / mw, pc / mc
		printf "\n"
	}
}' "$TMP/runs"
