package dataset

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkAppend appends the sample's report (3 channels, 16 events) as
// a CI job does: open the dataset, append one run (three files, each
// fsynced and renamed). VRLOG_BENCH_DATASET=DIR appends there (and keeps
// it: bench/parquet.sh queries 1,000 runs of it in DuckDB).
//
//	go test -run '^$' -bench Append ./dataset/
func BenchmarkAppend(b *testing.B) {
	dir := os.Getenv("VRLOG_BENCH_DATASET")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "ds")
	}
	rep := sampleReport(b)
	for i := range b.N {
		ds, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		labels := map[string]string{"commit": strconv.FormatInt(int64(i)*7919, 16), "branch": "main", "robot": "r" + strconv.Itoa(i%4)}
		if _, err := ds.Append(rep, RunInfo{Labels: labels, VrlogVersion: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}
