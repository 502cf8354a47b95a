#!/usr/bin/env bash
# Regenerates the bundled sample log from the bundled simulator, recorded
# over the real transports on loopback (make sample):
#
#   testdata/sample.vrlog        the log (about 1.5 MB)
#   testdata/sample.truth.jsonl  every sample the simulator published (sim --log)
#   testdata/sample.expected.*   the analyzer's golden text and JSON reports
#
# The faults are injected by the simulator at known places:
#   - random drops (1 % of each stream, --seed 7): seq gaps
#   - a restart after 5.84 s with a 15.93 s outage: elapsed froze at 5.84 s
#     and resumed at 21.77 s, seq starts again from 0
#   - a 500 ms pause at 25 s: an outage without skips
#   - frames stamped 8 ms before they are published: frame-to-state lag
#   - the simulator's clock 2 ms ahead: the clock-sync probes measure it
# analyzer's TestSampleAgainstTruth checks the report against the truth file.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
PORT=${PORT:-17611}
out=testdata/sample.vrlog
truth=testdata/sample.truth.jsonl
faults=(--drop-random 0.01 --seed 7 --restart-after 5.84s --outage 15.93s --pause 25s:500ms --frame-lag 8ms --clock-offset 2ms)

"$BIN"/vrlog record -q -f -o "$out" --listen "tcp/127.0.0.1:$PORT" --no-multicast \
	-k 'vr/r1/**' -s vr/r1/camera/front --time-service vr/r1/time \
	--note "vrlog sim ${faults[*]}: random seq gaps, a restart (elapsed froze at 5.84 s, resumed at 21.77 s), a 500 ms pause at 25 s, 8 ms frame lag, clock 2 ms ahead" &
rec=$!
trap 'kill $rec 2>/dev/null || true' EXIT
"$BIN"/vrlog sim -q --robot r1 --connect "tcp/127.0.0.1:$PORT" --no-multicast \
	--state-hz 25 --frame-hz 30 --width 64 --height 48 --duration 30s --start-delay 1500ms \
	"${faults[@]}" --log "$truth" --force
sleep 1
kill -INT $rec
wait $rec
trap - EXIT
"$BIN"/vrlog verify "$out"
go test ./analyzer -run 'SampleGolden' -update >/dev/null
go test ./analyzer -run 'Sample'
ls -l "$out" "$truth"
