#!/usr/bin/env bash
# What --queue-bytes bounds, measured (issue 18, docs/BENCHMARKS.md
# "record"): the recorder's peak RSS while its writer is far behind, per
# queue size, number of frame services and compression. The simulator
# publishes 200 Hz states over zenoh and CAMS (1 or 2) services of 1080p
# rgb8 gradient frames at FPS (60) Hz each from its frame ring, for SECS
# (10) s; the recorder subscribes to the states and every camera service
# (one subscription each). It is killed once the simulator is done (its
# drain is not what is measured); /usr/bin/time reports its peak RSS.
#
#   bench/recmem.sh                                  # bin/
#   BINS="/work/main/bin bin" QUEUES="64M 512M" CAMS="1 2" COMPS="zstd-4 none" bench/recmem.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BINS=(${BINS:-bin})
QUEUES=(${QUEUES:-64M 512M})
CAMS=(${CAMS:-1 2})
COMPS=(${COMPS:-zstd-4})
SECS=${SECS:-10}
FPS=${FPS:-60}
PORT=${PORT:-17563}
T=$(mktemp -d "${TMPDIR:-/var/tmp}/vrlog-recmem-bench.XXXXXX") # on disk, not tmpfs
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

echo "load: $(uptime | sed 's/.*load/load/'); 1080p rgb8 gradient frames at $FPS Hz per camera + 200 Hz states, ${SECS}s"
printf "%-22s %-7s %5s %5s %10s %9s\n" bin comp queue cams subs peak_MB
n=0
for q in "${QUEUES[@]}"; do
	for cams in "${CAMS[@]}"; do
		for comp in "${COMPS[@]}"; do
			for bin in "${BINS[@]}"; do
				n=$((n + 1))
				robot=rm$$n
				camargs=(--camera front)
				[ "$cams" = 2 ] && camargs+=(--camera rear)
				rm -f "$T"/m.vrlog
				/usr/bin/time -f "%M" -o "$T/time" "$bin"/vrlog record -q -o "$T/m.vrlog" --listen "tcp/127.0.0.1:$PORT" --no-multicast \
					-k "vr/$robot/state" -s "vr/$robot/camera/*" --compression "$comp" --probe-interval 0 --queue-bytes "$q" 2> "$T/rec.err" &
				rec=$!
				sleep 0.5
				"${BINS[0]}"/vrlog sim -q --robot "$robot" --connect "tcp/127.0.0.1:$PORT" --no-multicast --state-hz 200 --frame-hz "$FPS" \
					"${camargs[@]}" --width 1920 --height 1080 --frame-ring 8 --frame-content gradient --duration "${SECS}s" --start-delay 1s
				sleep 0.5
				pkill -KILL -P "$rec" # the recorder, child of time
				wait "$rec" 2> /dev/null || true
				printf "%-22s %-7s %5s %5s %10s %9d\n" "$bin" "$comp" "$q" "$cams" "$((cams + 1))" "$(($(tail -1 "$T/time") / 1024))"
			done
		done
	done
done
