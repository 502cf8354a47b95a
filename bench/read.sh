#!/usr/bin/env bash
# Reading records with their payloads (issue 30): vrlog's reader
# (logfmt.Records, Filter{}; with -cpu 2 chunks loaded ahead on the other
# core, Filter.Workers) side by side with the MCAP Go library's indexed
# reader (log-time order, NextInto), on the same 1 M real 200-byte state
# records, zstd chunks of 4 MiB (the writer's default) and of 110 KiB (what
# a recorder's flush timer seals at 1 kHz). Each round runs every reader
# once, alternately, from one compiled binary, so drift hits all alike;
# prints every run, the medians and the ratios, and the load before and
# after.
#
#   bench/read.sh              # 5 rounds
#   ROUNDS=9 bench/read.sh
#   BASE=/path/logfmt.test bench/read.sh   # also another build's reader
#                                          # (same benchmark file), interleaved
#
# Figures in docs/benchmarks-logfmt.md ("Reading payloads").
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go test -c -o "$TMP/logfmt.test" ./logfmt
BASE=${BASE:-}

# run BINARY BENCH CPU: one run (3 passes over the log), prints records/s
# and records per CPU second of the process.
run() {
	"$1" -test.run '^$' -test.bench "^Benchmark$2\$" -test.cpu "$3" -test.benchtime 3x -test.count 1 |
		awk '/^Benchmark/ { for (i = 3; i < NF; i++) { if ($(i+1) == "records/s") w = $i; if ($(i+1) == "records/cpu-s") c = $i }
			print w, c }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }

echo "load: $(uptime)"
readers="vrlog mcap"
[ -n "$BASE" ] && readers="base vrlog mcap"
for cs in 4MiB 110KiB; do
	for cpu in 1 2; do
		for r in $readers; do : > "$TMP/$r.$cs.$cpu"; done
	done
done
for _ in $(seq "$ROUNDS"); do
	for cs in 4MiB 110KiB; do
		for cpu in 1 2; do
			for r in $readers; do
				case $r in
				vrlog) run "$TMP/logfmt.test" "ReadPayloads/chunk=$cs" "$cpu" ;;
				base) run "$BASE" "ReadPayloads/chunk=$cs" "$cpu" ;;
				mcap) run "$TMP/logfmt.test" "MCAPRead/chunk=$cs" "$cpu" ;;
				esac >> "$TMP/$r.$cs.$cpu"
			done
		done
	done
done
for cs in 4MiB 110KiB; do
	echo "chunks of $cs, 1 M real 200 B states, payloads read and stamps touched (M records/s wall / per CPU second)"
	for cpu in 1 2; do
		for r in $readers; do
			printf '  %-6s -cpu %d: %s\n' "$r" "$cpu" "$(awk '{ printf " %.2f/%.2f", $1 / 1e6, $2 / 1e6 }' "$TMP/$r.$cs.$cpu")"
		done
	done
	v1=$(cut -d' ' -f1 "$TMP/vrlog.$cs.1" | median); v2=$(cut -d' ' -f1 "$TMP/vrlog.$cs.2" | median)
	c1=$(cut -d' ' -f2 "$TMP/vrlog.$cs.1" | median); c2=$(cut -d' ' -f2 "$TMP/vrlog.$cs.2" | median)
	u2=$(awk '{ print $1 / $2 }' "$TMP/vrlog.$cs.2" | median)
	m1=$(cut -d' ' -f1 "$TMP/mcap.$cs.1" | median); m2=$(cut -d' ' -f1 "$TMP/mcap.$cs.2" | median)
	mc1=$(cut -d' ' -f2 "$TMP/mcap.$cs.1" | median)
	# Wall over CPU rate is the cores the two-core runs had: below ~1.9 the
	# machine did not give them a second core, and the two-core ratio says
	# how loaded it was, not how the reader scales; per CPU second, two
	# cores vs one is the overhead of the read-ahead.
	awk -v v1="$v1" -v v2="$v2" -v c1="$c1" -v c2="$c2" -v u2="$u2" -v m1="$m1" -v m2="$m2" -v mc1="$mc1" 'BEGIN {
		printf "  medians: vrlog one core %.2f M/s (%.2f per CPU s), two %.2f M/s; MCAP one core %.2f M/s (%.2f per CPU s), two %.2f M/s\n", v1/1e6, c1/1e6, v2/1e6, m1/1e6, mc1/1e6, m2/1e6
		printf "  vrlog / MCAP, one core: %.2fx wall, %.2fx per CPU s (target >= 1.5x); vrlog two cores / one: %.2fx (target >= 1.8x)\n", v1/m1, c1/mc1, v2/v1
		printf "  vrlog two cores: %.2f cores used (median of wall / per CPU s), %.2f M records per CPU s (%.2fx one core)\n", u2, c2/1e6, c2/c1 }'
	if [ -n "$BASE" ]; then
		b1=$(cut -d' ' -f1 "$TMP/base.$cs.1" | median); bc1=$(cut -d' ' -f2 "$TMP/base.$cs.1" | median)
		b2=$(cut -d' ' -f1 "$TMP/base.$cs.2" | median)
		awk -v v1="$v1" -v c1="$c1" -v v2="$v2" -v b1="$b1" -v bc1="$bc1" -v b2="$b2" 'BEGIN {
			printf "  vs base: one core %.2fx wall, %.2fx per CPU s; two cores %.2fx\n", v1/b1, c1/bc1, v2/b2 }'
	fi
	echo
done
echo "load: $(uptime)"
