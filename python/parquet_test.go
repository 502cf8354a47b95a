package python

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/command/analyze"
	"github.com/vrlog/vrlog/internal/command/logtools"
	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

// parquetCheck runs tools/parquetcheck/SCRIPT with args in the venv.
func parquetCheck(t *testing.T, script string, args ...string) {
	t.Helper()
	cmd := exec.Command(peertest.Python(t), append([]string{filepath.Join(peertest.Root(), "tools", "parquetcheck", script)}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", script, args, err, out)
	}
	t.Logf("%s", out)
}

// catJSON writes `vrlog cat --json` of log (with --raw when raw) to a file.
func catJSON(t *testing.T, log, out string, raw bool) {
	t.Helper()
	args := []string{"cat", "--json", log}
	if raw {
		args = append(args, "--raw")
	}
	vrlogTo(t, out, args...)
}

// Every record of export --format parquet, read by DuckDB, equals the
// record `vrlog cat --json` prints: every int64 stamp, every float bit
// for bit (NaN and -1e-300 in the rich log), seq near 2^64, decoded states
// (0 to 4 sensors), frame headers, clock probes, garbage states
// (decoded false), a raw channel with an odd name; split into files of
// 97 rows (read back in order), and with --payloads every byte; pandas and
// polars read each table too (tools/parquetcheck/check_export.py).
func TestParquetExportInDuckDB(t *testing.T) {
	dir := t.TempDir()
	synthLog := filepath.Join(dir, "synth.vrlog")
	if _, err := synth.WriteFile(synthLog, synth.Default(), logfmt.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	richLog := filepath.Join(dir, "rich.vrlog")
	rich(t, richLog, logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}, 600)
	for _, c := range []struct {
		log  string
		args []string
		raw  bool
	}{
		{"../testdata/sample.vrlog", nil, false},
		{synthLog, nil, false},
		{richLog, []string{"--rows-per-file", "97"}, false},
		{richLog, []string{"--payloads"}, true},
	} {
		out := filepath.Join(t.TempDir(), "records")
		vrlog(t, append([]string{"export", c.log, "--format", "parquet", "-o", out}, c.args...)...)
		cat := filepath.Join(dir, "cat.jsonl")
		catJSON(t, c.log, cat, c.raw)
		parquetCheck(t, "check_export.py", cat, out)
	}
}

// vrlogTo runs vrlog with args, its standard output into file out; it
// returns the exit code (0, or 1: a check failed).
func vrlogTo(t *testing.T, out string, args ...string) int {
	t.Helper()
	var stdout, stderr bytes.Buffer
	app := &cli.App{Name: "vrlog", Commands: append(logtools.Commands(), analyze.Command()), Writer: &stdout, ErrWriter: &stderr}
	code := cliutil.Execute(app, append([]string{"vrlog"}, args...))
	if code != 0 && code != cliutil.ExitCheckFailed {
		t.Fatalf("vrlog %v: exit %d\n%s", args, code, stderr.String())
	}
	if err := os.WriteFile(out, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return code
}

// analyzedDataset analyzes 20 synthetic sessions (two robots, seeds,
// seq gaps, restarts, outages, a camera delay 1 ms longer each run; every
// other one gated by --max-skips 0, so some fail) into a dataset with --label case=NAME --label robot=R, saving
// each --json report as reports/NAME.json, plus one log that fails
// analysis (reports/NAME.error). It returns the dataset and reports dirs.
func analyzedDataset(t *testing.T) (ds, reports string) {
	t.Helper()
	dir := t.TempDir()
	ds, reports = filepath.Join(dir, "dataset"), filepath.Join(dir, "reports")
	if err := os.Mkdir(reports, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		cfg := synth.Default()
		cfg.Robot = []string{"r1", "r2"}[i%2]
		cfg.Seed = uint64(i + 1)
		cfg.Start = cfg.Start.Add(time.Duration(i) * 26 * time.Hour) // several date partitions
		cfg.Duration = time.Duration(8+i%5) * time.Second
		cfg.RestartAt, cfg.Outage = 0, 0
		if i%3 == 0 {
			cfg.RestartAt, cfg.Outage = 3*time.Second, time.Duration(500+100*i)*time.Millisecond
		}
		cfg.DropStates = []uint64{uint64(10 + i), uint64(40 + 2*i)}[:i%3]
		cfg.StateHz = cfg.FrameHz                                    // one state per frame: the latest-state lag is the camera's delay
		cfg.FrameLag = time.Duration(5+i+2*(i%2)) * time.Millisecond // 1 ms more per commit, r2's 2 ms more
		log := filepath.Join(dir, fmt.Sprintf("run%02d.vrlog", i))
		host := map[string]string{"host": []string{"ci-a", "ci-b", "ci-c"}[i%3]}
		if _, err := synth.WriteFile(log, cfg, logfmt.WriterOptions{Metadata: host}); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("run%02d", i)
		args := []string{"analyze", "--json", "--dataset", ds, "--label", "case=" + name, "--label", "robot=" + cfg.Robot,
			"--label", "commit=" + fmt.Sprintf("%040x", i*7919)}
		if i%2 == 1 {
			args = append(args, "--max-skips", "0", "--max-lag", "40ms")
		}
		vrlogTo(t, filepath.Join(reports, name+".json"), append(args, log)...)
	}
	bad := filepath.Join(dir, "bad.vrlog")
	if err := os.WriteFile(bad, []byte("not a log at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	app := &cli.App{Name: "vrlog", Commands: []*cli.Command{analyze.Command()}, Writer: io.Discard, ErrWriter: &stderr}
	if code := cliutil.Execute(app, []string{"vrlog", "analyze", "--dataset", ds, "--label", "case=broken", "--label", "robot=r1", bad}); code != cliutil.ExitUsage {
		t.Fatalf("analyze of a broken log: exit %d, want %d\n%s", code, cliutil.ExitUsage, stderr.String())
	}
	if err := os.WriteFile(filepath.Join(reports, "broken.error"), stderr.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return ds, reports
}

// A dataset of 20 analyzed runs and a failed one, read by DuckDB: every
// channels row equals its report's figures, events its skips, restarts,
// outages and checks, runs its verdict and labels; the failed run is one
// runs row of status error; pandas and polars read the three tables
// (tools/parquetcheck/check_dataset.py).
func TestParquetDatasetInDuckDB(t *testing.T) {
	ds, reports := analyzedDataset(t)
	parquetCheck(t, "check_dataset.py", ds, reports, filepath.Join(t.TempDir(), "groupby.json"))
}

// docs/analytics.md's own queries answer on a real dataset and export,
// and its trend plot is made by its trend query (VRLOG_UPDATE_DOCS=1
// writes the plot into docs/).
func TestTrendPlotFromDocQuery(t *testing.T) {
	ds, _ := analyzedDataset(t)
	records := filepath.Join(t.TempDir(), "records")
	vrlog(t, "export", "../testdata/sample.vrlog", "--format", "parquet", "-o", records)
	parquetCheck(t, "check_doc_queries.py", ds, records)
	png := filepath.Join(t.TempDir(), "trend.png")
	if os.Getenv("VRLOG_UPDATE_DOCS") != "" {
		png = filepath.Join(peertest.Root(), "docs", "analytics-lag-p99.png")
	}
	parquetCheck(t, "plot_trend.py", ds, png)
	if st, err := os.Stat(png); err != nil || st.Size() < 10_000 {
		t.Fatalf("plot %s: %v", png, err)
	}
}
