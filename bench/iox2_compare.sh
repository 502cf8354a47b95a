#!/usr/bin/env bash
# Side by side with iceoryx2's own tools (`cargo install iceoryx2-cli --version 0.10.0`),
# on the same iceoryx2 service in the same run:
#
#  1. record: the simulator publishes FRAME_HZ frames of WxH rgb8 for DUR
#     from a ring of pre-rendered frames (so the simulator is not the
#     limit); `vrlog record` and `iox2 service record -d IOX2DUMP` record it
#     at once, ROUNDS times. Printed per round: frames published (the
#     simulator's truth log), recorded by each (vrlog: its log; iox2: the
#     records in its dump, walked one by one), peak RSS of each, and the
#     median ratio vrlog/iox2.
#  2. replay (REPLAY=1): both recordings of the last round are replayed
#     into the same subscriber (a `vrlog record` of the service), one after
#     the other; the subscriber's receive stamps are compared with the
#     original ones, sample by sample (matched by seq):
#     |(t_i - t_0) - (orig_i - orig_0)|, p50/p99/max. Both replays are seen
#     through the same subscriber (200 µs poll interval), so the comparison
#     is fair; the floor is that poll interval. (bench/replay/pacing.sh
#     measures replay pacing with an independent subscriber.)
#
#   IOX2=/path/to/iox2 ROUNDS=3 bench/iox2_compare.sh [DUR] [FRAME_HZ] [W] [H]
set -euo pipefail
cd "$(dirname "$0")/.."
IOX2=${IOX2:-$(command -v iox2 || echo "$HOME/.cargo/bin/iox2")}
PATH=$(dirname "$IOX2"):$PATH # iox2 runs its subcommands (iox2-service) from PATH
DUR=${1:-10s}; HZ=${2:-1000}; W=${3:-16}; H=${4:-16}
ROUNDS=${ROUNDS:-1}
BIN=${BIN:-bin}
secs=${DUR%s}
T=$(mktemp -d "${TMPDIR:-/var/tmp}/vrlog-iox2-compare.XXXXXX") # on disk, not tmpfs
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
SVC=vr/cmp$$/camera/front
PORT=${PORT:-17771}
Z=(--listen "tcp/127.0.0.1:$PORT" --no-multicast-scouting)

echo "load: $(uptime | sed 's/.*load/load/'); $HZ Hz ${W}x${H} rgb8 frames (ring of 8) for $DUR on $SVC, $ROUNDS round(s), files in $T"
printf "%-5s %9s %13s %11s %12s %10s %7s\n" round published "vrlog frames" "iox2 frames" "vrlog/iox2" "vrlog RSS" "iox2 RSS"
for round in $(seq "$ROUNDS"); do
	rm -f "$T"/orig.vrlog "$T"/orig.iox2 "$T"/truth.jsonl
	/usr/bin/time -f %M -o "$T/rss.vrlog" "$BIN"/vrlog record -q -o "$T/orig.vrlog" -s "$SVC" --probe-interval 0 --no-multicast-scouting --compression none &
	vrec=$!
	"$BIN"/vrlog sim --robot "cmp$$" "${Z[@]}" -q --state-hz 1 --frame-hz "$HZ" --width "$W" --height "$H" --frame-ring 8 \
		--duration "$((secs + 2))s" --start-delay 1500ms --log "$T/truth.jsonl" 2> "$T/sim.txt" &
	sim=$!
	sleep 0.7
	# -t alone does not always end it (seen hanging once the service was gone)
	/usr/bin/time -f %M -o "$T/rss.iox2" timeout -s INT "$((secs + 6))" "$IOX2" service record -d IOX2DUMP -t "$((secs + 1))" -o "$T/orig.iox2" "$SVC" > /dev/null 2>&1 &
	irec=$!
	wait $sim
	sleep 0.5
	pkill -INT -P $vrec || true # the recorder, child of time (|| true: set -e must not trip on a process gone)
	wait $vrec || true
	wait $irec || true
	python3 - "$T" "$SVC" "$round" <<'PY'
import json, os, struct, subprocess, sys
T, svc, rnd = sys.argv[1], sys.argv[2], sys.argv[3]
published = sum(1 for l in open(f"{T}/truth.jsonl") if json.loads(l)["channel"] == svc)
info = json.loads(subprocess.run([os.environ.get("BIN", "bin") + "/vrlog", "info", "--json", f"{T}/orig.vrlog"], capture_output=True, check=True).stdout)
vrlog = sum(c["count"] for c in info["channels"])
# IOX2DUMP (iceoryx2-userland-record-and-replay 0.10): the RecordHeader
# struct, then per record u64 ms stamp, and system header, user header and
# payload, each a u64 length and its bytes. The header's size is found as
# the offset from which the records end exactly at the end of the file.
size = os.path.getsize(f"{T}/orig.iox2")
def walk(f, at):
    n = 0
    while at < size:
        f.seek(at + 8)
        for _ in range(3):
            b = f.read(8)
            if len(b) < 8:
                return None
            (l,) = struct.unpack("<Q", b)
            if l > size:
                return None
            at = f.tell() + l
            f.seek(at)
        n += 1
    return n if at == size else None
with open(f"{T}/orig.iox2", "rb") as f:
    counts = [c for c in (walk(f, h) for h in range(0, 4096, 8)) if c is not None]
iox2 = max(counts) if counts else 0
rss = lambda n: int(open(f"{T}/rss.{n}").read().split()[-1]) // 1024
ratio = vrlog / iox2 if iox2 else float("inf")
print(f"{rnd:<5} {published:>9} {vrlog:>13} {iox2:>11} {ratio:>12.2f} {rss('vrlog'):>8} MB {rss('iox2'):>4} MB")
open(f"{T}/ratios", "a").write(f"{ratio}\n")
PY
done
python3 -c "
import statistics, sys
r = [float(l) for l in open('$T/ratios')]
print(f'median vrlog/iox2 frames over {len(r)} round(s): {statistics.median(r):.2f}x')"
[ -n "${REPLAY:-}" ] || exit 0

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
	pkill -INT -P $rec 2>/dev/null || kill -INT $rec 2>/dev/null || true
	wait $rec || true
	kill $holder 2>/dev/null || true # gone already when it timed out: set -e must not trip
	wait $holder 2>/dev/null || true
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
