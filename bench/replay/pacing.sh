#!/usr/bin/env bash
# Replay pacing at 1 kHz, publish side and as received (issue 18, docs/BENCHMARKS.md).
#
# One ideal schedule (N records exactly PERIOD apart, bench/replay/pacegen)
# is played, ROUNDS times and interleaved, by:
#   zenoh:    vrlog replay, and a plain time.Sleep loop (pacegen sleeploop)
#   iceoryx2: vrlog replay, and `iox2 service replay` (same frames, same times;
#             skipped when the iox2 CLI is missing)
# into one independent subscriber, the official Python wheels
# (bench/replay/timing_sub.py), on this host. Printed per run:
#   as received: |arrival - scheduled - median offset|, p50 / p99 / max, in µs
#                (the subscriber's own stamps; iceoryx2 adds its poll interval,
#                POLL_US, to both replays alike)
#   publish side: what vrlog replay itself reports (clock read before the
#                transport call minus the deadline), p50 / p99 / max
#   cpu:         the publishing process's user+system CPU over the playback
#                time (1.00 = a whole core)
#   floors:      what no publisher controls, measured in the same round:
#                the transport and the subscriber (arrival minus the sleep
#                loop's own publish stamp, |x - median|: a perfect pacer's
#                error as received), and the OS's timer wake-up latency a
#                plain 1 kHz thread gets while vrlog replays over zenoh
#                (cyclictest beside it, when installed: Debian package
#                rt-tests), which hypervisor steal dominates on a VM
#   steal:       the share of both cores' time the hypervisor took per round
# then the medians over the rounds and the ratios.
#
# QOS=on (root) holds a PM QoS request of 0 µs (/dev/cpu_dma_latency) over
# the whole run, for every pacer and the subscriber alike, and gives vrlog
# replay --low-latency: idle CPUs then poll instead of halting (on a VM, a
# halted vCPU wakes when the host runs it again). QOS=off (default) holds
# none, and cyclictest runs with --laptop so that it holds none either.
#
#   bench/replay/pacing.sh                  # 3 rounds of 5000 records
#   ROUNDS=5 N=10000 bench/replay/pacing.sh
#   QOS=on bench/replay/pacing.sh
#   IOX2=/path/to/iox2 bench/replay/pacing.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
N=${N:-5000}
PERIOD_MS=1
POLL_US=${POLL_US:-50}
QOS=${QOS:-off}
BIN=${BIN:-bin}
PY=${PY:-.venv/bin/python}
IOX2=${IOX2:-$(command -v iox2 || echo "$HOME/.cargo/bin/iox2")}
PATH=$(dirname "$IOX2"):$PATH # iox2 runs its subcommands (iox2-service) from PATH
PORT=${PORT:-17881}
T=$(mktemp -d)
trap 'jobs -p | xargs -r kill 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
ROBOT=pace$$
KEY=vr/$ROBOT/state
SVC=vr/$ROBOT/camera/front
EP=tcp/127.0.0.1:$PORT
[ -x "$BIN/vrlog" ] || { echo "pacing.sh: $BIN/vrlog missing: make build" >&2; exit 2; }
[ -x "$PY" ] || { echo "pacing.sh: $PY missing: make peers" >&2; exit 2; }
go build -o "$T/pacegen" ./bench/replay/pacegen

have_iox2=
if [ -x "$IOX2" ]; then
	have_iox2=1
	# A template of iox2's record format for the frame service (its header
	# names the types): one second of the bundled simulator's 16x16 frames.
	"$BIN"/vrlog sim --robot "$ROBOT" --listen "tcp/127.0.0.1:$((PORT + 1))" --no-multicast-scouting -q --state-hz 1 \
		--frame-hz 100 --width 16 --height 16 --duration 3s --start-delay 200ms 2>/dev/null &
	sim=$!
	sleep 0.5
	"$IOX2" service record -d IOX2DUMP -t 1 -o "$T/template.iox2" "$SVC" >/dev/null 2>&1 || true
	wait $sim || true
	[ -s "$T/template.iox2" ] || { echo "pacing.sh: iox2 service record wrote nothing; iceoryx2 rows skipped" >&2; have_iox2=; }
fi
"$T/pacegen" log -o "$T/ideal.vrlog" -robot "$ROBOT" -n "$N" -period "${PERIOD_MS}ms" \
	${have_iox2:+-iox2-template "$T/template.iox2" -iox2-out "$T/ideal.iox2"}

