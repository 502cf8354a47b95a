#!/usr/bin/env bash
# Reading records with their payloads (issue 30): vrlog's reader
# (logfmt.Records, Filter{}; with -cpu 2 chunks loaded ahead on the other
# core, Filter.Workers) side by side with the MCAP Go library's indexed
# reader (log-time order, NextInto), on the same 1 M real 200-byte state
# records, chunks of 4 MiB (the writer's default) and of 110 KiB (what a
# recorder's flush timer seals at 1 kHz). vrlog's payloads are LZ4 (what
# the recorder stores states in) and zstd-1, MCAP's chunks zstd (its
# writer's default) and LZ4. Each round runs every reader once,
# alternately, from one compiled binary, so drift hits all alike; prints
# every run, the medians and the ratios, and the load before and after.
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

# run BINARY BENCH CHUNK CPU: one run (3 passes over the log), prints
# records/s and records per CPU second of the process.
run() {
	"$1" -test.run '^$' -test.bench "^Benchmark$2\$/^chunk=$3\$" -test.cpu "$4" -test.benchtime 3x -test.count 1 |
		awk '/^Benchmark/ { for (i = 3; i < NF; i++) { if ($(i+1) == "records/s") w = $i; if ($(i+1) == "records/cpu-s") c = $i }
			print w, c }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }

# reader name -> benchmark
bench_of() {
	case $1 in
	vrlog | base) echo ReadPayloads ;;
	vrlog-zstd) echo ReadPayloadsZstd ;;
	mcap) echo MCAPRead ;;
	mcap-lz4) echo MCAPReadLZ4 ;;
	esac
}

echo "load: $(uptime)"
readers="vrlog vrlog-zstd mcap mcap-lz4"
[ -n "$BASE" ] && readers="base $readers"
for cs in 4MiB 110KiB; do
	for cpu in 1 2; do
		for r in $readers; do : > "$TMP/$r.$cs.$cpu"; done
	done
done
for _ in $(seq "$ROUNDS"); do
	for cs in 4MiB 110KiB; do
		for cpu in 1 2; do
			for r in $readers; do
				bin="$TMP/logfmt.test"
				[ "$r" = base ] && bin=$BASE
				run "$bin" "$(bench_of "$r")" "$cs" "$cpu" >> "$TMP/$r.$cs.$cpu"
			done
		done
	done
done
for cs in 4MiB 110KiB; do
	echo "chunks of $cs, 1 M real 200 B states, payloads read and stamps touched (M records/s wall / per CPU second)"
	for cpu in 1 2; do
		for r in $readers; do
			printf '  %-10s -cpu %d: %s\n' "$r" "$cpu" "$(awk '{ printf " %.2f/%.2f", $1 / 1e6, $2 / 1e6 }' "$TMP/$r.$cs.$cpu")"
		done
	done
	w() { cut -d' ' -f1 "$TMP/$1.$cs.$2" | median; }
	c() { cut -d' ' -f2 "$TMP/$1.$cs.$2" | median; }
	u2=$(awk '{ print $1 / $2 }' "$TMP/vrlog.$cs.2" | median)
	# Wall over CPU rate is the cores the two-core runs had: below ~1.9 the
	# machine did not give them a second core, and the two-core ratio says
	# how loaded it was, not how the reader scales; per CPU second, two
	# cores vs one is the overhead of the read-ahead.
	awk -v v1="$(w vrlog 1)" -v v2="$(w vrlog 2)" -v c1="$(c vrlog 1)" -v c2="$(c vrlog 2)" -v u2="$u2" \
		-v z1="$(w vrlog-zstd 1)" -v zc1="$(c vrlog-zstd 1)" -v z2="$(w vrlog-zstd 2)" \
		-v m1="$(w mcap 1)" -v mc1="$(c mcap 1)" -v m2="$(w mcap 2)" \
		-v l1="$(w mcap-lz4 1)" -v lc1="$(c mcap-lz4 1)" -v l2="$(w mcap-lz4 2)" 'BEGIN {
		printf "  medians, one core (per CPU s) / two cores, M records/s: vrlog %.2f (%.2f) / %.2f; vrlog zstd %.2f (%.2f) / %.2f; MCAP zstd %.2f (%.2f) / %.2f; MCAP lz4 %.2f (%.2f) / %.2f\n",
			v1/1e6, c1/1e6, v2/1e6, z1/1e6, zc1/1e6, z2/1e6, m1/1e6, mc1/1e6, m2/1e6, l1/1e6, lc1/1e6, l2/1e6
		printf "  vrlog / MCAP zstd, one core: %.2fx wall, %.2fx per CPU s (target >= 1.5x); / MCAP lz4: %.2fx wall, %.2fx per CPU s\n", v1/m1, c1/mc1, v1/l1, c1/lc1
		printf "  vrlog zstd / MCAP zstd, one core: %.2fx wall, %.2fx per CPU s\n", z1/m1, zc1/mc1
		printf "  vrlog two cores / one: %.2fx (target >= 1.8x), zstd %.2fx; %.2f cores used (median of wall / per CPU s), %.2f M records per CPU s (%.2fx one core)\n", v2/v1, z2/z1, u2, c2/1e6, c2/c1 }'
	if [ -n "$BASE" ]; then
		awk -v v1="$(w vrlog 1)" -v c1="$(c vrlog 1)" -v v2="$(w vrlog 2)" -v b1="$(w base 1)" -v bc1="$(c base 1)" -v b2="$(w base 2)" 'BEGIN {
			printf "  vs base: one core %.2fx wall, %.2fx per CPU s; two cores %.2fx\n", v1/b1, c1/bc1, v2/b2 }'
	fi
	echo
done
echo "load: $(uptime)"
