// Package dataset appends analyze runs to a Parquet dataset that DuckDB,
// Spark, pandas and polars read as three tables:
//
//	DIR/vrlog-dataset.json                      the schema version (Schema)
//	DIR/runs/date=YYYY-MM-DD/RUN_ID.parquet     one row per analysis
//	DIR/channels/date=YYYY-MM-DD/RUN_ID.parquet one row per channel per run
//	DIR/events/date=YYYY-MM-DD/RUN_ID.parquet   skips, restarts, outages, checks...
//
// The date (Hive partitioning) is the log's start in UTC, or the append's
// time for a run whose analysis failed. Each append writes three new
// files under a name no other run has (the time and 64 random bits), each
// written aside and renamed into place: any number of processes append to
// one directory (or a mounted bucket with atomic renames) at once, without
// a lock, and a reader never sees a partial file. The columns come from
// the analyzer's JSON report (Run, Channel, Event: flatten.go has the
// naming rule); docs/analytics.md lists them and the queries.
//
// The package is pure Go (CGO_ENABLED=0): analyze builds without cgo.
package dataset
