package python

import (
	"bytes"
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

func vrlog(t *testing.T, args ...string) {
	t.Helper()
	var out, errb bytes.Buffer
	app := &cli.App{Name: "vrlog", Commands: append(logtools.Commands(), analyze.Command()), Writer: &out, ErrWriter: &errb}
	if code := cliutil.Execute(app, append([]string{"vrlog"}, args...)); code != 0 && code != cliutil.ExitCheckFailed {
		t.Fatalf("vrlog %v: exit %d\n%s%s", args, code, out.String(), errb.String())
	}
}

// Every CSV vrlog writes loads in pandas with its defaults with exact int64
// nanoseconds and the decoded state fields (tests/check_csv.py compares
// them with the Python reader): per-channel and combined exports, in unix,
// uts and rfc3339 time formats, and analyze --csv; on the sample, on a
// synthetic session with clock probes, a raw channel and garbage states,
// and on the rich log (NaN and tiny floats, 0 to 4 sensors, negative
// stamps, a channel name that needs CSV quoting).
func TestCSVInPandas(t *testing.T) {
	dir := t.TempDir()
	synthLog := filepath.Join(dir, "synth.vrlog")
	if _, err := synth.WriteFile(synthLog, synth.Default(), logfmt.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	richLog := filepath.Join(dir, "rich.vrlog")
	rich(t, richLog, logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}, 600)
	for _, c := range []struct{ log, format string }{{"../testdata/sample.vrlog", "unix"}, {synthLog, "uts"}, {richLog, "rfc3339"}} {
		out := filepath.Join(dir, filepath.Base(c.log)+"-"+c.format)
		vrlog(t, "export", c.log, "--format", "csv", "--time-format", c.format, "-o", out)
		vrlog(t, "export", c.log, "--format", "csv", "--time-format", c.format, "-o", out+".csv")
		vrlog(t, "analyze", "--csv", out+"-analyze.csv", "--time-format", "elapsed", c.log)
		cmd := exec.Command(peertest.Python(t), filepath.Join("tests", "check_csv.py"), c.log, out, out+".csv", out+"-analyze.csv")
		res, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.log, err, res)
		}
		t.Logf("%s:\n%s", c.log, res)
	}
}
