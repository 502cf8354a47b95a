#!/usr/bin/env bash
# The recorder's limit and its loss accounting (issue 18, docs/BENCHMARKS.md).
#
# The bundled simulator publishes 1 kHz states over zenoh and WxH rgb8
# frames over iceoryx2 from a ring of pre-rendered frames (so it is not the
# limit: one copy per frame, well over 200 Hz of 1080p on this machine),
# with CONTENT frames (gradient: compressible like a rendered scene; noise:
# barely), and writes its truth log (every sample it published). vrlog
# record records both for DURATION, once per compression and frame rate.
# Per run it prints:
#   published   frames in the simulator's truth log
#   recorded    frames in the log
#   missing     published seqs absent from the log
#   drops       what the recorder counted as its own losses
#   unacc.      missing - drops: losses nobody counted (must be 0; the
#               simulator skips no seq unless told to)
#   MB/s        frame bytes recorded per second of publishing (the span of
#               the published frames' stamps plus one period: the
#               simulator's --duration includes its start delay)
#   cpu         the recorder's user+system CPU per second (1 = a core)
#   rss         the recorder's peak RSS (MB)
# and, per compression, the highest rate without a drop.
#
#   bench/record.sh 20s 60 120 180 240           # 1080p, none and zstd
#   W=3840 H=2160 bench/record.sh 20s 30 45      # 4K
#   COMP=none QUEUE=256M bench/record.sh 10s 120
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-20s}; shift || true
RATES=("${@:-60 120}")
read -r -a RATES <<< "${RATES[*]}"
W=${W:-1920}; H=${H:-1080}
COMPS=(${COMP:-none zstd})
CONTENT=${CONTENT:-gradient}
RING=${RING:-8}
QUEUE=${QUEUE:-512M}
BIN=${BIN:-bin}
PY=${PY:-python3}
PORT=${PORT:-17557}
T=$(mktemp -d "${TMPDIR:-/var/tmp}/vrlog-record-bench.XXXXXX") # on disk, not tmpfs
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
secs=${DUR%s}
robot=rb$$

echo "load: $(uptime | sed 's/.*load/load/'); ${W}x${H} rgb8 $CONTENT frames, ring of $RING, queue $QUEUE, $DUR per run, logs in $T"
printf "%-5s %5s %10s %9s %8s %7s %7s %8s %5s %6s\n" comp fps published recorded missing drops unacc. MB/s cpu rss_MB
for fps in "${RATES[@]}"; do
	for comp in "${COMPS[@]}"; do
		rm -f "$T"/b.vrlog "$T"/truth.jsonl "$T"/frames.csv
		/usr/bin/time -f "%U %S %M" -o "$T/time" "$BIN"/vrlog record -q -o "$T/b.vrlog" --listen "tcp/127.0.0.1:$PORT" --no-multicast \
			-k "vr/$robot/state" -s "vr/$robot/camera/front" --compression "$comp" --probe-interval 0 --queue-bytes "$QUEUE" &
		rec=$!
		sleep 0.5
		"$BIN"/vrlog sim -q --robot "$robot" --connect "tcp/127.0.0.1:$PORT" --no-multicast --state-hz 1000 --frame-hz "$fps" \
			--width "$W" --height "$H" --frame-ring "$RING" --frame-content "$CONTENT" --duration "$DUR" --start-delay 1s \
			--log "$T/truth.jsonl"
		sleep 1
		pkill -INT -P "$rec" # the recorder, child of time
		wait "$rec"
		"$BIN"/vrlog export "$T/b.vrlog" --format csv --channel "vr/$robot/camera/front" -o "$T/frames.csv" > /dev/null
		"$BIN"/vrlog info --json "$T/b.vrlog" > "$T/info.json"
		"$PY" - "$T" "$comp" "$fps" "$secs" "$robot" <<'PY'
import csv, json, sys
T, comp, fps, secs, robot = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
cam = f"vr/{robot}/camera/front"
pub = [json.loads(l) for l in open(f"{T}/truth.jsonl")]
stamps = [p["t_ns"] for p in pub if p["channel"] == cam]
span = (max(stamps) - min(stamps)) / 1e9 + 1 / float(fps) if stamps else secs
pub = {p["seq"]: p["size"] for p in pub if p["channel"] == cam}
rec = [int(r["seq"]) for r in csv.DictReader(open(f"{T}/frames.csv"))]
info = json.load(open(f"{T}/info.json"))
chans = {c["name"]: c for c in info["channels"]}
drops = chans[cam]["drops"] if cam in chans else 0
missing = len(set(pub) - set(rec))
user, sys_, rss = open(f"{T}/time").read().split()
size = sum(pub.get(s, 0) for s in rec)
print(f"{comp:<5} {fps:>5} {len(pub):>10} {len(rec):>9} {missing:>8} {drops:>7} {missing - drops:>7} "
      f"{size / span / 1e6:>8.0f} {(float(user) + float(sys_)) / secs:>5.2f} {int(rss) / 1024:>6.0f}")
with open(f"{T}/rows", "a") as f:
    f.write(f"{comp} {fps} {drops} {missing - drops}\n")
PY
	done
done
echo
awk '{ if (!($1 in best)) best[$1] = "none"; if ($3 == 0 && ($1 in top ? $2 > top[$1] : 1)) { top[$1] = $2; best[$1] = $2 " Hz" }
       if ($4 != 0) bad = bad " " $1 "@" $2 "Hz:" $4 }
     END { for (c in best) printf "highest rate without a drop, %s: %s\n", c, best[c]
           if (bad != "") print "UNACCOUNTED LOSSES:" bad; else print "every lost frame was counted as a recorder drop" }' "$T/rows"
