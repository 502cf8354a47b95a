#!/usr/bin/env bash
# The Parquet targets (issue 39), each pair interleaved, medians and ratios:
#   export: vrlog export --format parquet of 1 M real states on one core
#           (GOMAXPROCS=1: read, decode, encode, write) against pyarrow
#           writing the same columns from numpy on one thread (target >= 100 %),
#           and the Parquet table's size against the .vrlog (target <= 100 %);
#   append: analyze with --dataset against without, on the sample log and on
#           a 309,000-record log (target: the append <= 5 % of the analysis);
#   query:  DuckDB's trend query over a 1,000-run dataset (target < 1 s).
# Usage: bench/parquet.sh [export] [append] [query]; ROUNDS (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
PARTS=${*:-export append query}
PY=${PY:-.venv/bin/python}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
want() { [[ " $PARTS " == *" $1 "* ]]; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2 }'; }
uptime

if want export; then
	go test -c -o "$TMP/pe.test" ./parquetexport/
	: > "$TMP/go"; : > "$TMP/pa"
	for _ in $(seq "$ROUNDS"); do
		VRLOG_BENCH_LOG="$TMP/states.vrlog" VRLOG_BENCH_KEEP="$TMP/export" GOMAXPROCS=1 \
			"$TMP/pe.test" -test.run '^$' -test.bench ExportStates -test.benchtime 1x -test.cpu 1 |
			awk '/^BenchmarkExportStates/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "records/s") w = $i; if ($(i+1) == "records/cpu-s") c = $i; if ($(i+1) == "parquet/vrlog") r = $i } print w, c, r }' >> "$TMP/go"
		"$PY" bench/parquet_pyarrow.py "$TMP/export/vr_r1_state" "$TMP/pa.parquet" >> "$TMP/pa"
	done
	vrlog=$(stat -c %s "$TMP/states.vrlog")
	echo "export of 1 M real states, one core: vrlog (records/s records/cpu-s parquet/vrlog) vs pyarrow from numpy (records/s records/cpu-s bytes)"
	paste -d ' ' "$TMP/go" "$TMP/pa" | sed 's/^/  /'
	gw=$(cut -d' ' -f1 "$TMP/go" | median); gc=$(cut -d' ' -f2 "$TMP/go" | median); gr=$(cut -d' ' -f3 "$TMP/go" | median)
	pw=$(cut -d' ' -f1 "$TMP/pa" | median); pc=$(cut -d' ' -f2 "$TMP/pa" | median); pb=$(cut -d' ' -f3 "$TMP/pa" | median)
	awk -v gw="$gw" -v gc="$gc" -v gr="$gr" -v pw="$pw" -v pc="$pc" -v pb="$pb" -v vb="$vrlog" 'BEGIN {
		printf "  per second:     medians %.0f vs %.0f records/s: %.1f %% (target >= 100 %%)\n", gw, pw, 100 * gw / pw
		printf "  per CPU second: medians %.0f vs %.0f records/s: %.1f %%\n", gc, pc, 100 * gc / pc
		printf "  size: vrlog Parquet %.1f %% of the .vrlog (%d bytes; target <= 100 %%), pyarrow %.1f %%\n\n", 100 * gr, vb, 100 * pb / vb }'
fi

if want append; then
	go test -c -o "$TMP/an.test" ./internal/command/analyze/
	go test -c -o "$TMP/ds.test" ./dataset/
	echo "the append (dataset BenchmarkAppend: open, three files fsynced and renamed) against analyze without --dataset, and analyze with it (target: append <= 5 % of the analysis)"
	for _ in $(seq "$ROUNDS"); do
		(cd internal/command/analyze && VRLOG_BENCH_DATASET="$TMP/append-ds" "$TMP/an.test" -test.run '^$' -test.bench AnalyzeDataset -test.benchtime 10x)
		(cd dataset && "$TMP/ds.test" -test.run '^$' -test.bench 'Append$' -test.benchtime 20x)
	done | awk '/^Benchmark/ { n = $1; sub(/-[0-9]+$/, "", n); v[n] = v[n] " " $3 }
		END { for (k in v) print "  " k ":" v[k] " ns/op" }' | sort
	echo
fi

if want query; then
	go test -c -o "$TMP/ds.test" ./dataset/
	(cd dataset && VRLOG_BENCH_DATASET="$TMP/ds1000" "$TMP/ds.test" -test.run '^$' -test.bench 'Append$' -test.benchtime 1000x) | grep -E '^Benchmark'
	echo "DuckDB over the channels table of 1,000 runs (target < 1 s):"
	for _ in $(seq "$ROUNDS"); do "$PY" bench/parquet_query.py "$TMP/ds1000"; done | sed 's/^/  /'
fi