# sub NAME ARGS...: starts the Python subscriber, waits until it is ready.
sub() {
	local name=$1; shift
	"$PY" bench/replay/timing_sub.py --count "$N" --timeout "$((N * PERIOD_MS / 1000 + 30))" --poll-us "$POLL_US" \
		--out "$T/$name.recv.json" "$@" 2> "$T/$name.sub.txt" &
	subpid=$!
	for _ in $(seq 200); do grep -q ready "$T/$name.sub.txt" 2>/dev/null && return; sleep 0.05; done
	echo "pacing.sh: subscriber did not start: $(cat "$T/$name.sub.txt")" >&2; exit 3
}
# timed NAME CMD...: runs the publisher, its CPU times into NAME.cpu.
timed() {
	local name=$1; shift
	/usr/bin/time -f "%U %S" -o "$T/$name.cpu" "$@" > "$T/$name.out" 2> "$T/$name.err" || { echo "pacing.sh: $name failed:" >&2; cat "$T/$name.err" >&2; exit 3; }
}

lowlat=
case $QOS in
off) ;;
on)
	"$PY" -c 'import os, struct, sys, time
f = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
os.write(f, struct.pack("i", 0))
print("held", file=sys.stderr, flush=True)
time.sleep(1e9)' 2> "$T/qos.txt" &
	for _ in $(seq 100); do grep -q held "$T/qos.txt" 2>/dev/null && break; sleep 0.05; done
	grep -q held "$T/qos.txt" || { echo "pacing.sh: QOS=on: $(cat "$T/qos.txt")" >&2; exit 3; }
	lowlat=--low-latency ;;
*) echo "pacing.sh: QOS must be on or off" >&2; exit 2 ;;
esac

read -r _ u0 n0 s0 i0 w0 q0 sq0 st0 _ < /proc/stat
runs=()
steal() { awk '/^cpu /{ print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
for r in $(seq "$ROUNDS"); do
	read -r rst0 rall0 < <(steal)
	sub "z-vrlog-$r" --listen "$EP" --state-key "$KEY"
	ct=
	if command -v cyclictest >/dev/null; then
		# beside vrlog's playback: the wake-up latency any thread gets meanwhile
		cyclictest -q --laptop -i 1000 -l "$((N + 1000))" -h 20000 -t 1 > "$T/ct-$r.txt" 2>/dev/null &
		ct=$!
	fi
	timed "z-vrlog-$r" "$BIN"/vrlog replay --json --quiet $lowlat --no-multicast-scouting --connect "$EP" --channel "$KEY" --delay 1s "$T/ideal.vrlog"
	wait $subpid || true
	[ -z "$ct" ] || wait "$ct" || true
	sub "z-sleep-$r" --listen "$EP" --state-key "$KEY"
	timed "z-sleep-$r" "$T/pacegen" sleeploop -connect "$EP" -stamps "$T/z-sleep-$r.sent.json" "$T/ideal.vrlog"
	wait $subpid || true
	runs+=("z-vrlog-$r" "z-sleep-$r")
	sub "i-vrlog-$r" --service "$SVC"
	timed "i-vrlog-$r" "$BIN"/vrlog replay --json --quiet $lowlat --no-multicast-scouting --channel "$SVC" --delay 500ms "$T/ideal.vrlog"
	wait $subpid || true
	runs+=("i-vrlog-$r")
	if [ -n "$have_iox2" ]; then
		sub "i-iox2-$r" --service "$SVC"
		timed "i-iox2-$r" "$IOX2" service replay -d IOX2DUMP -i "$T/ideal.iox2" "$SVC"
		wait $subpid || true
		runs+=("i-iox2-$r")
	fi
	read -r rst1 rall1 < <(steal)
	echo "$(( 1000 * (rst1 - rst0) / (rall1 - rall0) ))" > "$T/steal-$r"
done

read -r _ u1 n1 s1 i1 w1 q1 sq1 st1 _ < /proc/stat
busy=$(( (u1 - u0) + (n1 - n0) + (s1 - s0) + (q1 - q0) + (sq1 - sq0) ))
echo "PM QoS request held over the run: $QOS"
echo "load: $(uptime | sed 's/.*load/load/'); all cores over the runs: $(( 100 * busy / (busy + i1 - i0 + w1 - w0 + st1 - st0) )) % busy, $(( 100 * (st1 - st0) / (busy + i1 - i0 + w1 - w0 + st1 - st0) )) % stolen by the hypervisor"
"$PY" - "$T" "$N" "$PERIOD_MS" "$POLL_US" "${runs[@]}" <<'PY'
import json, statistics, sys
T, N, period_ms, poll_us, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5:]
period = period_ms * 1_000_000
names = {"z-vrlog": "zenoh    vrlog replay", "z-sleep": "zenoh    time.Sleep loop", "i-vrlog": "iceoryx2 vrlog replay", "i-iox2": "iceoryx2 iox2 service replay"}

def q(xs, p):
    return xs[min(len(xs) - 1, int(p * len(xs)))]

