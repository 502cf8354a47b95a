#!/usr/bin/env bash
# Side by side with iceoryx2's own tools (`cargo install iceoryx2-cli --version 0.10.0`),
# on the same iceoryx2 service in the same run:
#
#  1. record: the simulator publishes FRAME_HZ frames of WxH rgb8 for DUR;
#     `vrlog record` and `iox2 service record -d IOX2DUMP` record it at once.
#     Printed: frames published, recorded by each, peak RSS of each.
#  2. replay: both recordings are replayed into the same subscriber (a
#     `vrlog record` of the service), one after the other; the subscriber's
#     receive stamps are compared with the original ones, sample by sample
#     (matched by seq): |(t_i - t_0) - (orig_i - orig_0)|, p50/p99/max. Both
#     replays are seen through the same subscriber (200 µs poll interval),
#     so the comparison is fair; the floor is that poll interval.
#
#   IOX2=~/.cargo/bin/iox2 bench/iox2_compare.sh [DUR] [FRAME_HZ] [W] [H]
set -euo pipefail
cd "$(dirname "$0")/.."
IOX2=${IOX2:-$HOME/.cargo/bin/iox2}
DUR=${1:-10s}; HZ=${2:-1000}; W=${3:-16}; H=${4:-16}
BIN=${BIN:-bin}
secs=${DUR%s}
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
SVC=vr/cmp$$/camera/front
PORT=${PORT:-17771}
Z=(--listen "tcp/127.0.0.1:$PORT" --no-multicast-scouting)

echo "== record: $HZ Hz ${W}x${H} rgb8 frames for $DUR on $SVC"
/usr/bin/time -f %M -o "$T/rss.vrlog" "$BIN"/vrlog record -q -o "$T/orig.vrlog" -s "$SVC" --probe-interval 0 --no-multicast-scouting &
vrec=$!
"$BIN"/vrlog sim --robot "cmp$$" "${Z[@]}" -q --state-hz 1 --frame-hz "$HZ" --width "$W" --height "$H" --duration "$((secs + 2))s" --start-delay 1500ms 2> "$T/sim.txt" &
sim=$!
sleep 0.7
/usr/bin/time -f %M -o "$T/rss.iox2" "$IOX2" service record -d IOX2DUMP -t "$((secs + 1))" -o "$T/orig.iox2" "$SVC" > /dev/null 2>&1 &
irec=$!
wait $sim
sleep 0.5
pkill -INT -P $vrec; wait $vrec || true
wait $irec || true
vcount=$("$BIN"/vrlog info --json "$T/orig.vrlog" | python3 -c 'import json,sys; print(sum(c["count"] for c in json.load(sys.stdin)["channels"]))')
isize=$(wc -c < "$T/orig.iox2")
echo "vrlog record:        $vcount frames, peak RSS $(( $(cat "$T/rss.vrlog") / 1024 )) MB"
echo "iox2 service record: $isize bytes of IOX2DUMP, peak RSS $(( $(cat "$T/rss.iox2") / 1024 )) MB"

replay_into() { # name, command...
	local name=$1; shift
	# iox2 service replay only opens an existing service: a Python subscriber
	# peer creates it (same types) and holds it open for both replays.
	.venv/bin/python peers/subscriber.py --service "$SVC" --frames 100000000 --timeout "$((secs + 10))" --out /dev/null 2>/dev/null &
	local holder=$!
	sleep 1
	"$BIN"/vrlog record -q -o "$T/$name.vrlog" -s "$SVC" --probe-interval 0 --no-multicast-scouting &
	local rec=$!
	sleep 0.5
	"$@" > "$T/$name.out" 2>&1 || true
	sleep 0.5
	pkill -INT -P $rec 2>/dev/null || kill -INT $rec; wait $rec || true
	kill $holder 2>/dev/null; wait $holder 2>/dev/null || true
	"$BIN"/vrlog export "$T/$name.vrlog" --format csv -o "$T/$name.csv" >/dev/null
}
"$BIN"/vrlog export "$T/orig.vrlog" --format csv -o "$T/orig.csv" >/dev/null
replay_into iox2 "$IOX2" service replay -d IOX2DUMP -i "$T/orig.iox2"
replay_into vrlog "$BIN"/vrlog replay --quiet --delay 300ms "${Z[@]}" "$T/orig.vrlog"

python3 - "$T" <<'PY'
import csv, sys
T = sys.argv[1]
def load(name):
    rows = list(csv.DictReader(open(f"{T}/{name}.csv")))
    return {int(r["seq"]): int(r["recv_mono_ns"]) for r in rows if r.get("seq") not in (None, "")}
orig = load("orig")
for name in ("iox2", "vrlog"):
    got = load(name)
    seqs = sorted(s for s in got if s in orig)
    if len(seqs) < 2:
        print(f"{name:6}: {len(seqs)} samples matched"); continue
    s0 = seqs[0]
    err = sorted(abs((got[s] - got[s0]) - (orig[s] - orig[s0])) / 1e3 for s in seqs)
    q = lambda p: err[min(len(err) - 1, int(p * len(err)))]
    print(f"{name:6} replay: {len(seqs)}/{len(orig)} samples; timing error as received: p50 {q(0.5):.0f} µs, p99 {q(0.99):.0f} µs, max {err[-1]:.0f} µs")
PY
grep -E "total|ERR" "$T/vrlog.out" | head -3 || true
