//go:build spark

package python

import (
	"path/filepath"
	"testing"
)

// Spark (pyspark, local[2], one session) reads the dataset of
// TestParquetDatasetInDuckDB and a group-by over runs answers as DuckDB's
// (tools/parquetcheck/check_spark.py). Built with -tags spark: `make
// test-spark` (which `make test` runs) installs pyspark and runs it.
func TestParquetDatasetInSpark(t *testing.T) {
	ds, reports := analyzedDataset(t)
	groupby := filepath.Join(t.TempDir(), "groupby.json")
	parquetCheck(t, "check_dataset.py", ds, reports, groupby)
	parquetCheck(t, "check_spark.py", ds, groupby)
}
