package parquetexport

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/cputime"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

// statesLog writes a log of n real states (the simulator's state model as
// synth writes it: a 1 kHz robot circling, four sensor stamps, 200-byte
// codec payloads, zstd as the recorder stores states) and 10 frames; at
// VRLOG_BENCH_LOG when set (and reused from there).
func statesLog(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "states.vrlog")
	if p := os.Getenv("VRLOG_BENCH_LOG"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		path = p
	}
	cfg := synth.Config{Robot: "r1", Start: time.Unix(1_764_446_400, 0), Duration: time.Duration(n-1) * time.Millisecond,
		StateHz: 1000, FrameHz: 10_000 / float64(n), Width: 32, Height: 24,
		Latency: 300 * time.Microsecond, Jitter: 100 * time.Microsecond, Seed: 1}
	tr, err := synth.WriteFile(path, cfg, logfmt.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if tr.States != uint64(n) {
		b.Fatalf("%d states, want %d", tr.States, n)
	}
	return path
}

// BenchmarkExportStates is export --format parquet of 1 M real states
// (VRLOG_BENCH_STATES to change) from their .vrlog on the cores -cpu
// gives: read, decode, encode, zstd, write, commit. It reports records
// per second and per CPU second, and the Parquet table's size against
// the .vrlog holding the states. VRLOG_BENCH_KEEP=DIR keeps the last
// export in DIR for bench/parquet.sh, which times pyarrow writing the
// same columns from numpy beside it.
//
//	go test -run '^$' -bench ExportStates -benchtime 3x -cpu 1 ./parquetexport/
func BenchmarkExportStates(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("VRLOG_BENCH_STATES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	log := statesLog(b, n)
	st, _ := os.Stat(log)
	var out string
	b.ResetTimer()
	c0 := cputime.Process()
	for i := range b.N {
		out = filepath.Join(b.TempDir(), fmt.Sprint("out", i))
		exportStates(b, log, out)
	}
	cpu := cputime.Process() - c0
	b.StopTimer()
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "records/cpu-s")
	size := dirSize(b, filepath.Join(out, DirName(synth.StateKey("r1"))))
	b.ReportMetric(float64(size)/float64(st.Size()), "parquet/vrlog")
	if keep := os.Getenv("VRLOG_BENCH_KEEP"); keep != "" {
		os.RemoveAll(keep)
		if err := os.Rename(out, keep); err != nil {
			b.Fatal(err)
		}
	}
}

// exportStates exports the state channel of log as export --format
// parquet --channel vr/r1/state does, its read-ahead on the spare cores.
func exportStates(b *testing.B, log, out string) {
	r, err := logfmt.Open(log, logfmt.ReaderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	sel, err := r.Select(logfmt.Select{Channels: []string{synth.StateKey("r1")}})
	if err != nil {
		b.Fatal(err)
	}
	w, err := Create(out, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	for _, ch := range sel.Channels {
		if err := w.AddChannel(ch); err != nil {
			b.Fatal(err)
		}
	}
	it := Records(r, sel, []uint16{sel.Channels[0].ID})
	defer it.Close()
	for it.Next() {
		if err := w.Write(it.Record()); err != nil {
			b.Fatal(err)
		}
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		b.Fatal(err)
	}
}

func dirSize(b *testing.B, dir string) int64 {
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	var n int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		n += st.Size()
	}
	return n
}
