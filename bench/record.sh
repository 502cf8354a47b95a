#!/usr/bin/env bash
# Sustained recording benchmark (issue 5, docs/BENCHMARKS.md):
# the bundled simulator publishes 1 kHz states over zenoh and 1920x1080 rgb8
# frames (6.2 MB) over iceoryx2; vrlog record records both for DURATION with
# zstd and without compression. For each frame rate it prints what was
# published, what was recorded, the recorder's drops, the bytes written and
# the recorder's peak RSS. With IOX2=path/to/iox2 it also runs
# `iox2 service record` on the same service for the same time.
#
#   bench/record.sh 60s 30 45 60          # durations and frame rates
#   IOX2=~/.cargo/bin/iox2 bench/record.sh 60s 30
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-60s}; shift || true
RATES=("${@:-30}")
BIN=${BIN:-bin}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PORT=${PORT:-17557}
secs=${DUR%s}

printf "%-6s %-5s %10s %10s %10s %8s %10s %9s %9s\n" comp fps pub_frames rec_frames pub_states rec_st drops MB_written peakRSS_MB
for fps in "${RATES[@]}"; do
	for comp in zstd none; do
		out="$TMP/b.vrlog"; rm -f "$out"
		/usr/bin/time -f "%M" -o "$TMP/rss" "$BIN"/vrlog record -q -o "$out" --listen "tcp/127.0.0.1:$PORT" --no-multicast \
			-k vr/bench/state -s vr/bench/camera/front --compression "$comp" --probe-interval 0 &
		rec=$!
		"$BIN"/vrlog sim --robot bench --connect "tcp/127.0.0.1:$PORT" --no-multicast --state-hz 1000 --frame-hz "$fps" \
			--width 1920 --height 1080 --duration "$DUR" --start-delay 1s 2> "$TMP/sim.txt"
		sleep 1
		pkill -INT -P $rec; wait $rec
		read -r pst pfr < <(sed -n 's/.*stopped: \([0-9]*\) states, \([0-9]*\) frames.*/\1 \2/p' "$TMP/sim.txt")
		"$BIN"/vrlog info --json "$out" > "$TMP/info.json"
		python3 - "$TMP/info.json" "$comp" "$fps" "$pst" "$pfr" "$(cat "$TMP/rss")" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
f = info["files"][0] if "files" in info else info
chans = {c["name"]: c for c in f["channels"]}
st, fr = chans.get("vr/bench/state", {}), chans.get("vr/bench/camera/front", {})
drops = sum(c.get("recorder_drops", c.get("drops", 0)) for c in f["channels"])
size = f.get("size_bytes", f.get("size", 0))
print(f"{sys.argv[2]:<6} {sys.argv[3]:<5} {sys.argv[5]:>10} {fr.get('count', 0):>10} {sys.argv[4]:>10} {st.get('count', 0):>8} {drops:>10} {size/1e6:>9.0f} {int(sys.argv[6])/1024:>9.0f}")
PY
	done
	if [ -n "${IOX2:-}" ]; then
		"$BIN"/vrlog sim --robot bench --camera front --state-hz 1000 --frame-hz "$fps" --width 1920 --height 1080 \
			--duration "$DUR" --start-delay 2s -q --listen "tcp/127.0.0.1:$PORT" --no-multicast 2> "$TMP/sim.txt" &
		sim=$!
		sleep 1
		timeout "$((secs + 2))" /usr/bin/time -f "%M" -o "$TMP/rss" "$IOX2" service record --service vr/bench/camera/front \
			--output "$TMP/iox2.rec" >/dev/null 2>&1 || true
		wait $sim || true
		echo "iox2 service record at $fps fps: $(wc -c < "$TMP/iox2.rec" 2>/dev/null || echo 0) bytes, peak RSS $(( $(cat "$TMP/rss" 2>/dev/null || echo 0) / 1024 )) MB"
	fi
done
