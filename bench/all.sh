#!/usr/bin/env bash
# Every row of docs/BENCHMARKS.md's target table that a script measures,
# one after the other (about 15 minutes; quote the load it prints):
#
#   logfmt and analyze pairs         bench/targets.sh
#   payload reads vs MCAP's reader   bench/read.sh
#   recorder limit, 1080p and 4K,    bench/record.sh (uncompressed, the
#   loss accounting, memory bound      simulator's frame ring, truth log)
#   recorder vs iox2 service record  bench/iox2_compare.sh
#   replay pacing as received        bench/replay/pacing.sh
#   Python reader vs a Python read   bench/pyread.sh
#
#   make build peers && IOX2=/path/to/iox2 bench/all.sh
#   ROUNDS=3 bench/all.sh            # rounds of the record and replay rows
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
export IOX2=${IOX2:-$(command -v iox2 || echo "$HOME/.cargo/bin/iox2")}
export PATH=$(dirname "$IOX2"):$PATH

echo "# $(date -u +%FT%TZ) $(uptime)"
bench/targets.sh
bench/read.sh
for r in $(seq "$ROUNDS"); do
	echo "# record round $r: $(uptime | sed 's/.*load/load/')"
	COMP=none bench/record.sh 10s 120 150 180
	W=3840 H=2160 COMP=none bench/record.sh 10s 30
	COMP=none QUEUE=128M bench/record.sh 10s 240
done
ROUNDS=$ROUNDS bench/iox2_compare.sh 10s 150 1920 1080
ROUNDS=$((ROUNDS + 2)) bench/replay/pacing.sh
bench/pyread.sh
echo "# $(date -u +%FT%TZ) $(uptime)"