rows = {}
for run in runs:
    kind = run.rsplit("-", 1)[0]
    recv = json.load(open(f"{T}/{run}.recv.json"))
    got = recv["zenoh"] if kind.startswith("z") else recv["iox2"]
    d = [t - seq * period for seq, t in got]
    off = statistics.median(d)
    err = sorted(abs(x - off) / 1e3 for x in d)
    u, s = map(float, open(f"{T}/{run}.cpu").read().split())
    pub = None
    if kind.endswith("vrlog"):
        e = json.load(open(f"{T}/{run}.out"))["total"]["timing_error_ns"]
        pub = (e["p50"] / 1e3, e["p99"] / 1e3, e["max"] / 1e3)
    row = dict(n=len(got), p50=q(err, .5), p99=q(err, .99), max=err[-1], cpu=(u + s) / (N * period_ms / 1000), pub=pub)
    rows.setdefault(kind, []).append(row)
    ps = f"  publish side p50 {pub[0]:.1f} p99 {pub[1]:.1f} max {pub[2]:.0f} µs" if pub else ""
    print(f"{run:12} {names[kind]:30} received {row['n']}/{N}  as received p50 {row['p50']:.0f} p99 {row['p99']:.0f} max {row['max']:.0f} µs  cpu {row['cpu']:.2f}{ps}")

# Floors no publisher controls, per round.
floors = {"transport": [], "wakeup": [], "steal": []}
r = 1
while True:
    try:
        st = int(open(f"{T}/steal-{r}").read()) / 10
    except FileNotFoundError:
        break
    floors["steal"].append(st)
    line = f"round {r}: hypervisor steal {st:.1f} %"
    try:
        sent = dict(json.load(open(f"{T}/z-sleep-{r}.sent.json")))
        recv = json.load(open(f"{T}/z-sleep-{r}.recv.json"))["zenoh"]
        lat = [t - sent[seq] for seq, t in recv if seq in sent]
        off = statistics.median(lat)
        j = sorted(abs(x - off) / 1e3 for x in lat)
        pe = [sent[seq] - seq * period for seq, _ in recv if seq in sent]
        po = statistics.median(pe)
        pj = sorted(abs(x - po) / 1e3 for x in pe)
        floors["transport"].append((q(j, .5), q(j, .99)))
        line += f"; transport + subscriber (arrival - sleep loop's publish stamp) p50 {q(j, .5):.0f} p99 {q(j, .99):.0f} µs, sleep loop's own publish side p50 {q(pj, .5):.0f} p99 {q(pj, .99):.0f} µs"
    except (FileNotFoundError, KeyError, ValueError):
        pass
    try:
        h, n = {}, 0
        for l in open(f"{T}/ct-{r}.txt"):
            f = l.split()
            if len(f) == 2 and f[0].isdigit():
                h[int(f[0])] = int(f[1]); n += int(f[1])
        if n:
            s, p50, p99 = 0, None, None
            for us in sorted(h):
                s += h[us]
                if p50 is None and s >= n * .5: p50 = us
                if p99 is None and s >= n * .99: p99 = us
            floors["wakeup"].append((p50, p99))
            line += f"; OS timer wake-up (cyclictest, SCHED_OTHER) p50 {p50} p99 {p99} µs"
    except FileNotFoundError:
        pass
    print(line)
    r += 1

print(f"\nmedians over {len(rows['z-vrlog'])} rounds (as received: |arrival - schedule - median offset|; iceoryx2 polled every {poll_us:g} µs)")
med = {}
for kind, rs in rows.items():
    m = {k: statistics.median(r[k] for r in rs) for k in ("p50", "p99", "max", "cpu")}
    med[kind] = m
    pub = ""
    if rs[0]["pub"]:
        pub = "  publish side p50 %.1f p99 %.1f µs" % (statistics.median(r["pub"][0] for r in rs), statistics.median(r["pub"][1] for r in rs))
    print(f"  {names[kind]:30} as received p50 {m['p50']:6.0f} p99 {m['p99']:6.0f} max {m['max']:7.0f} µs  cpu {m['cpu']:.2f}{pub}")
for name, label in (("transport", "floor: transport + subscriber (zenoh)"), ("wakeup", "floor: OS timer wake-up (cyclictest)")):
    if floors[name]:
        print(f"  {label:39} p50 {statistics.median(x[0] for x in floors[name]):6.0f} p99 {statistics.median(x[1] for x in floors[name]):6.0f} µs")
if floors["steal"]:
    print(f"  hypervisor steal per round: {', '.join(f'{x:.1f}' for x in floors['steal'])} %")
print()
print(f"  zenoh p99 as received: vrlog replay {med['z-vrlog']['p99']:.0f} µs (target <= 200), "
      f"time.Sleep loop / vrlog = {med['z-sleep']['p99'] / med['z-vrlog']['p99']:.2f}x")
if "i-iox2" in med:
    print(f"  iceoryx2 p99 as received: iox2 service replay / vrlog replay = {med['i-iox2']['p99'] / med['i-vrlog']['p99']:.2f}x")
PY
