#!/bin/sh
# Reproduces the replay figures in docs/replay.md ("Benchmarks").
# Needs the native library (make native). With root or CAP_SYS_NICE, set
# RT=1 to run the pacing benchmarks under SCHED_FIFO as well.
set -eu
cd "$(dirname "$0")/../.."
go test -c -o /tmp/vrlog-player.test ./player/
go test -c -o /tmp/vrlog-replay.test ./internal/command/replay/
echo "== engine: rate max into a no-op sink, 1 kHz pacing (CFS)"
/tmp/vrlog-player.test -test.run '^$' -test.bench 'RateMaxNoop' -test.benchmem
/tmp/vrlog-player.test -test.run '^$' -test.bench 'Pacing1kHz' -test.benchtime 1x
echo "== real zenoh: rate max, 1 kHz pacing (CFS)"
(cd internal/command/replay && /tmp/vrlog-replay.test -test.run '^$' -test.bench . -test.benchtime 1x)
if [ "${RT:-0}" = 1 ]; then
	echo "== the same under chrt -f 10"
	chrt -f 10 /tmp/vrlog-player.test -test.run '^$' -test.bench 'Pacing1kHz' -test.benchtime 1x
	(cd internal/command/replay && chrt -f 10 /tmp/vrlog-replay.test -test.run '^$' -test.bench 1kHz -test.benchtime 1x)
fi
uptime
