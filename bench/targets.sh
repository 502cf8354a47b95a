#!/usr/bin/env bash
# The logfmt and analyze performance targets (issues 3, 7 and 18), each pair
# measured side by side: both benchmarks of a pair run alternately, ROUNDS
# times, from one compiled binary, so drift (other load, the page cache's
# writeback) hits both alike. Prints every run, the medians and the ratio.
#
#   bench/targets.sh          # 5 rounds
#   ROUNDS=10 bench/targets.sh
#
# Run it on a quiet machine; figures in docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go test -c -o "$TMP/logfmt.test" ./logfmt
go test -c -o "$TMP/analyzer.test" ./analyzer

# run BINARY BENCH CPU BENCHTIME METRIC: one run, prints the metric's value.
run() {
	"$1" -test.run '^$' -test.bench "^Benchmark$2\$" -test.cpu "$3" -test.benchtime "$4" -test.count 1 |
		awk -v m="$5" '/^Benchmark/ { for (i = 3; i < NF; i++) if ($(i+1) == m) print $i }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }

# pair NAME TARGET_PERCENT A B CPU BENCHTIME METRIC HIGHER_IS_BETTER
pair() {
	local name=$1 target=$2 a=$3 b=$4 cpu=$5 bt=$6 metric=$7 higher=$8
	: > "$TMP/a"; : > "$TMP/b"
	for _ in $(seq "$ROUNDS"); do
		run "$TMP/logfmt.test" "$a" "$cpu" "$bt" "$metric" >> "$TMP/a"
		run "$TMP/logfmt.test" "$b" "$cpu" "$bt" "$metric" >> "$TMP/b"
	done
	local ma mb
	ma=$(median < "$TMP/a"); mb=$(median < "$TMP/b")
	printf '%s\n  %-28s %s\n  %-28s %s\n' "$name" "$a ($metric)" "$(tr '\n' ' ' < "$TMP/a")" "$b ($metric)" "$(tr '\n' ' ' < "$TMP/b")"
	awk -v a="$ma" -v b="$mb" -v h="$higher" -v t="$target" 'BEGIN {
		r = h ? a / b : b / a
		printf "  medians %s vs %s: %.1f %% (target >= %d %%)\n\n", a, b, 100 * r, t }'
}

pair "writer, 200 B states, one core, vs raw zstd.EncodeAll" 70 WriterState RawZstdState 1 2000000x ns/op 0
pair "writer, 6.2 MB frames, zstd, vs raw zstd" 80 WriterFrameZstd RawZstdFrame 1 20x MB/s 1
pair "writer, 6.2 MB frames, uncompressed (WriteOwned), fdatasync per frame, vs plain writes + fdatasync" 90 \
	WriterFrameNoneOwnedSync DiskWriteSync 2 60x MB/s 1
pair "writer, 6.2 MB frames, uncompressed (WriteOwned), page cache, vs plain writes" 90 \
	WriterFrameNoneOwned DiskWrite 2 60x MB/s 1

# analyze: one core and two (chunks loaded ahead on the second), the
# runs alternating; wall-clock rates, and per CPU second (what a shared
# machine inflates least).
: > "$TMP/a1"; : > "$TMP/a2"; : > "$TMP/c1"
for _ in $(seq "$ROUNDS"); do
	run "$TMP/analyzer.test" TimingScan 1 30x Mrecords/s >> "$TMP/a1"
	run "$TMP/analyzer.test" TimingScan 1 30x Mrecords/cpu-s >> "$TMP/c1"
	run "$TMP/analyzer.test" TimingScan 2 30x Mrecords/s >> "$TMP/a2"
done
echo "analyze timing scan (1 kHz states + 30 Hz frames, 309,000 records)"
printf '  %-28s %s\n' "one core (Mrecords/s)" "$(tr '\n' ' ' < "$TMP/a1")" "one core (Mrecords/cpu-s)" "$(tr '\n' ' ' < "$TMP/c1")" \
	"two cores (Mrecords/s)" "$(tr '\n' ' ' < "$TMP/a2")"
awk -v a="$(median < "$TMP/a1")" -v c="$(median < "$TMP/c1")" -v b="$(median < "$TMP/a2")" 'BEGIN {
	printf "  medians: one core %s M/s (%s M/cpu-s; target >= 15), two cores %s M/s: %.2fx (target >= 1.8x)\n\n", a, c, b, b / a }'

echo "analyze memory, 1 M vs 10 M records (heap held after reading, peak heap in use)"
"$TMP/analyzer.test" -test.run '^$' -test.bench '^BenchmarkAnalyzeMemory$' -test.benchtime 1x -test.count 1 | grep '^Benchmark'
echo
echo "metadata-only read, one core (target >= 10 M records/s)"
for _ in $(seq "$ROUNDS"); do run "$TMP/logfmt.test" ReadMeta 1 1s records/s; done | tr '\n' ' '
echo
