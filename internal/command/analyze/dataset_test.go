package analyze

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/dataset"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

// partFiles lists a dataset table's visible files.
func partFiles(t testing.TB, ds, table string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(ds, table, "date=*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// --dataset appends a run per analysis: a passing one, one that fails its
// gate (exit 1, appended), one that fails to analyze (exit 2, a runs row
// of status error); flags that are wrong append nothing; a dataset of a
// newer schema is refused.
func TestDatasetFlags(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	junk := filepath.Join(dir, "junk.vrlog")
	os.WriteFile(junk, []byte("not a log"), 0o644)
	for _, c := range []struct {
		name  string
		args  []string
		code  int
		want  string
		added int
	}{
		{"pass", []string{"-q", "--dataset", ds, "--label", "commit=abc", sample}, 0, "", 1},
		{"gate fails", []string{"-q", "--dataset", ds, "--max-skips", "0", sample}, 1, "max-skips", 1},
		{"bad log", []string{"--dataset", ds, "--label", "job=7", junk}, 2, "junk.vrlog", 1},
		{"label without dataset", []string{"--label", "a=b", sample}, 2, "add --dataset DIR", 0},
		{"label without =", []string{"--dataset", ds, "--label", "ab", sample}, 2, "want KEY=VALUE", 0},
		{"label twice", []string{"--dataset", ds, "--label", "a=b", "--label", "a=c", sample}, 2, `key "a" given twice`, 0},
		{"label control", []string{"--dataset", ds, "--label", "a=b\nc", sample}, 2, "control character", 0},
		{"bad flag", []string{"--dataset", ds, "--max-outage", "soon", sample}, 2, "want a duration", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(partFiles(t, ds, dataset.TableRuns))
			code, out, errs := invoke(t, c.args...)
			if code != c.code || !strings.Contains(out+errs, c.want) {
				t.Fatalf("exit %d (want %d)\n%s%s\nwant %q", code, c.code, out, errs, c.want)
			}
			if got := len(partFiles(t, ds, dataset.TableRuns)) - before; got != c.added {
				t.Fatalf("%d runs appended, want %d", got, c.added)
			}
		})
	}
	if n := len(partFiles(t, ds, dataset.TableChannels)); n != 3 {
		t.Fatalf("%d channels files, want 3 (one per run; the failed run's has no row)", n)
	}
	// DIR is created, the directories above it are not (an output's
	// parent must exist).
	deep := filepath.Join(dir, "nonexist", "ds")
	if code, _, errs := invoke(t, "-q", "--dataset", deep, sample); code != cliutil.ExitUsage || !strings.Contains(errs, "no such directory: "+filepath.Dir(deep)) {
		t.Fatalf("--dataset under a missing directory: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Dir(deep)); !os.IsNotExist(err) {
		t.Fatalf("--dataset created the directory above DIR (%v)", err)
	}
	newer := filepath.Join(dir, "newer")
	os.MkdirAll(newer, 0o755)
	os.WriteFile(filepath.Join(newer, dataset.MarkerFile), []byte(`{"schema": "vrlog.dataset/7"}`), 0o644)
	if code, _, errs := invoke(t, "--dataset", newer, sample); code != cliutil.ExitRuntime || !strings.Contains(errs, "newer than this vrlog's") {
		t.Fatalf("newer dataset: exit %d\n%s", code, errs)
	}
}

// BenchmarkAnalyzeDataset is analyze with --dataset against without
// (-count alternates them), on the sample log and on a 309,000-record log
// (1 kHz states and 30 Hz frames for 5 minutes): the append's share of a
// run's analysis. bench/parquet.sh runs it.
func BenchmarkAnalyzeDataset(b *testing.B) {
	big := filepath.Join(b.TempDir(), "big.vrlog")
	cfg := synth.Default()
	cfg.StateHz, cfg.Duration = 1000, 5*time.Minute
	if _, err := synth.WriteFile(big, cfg, logfmt.WriterOptions{}); err != nil {
		b.Fatal(err)
	}
	ds := os.Getenv("VRLOG_BENCH_DATASET")
	if ds == "" {
		ds = filepath.Join(b.TempDir(), "ds")
	}
	for _, log := range []struct{ name, path string }{{"sample", sample}, {"309k", big}} {
		for _, with := range []bool{false, true} {
			args := []string{"analyze", "-q", log.path}
			name := log.name + "/plain"
			if with {
				args = append([]string{"analyze", "-q", "--dataset", ds, "--label", "bench=1"}, log.path)
				name = log.name + "/dataset"
			}
			b.Run(name, func(b *testing.B) {
				for range b.N {
					var out, errb bytes.Buffer
					app := cliutil.Single(Command())
					app.Writer, app.ErrWriter = &out, &errb
					if code := cliutil.Execute(app, args); code != 0 {
						b.Fatal(fmt.Sprint(code, errb.String()))
					}
				}
			})
		}
	}
}
