#!/usr/bin/env bash
# The recorder behind a backlog of frames (issue 18, docs/BENCHMARKS.md
# "record"): the writer slower than the stream, as a user meets it. The
# simulator publishes 200 Hz states over zenoh and FPS (60) 1080p rgb8
# gradient frames over iceoryx2 from its frame ring; vrlog record stores the
# frames at COMP (zstd-4), which two cores compress far slower than 370 MB/s,
# with a QUEUE (512M) queue, so hundreds of MB of frames wait for the writer.
# Two scenarios, per binary directory in BINS, interleaved: kill9 ROUNDS
# (3) times, then drain DRAIN_ROUNDS (1) times:
#
#   kill9  record for SECS (8 s) of publishing, kill -9, vrlog recover; of
#          the states published before the kill, how many are missing from
#          the recovered log: all of them, and those published more than
#          1 s and 2 s before the kill (FlushInterval is 1 s), and the age
#          of the oldest missing one.
#   drain  the simulator publishes SECS and stops; SIGINT to the recorder;
#          how long until it exits (a binary without --drain-timeout is
#          stopped after 300 s), its exit code, and what it counted as
#          recorder drops.
#
#   bench/backlog.sh                                # bin/ only
#   BINS="/work/main/bin bin" bench/backlog.sh      # before / after, interleaved
set -euo pipefail
cd "$(dirname "$0")/.."
BINS=(${BINS:-bin})
SECS=${SECS:-8}
FPS=${FPS:-60}
COMP=${COMP:-zstd-4}
QUEUE=${QUEUE:-512M}
ROUNDS=${ROUNDS:-3}
DRAIN_ROUNDS=${DRAIN_ROUNDS:-1}
PY=${PY:-python3}
PORT=${PORT:-17561}
T=$(mktemp -d "${TMPDIR:-/var/tmp}/vrlog-backlog-bench.XXXXXX") # on disk, not tmpfs
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

echo "load: $(uptime | sed 's/.*load/load/'); 1080p rgb8 gradient frames at $FPS Hz + 200 Hz states, $COMP, queue $QUEUE, ${SECS}s, logs in $T"
printf "%-22s %-6s %5s %10s %7s %8s %8s %11s %8s %6s %7s\n" bin run round published lost "lost>1s" "lost>2s" oldest_lost end_s exit drops

record() { # bin, extra args...
	local bin=$1; shift
	rm -f "$T"/b.vrlog "$T"/fixed.vrlog "$T"/truth.jsonl "$T"/states.csv "$T"/frames.csv
	"$bin"/vrlog record -q -o "$T/b.vrlog" --listen "tcp/127.0.0.1:$PORT" --no-multicast -k "vr/$robot/state" -s "vr/$robot/camera/front" \
		--compression "$COMP" --probe-interval 0 --queue-bytes "$QUEUE" "$@" 2> "$T/rec.err" &
	rec=$!
	sleep 0.5
}

sim() { # duration
	"${BINS[0]}"/vrlog sim -q --robot "$robot" --connect "tcp/127.0.0.1:$PORT" --no-multicast --state-hz 200 --frame-hz "$FPS" \
		--width 1920 --height 1080 --frame-ring 8 --frame-content gradient --duration "$1" --start-delay 1s --log "$T/truth.jsonl" &
	simpid=$!
}

n=0
for round in $(seq "$ROUNDS"); do
	for bin in "${BINS[@]}"; do
		n=$((n + 1)); robot=bl$$n # a fresh service: a killed recorder leaves its iceoryx2 port behind
		record "$bin"
		sim $((SECS + 30))s
		sleep $((SECS + 1)) # 1 s start delay
		killed=$(date +%s%N)
		kill -9 "$rec"; wait "$rec" 2> /dev/null || true
		kill -INT "$simpid"; wait "$simpid" || true
		"$bin"/vrlog recover "$T/b.vrlog" -o "$T/fixed.vrlog" > /dev/null 2>&1
		"$bin"/vrlog export "$T/fixed.vrlog" --format csv --channel "vr/$robot/state" -o "$T/states.csv" > /dev/null
		"$PY" - "$T" "$robot" "$killed" "$bin" "$round" <<'PY'
import csv, json, sys
T, robot, killed, bin, rnd = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
ch = f"vr/{robot}/state"
rec = {int(r["seq"]) for r in csv.DictReader(open(f"{T}/states.csv"))}
first = min(rec) if rec else 0
pub = [p for p in map(json.loads, open(f"{T}/truth.jsonl")) if p["channel"] == ch and p["seq"] >= first and p["t_ns"] < killed]
lost = [(killed - p["t_ns"]) / 1e9 for p in pub if p["seq"] not in rec]
print(f"{bin:<22} {'kill9':<6} {rnd:>5} {len(pub):>10} {len(lost):>7} {sum(a > 1 for a in lost):>8} {sum(a > 2 for a in lost):>8} "
      f"{max(lost, default=0):>10.2f}s {'':>8} {'':>6} {'':>7}")
PY
	done
done
for round in $(seq "$DRAIN_ROUNDS"); do
	for bin in "${BINS[@]}"; do
		n=$((n + 1)); robot=bd$$n
		args=()
		"$bin"/vrlog record --help 2>&1 | grep -q -- --drain-timeout && args=(--drain-timeout "${DRAIN:-5s}")
		record "$bin" "${args[@]}"
		sim "${SECS}s"
		wait "$simpid"
		sleep 0.3
		start=$(date +%s%N)
		kill -INT "$rec"
		code=0
		( sleep 300; kill -9 "$rec" 2> /dev/null ) & guard=$!
		wait "$rec" || code=$?
		end=$(date +%s%N)
		pkill -P "$guard" sleep 2> /dev/null || true
		kill "$guard" 2> /dev/null || true
		drops=$("$bin"/vrlog info --json "$T/b.vrlog" 2> /dev/null | "$PY" -c 'import json,sys; print(sum(c["drops"] for c in json.load(sys.stdin)["channels"]))' || echo "?")
		printf "%-22s %-6s %5s %10s %7s %8s %8s %11s %8.1f %6s %7s\n" "$bin" drain "$round" "" "" "" "" "" "$(( (end - start) / 1000000 ))e-3" "$code" "$drops"
	done
done
