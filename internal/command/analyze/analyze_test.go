package analyze

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/logfmt"
)

const sample = "../../../testdata/sample.vrlog"

func invoke(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	app := cliutil.Single(Command())
	app.Writer, app.ErrWriter = &out, &errb
	code = cliutil.Execute(app, append([]string{"analyze"}, args...))
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.vrlog")
	os.WriteFile(junk, []byte("not a log"), 0o644)
	b, _ := os.ReadFile(sample)
	trunc := filepath.Join(dir, "trunc.vrlog")
	os.WriteFile(trunc, b[:len(b)/2], 0o644)
	flipped := filepath.Join(dir, "flipped.vrlog")
	bad := append([]byte(nil), b...)
	// Flip a bit in the middle of the second chunk's record metadata, which
	// a timing analysis reads (a flipped pixel it would never see; verify does).
	r, err := logfmt.Open(sample, logfmt.ReaderOptions{})
	if err != nil || len(r.Chunks()) < 2 {
		t.Fatalf("sample: %v", err)
	}
	c := r.Chunks()[1]
	r.Close()
	bad[c.Offset+c.Size()-int64(c.DataLen)-int64(c.MetaLen)/2] ^= 0x40
	os.WriteFile(flipped, bad, 0o644)
	// Another host's log: its wall clock minus its monotonic one is not
	// the sample recorder's.
	other := filepath.Join(dir, "other-host.vrlog")
	w, err := logfmt.Create(other, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := w.AddChannel(logfmt.Channel{Name: "x", Transport: logfmt.TransportZenoh, Topic: "x"})
	w.Write(&logfmt.Record{Channel: id, RecvWallNs: 1e18, RecvMonoNs: 1, Payload: []byte("x")})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string // in stdout+stderr
	}{
		{"several hosts", []string{sample, other}, 2, "analyze each host's log on its own, or put them on the simulator's clock first: vrlog merge --clock sim " + sample + " " + other + " -o merged.vrlog"},
		{"pass", []string{sample}, 0, "restarts (seq went back"},
		{"gate passes", []string{"--max-restarts", "1", "--max-skips", "vr/r1/camera/*=5", "--max-skips", "vr/r1/state=3", sample}, 0, "result: PASS"},
		{"gate fails", []string{"--max-skips", "0", sample}, 1, "max-skips vr/r1/state: 3 (limit ≤ 0): off by 3"},
		{"min rate", []string{"--min-rate", "vr/r1/state=24", sample}, 1, "min-rate vr/r1/state: 10.502 Hz (limit ≥ 24 Hz)"},
		{"quiet", []string{"-q", "--max-outage", "1s", sample}, 1, "FAIL  max-outage"},
		{"no args", nil, 2, "no input"},
		{"json dash", []string{sample, "--json", "-"}, 2, "--json takes no value and prints the report to stdout"},
		{"bad flag", []string{"--nope", sample}, 2, "unknown flag --nope"},
		{"bad limit", []string{"--max-outage", "soon", sample}, 2, "want a duration"},
		{"bad time format", []string{"--time-format", "mars", sample}, 2, "unknown time format"},
		{"missing file", []string{filepath.Join(dir, "nope.vrlog")}, 2, "nope.vrlog"},
		{"foreign file", []string{junk}, 2, "junk.vrlog"},
		{"truncated: analyzed by scan", []string{trunc}, 0, "torn tail at byte"},
		{"bit flip", []string{flipped}, 2, "flipped.vrlog"},
		{"bit flip tolerant", []string{"--tolerant", flipped}, 0, "SKIPPED CORRUPT CHUNK"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := invoke(t, c.args...)
			if code != c.code || !strings.Contains(out+errs, c.want) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s\nwant %q", code, c.code, out, errs, c.want)
			}
		})
	}
}

func TestJSONAndFiles(t *testing.T) {
	dir := t.TempDir()
	j, h, csv := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html"), filepath.Join(dir, "r.csv")
	code, out, errs := invoke(t, "--json", "--junit", j, "--html", h, "--csv", csv, "--time-format", "rfc3339", "--max-skips", "0", sample)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep analyzer.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Schema != analyzer.ReportSchema || rep.Pass {
		t.Fatalf("json: %v", err)
	}
	for _, f := range []string{j, h, csv} {
		if st, err := os.Stat(f); err != nil || st.Size() < 100 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	c, _ := os.ReadFile(csv)
	if !strings.Contains(string(c), ",2026-11-29T23:06:50.467516066Z,") { // the sample's first state
		t.Fatal("csv lacks rfc3339 times")
	}
	// Baseline: the same log against its own report passes.
	base := filepath.Join(dir, "base.json")
	os.WriteFile(base, []byte(out), 0o644)
	if code, _, errs := invoke(t, "--baseline", base, sample); code != 0 {
		t.Fatalf("baseline against itself: exit %d %s", code, errs)
	}
}

// --help says what the outputs do: an existing --csv, --junit or --html
// file is replaced only with --force (it said they "replace existing
// files", and they were refused).
func TestHelpSaysForce(t *testing.T) {
	_, help, _ := invoke(t, "--help")
	if strings.Contains(help, "replace existing files;") || !strings.Contains(help, "replaced only") {
		t.Fatalf("--help:\n%s", help)
	}
	j := filepath.Join(t.TempDir(), "j.xml")
	os.WriteFile(j, nil, 0o644)
	if code, _, errs := invoke(t, sample, "-q", "--junit", j); code != cliutil.ExitUsage || !strings.Contains(errs, "--force") {
		t.Fatalf("an existing --junit: exit %d %s", code, errs)
	}
	if code, _, errs := invoke(t, sample, "-q", "--junit", j, "--force"); code != 0 {
		t.Fatalf("with --force: exit %d %s", code, errs)
	}
}
