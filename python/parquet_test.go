package python

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
