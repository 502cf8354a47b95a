#!/usr/bin/env bash
# The main job end to end on this machine: the bundled simulator publishes
# (with a few injected faults), vrlog records ~10 s, analyzes the log, and
# replays it into the real transports while measuring its own timing error.
# Everything stays on loopback. Run through `make demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
OUT=${OUT:-demo.vrlog}
PORT=${PORT:-17447}
ZARGS=(--no-multicast)

echo "== 1. record 10 s: the simulator publishes states (zenoh) and 320x240 frames (iceoryx2);"
echo "      it drops every 40th sample and restarts after 5 s with a 2 s outage"
# The recorder stops first, while the simulator still publishes: a stream
# that stops before the recording ends is an outage ("fell silent"), so a
# recording of a simulator that stops first reports one on every channel.
"$BIN"/vrlog record -o "$OUT" --force -q --listen "tcp/127.0.0.1:$PORT" "${ZARGS[@]}" \
	-k 'vr/demo/**' -s vr/demo/camera/front --note "make demo" --duration 10s &
REC=$!
trap 'kill $REC 2>/dev/null || true' EXIT
"$BIN"/vrlog sim --robot demo --connect "tcp/127.0.0.1:$PORT" "${ZARGS[@]}" -q --duration 12s \
	--drop-every 40 --restart-after 5s --outage 2s --start-delay 1s --width 320 --height 240 &
SIM=$!
trap 'kill $REC $SIM 2>/dev/null || true' EXIT
wait $REC
wait $SIM
trap - EXIT
"$BIN"/vrlog info "$OUT"

echo
echo "== 2. analyze, as a CI gate: --max-skips 0 --max-restarts 0 must fail on the injected faults"
if "$BIN"/vrlog analyze --max-skips 0 --max-restarts 0 "$OUT"; then
	echo "unexpected: the gate passed" >&2
	exit 1
else
	echo "(analyze exited $?: the gate caught the injected drops and the restart)"
fi

echo
echo "== 3. replay the first 5 s at the original pacing into the real transports (recorded again by a"
echo "      second recorder, standing in for a controller), restamped to look live, with replay's own timing error"
# The second recorder stops in the middle of the replayed window (it
# records 5 s; the replay publishes 5 s after a 2 s delay), for the same
# reason.
"$BIN"/vrlog record -o "${OUT%.vrlog}-replayed.vrlog" --force -q --connect "tcp/127.0.0.1:$PORT" "${ZARGS[@]}" \
	-k 'vr/demo/**' -s vr/demo/camera/front --probe-interval 0 --duration 5s &
REC=$!
trap 'kill $REC 2>/dev/null || true' EXIT
"$BIN"/vrlog replay --listen "tcp/127.0.0.1:$PORT" "${ZARGS[@]}" --delay 2s --end 5 --restamp "$OUT"
wait $REC
trap - EXIT
echo
echo "== 4. the replayed stream, as the second recorder saw it"
"$BIN"/vrlog analyze "${OUT%.vrlog}-replayed.vrlog" | sed -n '4,9p'
