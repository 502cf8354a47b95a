#!/usr/bin/env bash
# The sync policy's cost and what it loses at a power cut, at 1 kHz states
# + 1080p30 frames (187 MB/s), for each policy: close, interval 1 s,
# interval 100 ms (LCM's logger default), flush (every chunk).
#
# Cost: ROUNDS runs of DURATION per policy, interleaved (round-robin over
# the policies, so drift in the machine's load hits all alike), in a
# directory on the real disk (COSTDIR, default /var/tmp).
#
# Power cut: the same load on an ext4 filesystem in a loop device; after
# CUT seconds the filesystem is shut down with EXT4_IOC_SHUTDOWN without
# flushing (dirty pages and the uncommitted journal are thrown away, as at
# a power loss: xfstests' "godown"), then unmounted and mounted again, and
# what survived is read. Needs root. (dm-flakey would be the other way to
# drop unsynced writes; it needs the device-mapper driver.)
#
#   sudo bench/powerloss.sh                 # ROUNDS=3 DURATION=20 CUT=20
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-20}
CUT=${CUT:-20}
COSTDIR=${COSTDIR:-/var/tmp}
policies=("close" "interval 1s" "interval 100ms" "flush")

tmp=$(mktemp -d)
mnt=$tmp/mnt
cleanup() {
	mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
	rm -rf "$tmp" "$COSTDIR/syncpolicy.$$"
}
trap cleanup EXIT
go build -o "$tmp/syncpolicy" ./bench/syncpolicy
mkdir -p "$mnt" "$COSTDIR/syncpolicy.$$"

echo "# load: $(uptime)"
echo "# cost: $ROUNDS x ${DURATION}s per policy, interleaved, in $COSTDIR ($(df --output=source,fstype "$COSTDIR" | tail -1))"
for r in $(seq "$ROUNDS"); do
	for p in "${policies[@]}"; do
		set -- $p
		"$tmp/syncpolicy" -policy "$1" -sync-interval "${2:-1s}" -dir "$COSTDIR/syncpolicy.$$" -duration "${DURATION}s" |
			tee -a "$tmp/cost.jsonl"
		rm -f "$COSTDIR/syncpolicy.$$/sync.vrlog"
	done
done

echo "# power cut after ${CUT}s: $ROUNDS cuts per policy, interleaved, ext4 on a loop device"
truncate -s 16G "$tmp/disk.img"
for r in $(seq "$ROUNDS"); do
	for p in "${policies[@]}"; do
		set -- $p
		mkfs.ext4 -q -F "$tmp/disk.img"
		mount -o loop "$tmp/disk.img" "$mnt"
		"$tmp/syncpolicy" -policy "$1" -sync-interval "${2:-1s}" -dir "$mnt" -duration "$((CUT + 10))s" -cut-after "${CUT}s" -state "$tmp/state.json"
		umount "$mnt"
		mount -o loop "$tmp/disk.img" "$mnt"
		"$tmp/syncpolicy" -read "$mnt/sync.vrlog" -state "$tmp/state.json" | tee -a "$tmp/cut.jsonl"
		umount "$mnt"
	done
done

echo "# medians"
python3 - "$tmp/cost.jsonl" "$tmp/cut.jsonl" <<'EOF'
import json, statistics, sys
def key(d): return d["policy"] + (" " + d["sync_interval"] if d.get("sync_interval") else "")
def rows(path):
    out = {}
    for line in open(path):
        d = json.loads(line)
        out.setdefault(key(d), []).append(d)
    return out
med = lambda xs: statistics.median(xs)
cost, cut = rows(sys.argv[1]), rows(sys.argv[2])
print("%-16s %8s %10s %10s %10s %10s %8s %10s %8s" % ("policy", "syncs/s", "cpu s/s", "write p99", "write max", "late max", "dropped", "close", "runs"))
for k, ds in cost.items():
    dur = ds[0]["duration_s"]
    print("%-16s %8.1f %10.3f %8.1fus %8.1fms %8.1fms %8d %8.0fms %8d" % (k, med([d["syncs"] for d in ds]) / dur, med([d["cpu_s"] for d in ds]) / dur,
        med([d["write_p99_us"] for d in ds]), med([d["write_max_ms"] for d in ds]), med([d["late_max_ms"] for d in ds]),
        max(d["frames_dropped"] for d in ds), med([d["close_ms"] for d in ds]), len(ds)))
print()
print("%-16s %14s %14s %14s %10s %s" % ("policy", "lost s (med)", "lost s (max)", "frames lost", "opened", "lost s per cut"))
for k, ds in cut.items():
    print("%-16s %14.2f %14.2f %14s %10s %s" % (k, med([d["lost_s"] for d in ds]), max(d["lost_s"] for d in ds),
        "/".join(str(d["frames_lost"]) for d in ds), "/".join("y" if d["opened"] else "n" for d in ds),
        " ".join("%.2f" % d["lost_s"] for d in ds)))
EOF
