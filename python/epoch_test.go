package python

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/command/logtools"
	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
)

// elapsedOf is one record's elapsed as a reader gives it (nil: none).
type elapsedOf struct {
	Channel uint16   `json:"channel_id"`
	Mono    int64    `json:"recv_mono_ns"`
	Elapsed *float64 `json:"elapsed"`
}

// TestElapsedMatchesCat: the Python reader's elapsed (decode(rec), a
// frame's header, with the reader's defaults) is `vrlog cat --json`'s for
// every record of the golden logs and the sample: both count from the
// session epoch (issue 28), which is the Go analyzer's on every file (the
// golden logs' payloads are not wire-format samples: there the epoch is
// what is compared).
func TestElapsedMatchesCat(t *testing.T) {
	for _, f := range []string{"../testdata/logfmt/golden-v1.vrlog", "../testdata/logfmt/golden-v1-zstd.vrlog", "../testdata/sample.vrlog"} {
		t.Run(filepath.Base(f), func(t *testing.T) { elapsedMatches(t, f) })
	}
}

// A cut (around the sample's 25 s pause, and of one record) and a merge
// keep the source's session epoch: every record's elapsed, in cat --json
// and in the Python reader, is the one it has in the source.
func TestElapsedKeptByCutAndMerge(t *testing.T) {
	const sample = "../testdata/sample.vrlog"
	src := map[int64]elapsedOf{}
	for _, e := range elapsedMatches(t, sample) {
		src[e.Mono] = e
	}
	dir := t.TempDir()
	for _, tc := range []struct{ name, args string }{
		{"cut.vrlog", "cut " + sample + " --start 24 --end 27"},
		{"one.vrlog", "cut " + sample + " --start 1.02 --end 1.03 --channel vr/r1/state"},
		{"merged.vrlog", "merge " + dir + "/cut.vrlog " + sample},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name)
			var msg bytes.Buffer
			app := &cli.App{Name: "vrlog", Commands: logtools.Commands(), Writer: &msg, ErrWriter: &msg}
			if code := cliutil.Execute(app, append(append([]string{"vrlog"}, strings.Fields(tc.args)...), "-o", out)); code != 0 {
				t.Fatalf("vrlog %s: exit %d\n%s", tc.args, code, msg.String())
			}
			got := elapsedMatches(t, out)
			withElapsed := 0
			for i, e := range got {
				w, ok := src[e.Mono]
				if !ok {
					t.Fatalf("record %d %+v is not in the source", i, e)
				}
				if (e.Elapsed == nil) != (w.Elapsed == nil) || (e.Elapsed != nil && *e.Elapsed != *w.Elapsed) {
					t.Fatalf("record %d: elapsed %v, in the source %v", i, deref(e.Elapsed), deref(w.Elapsed))
				}
				if e.Elapsed != nil {
					withElapsed++
				}
			}
			if withElapsed == 0 {
				t.Fatalf("%d records, none with an elapsed", len(got))
			}
		})
	}
}

// elapsedMatches checks that the Python reader's elapsed of every record
// of f is cat --json's, and its session epoch Go's, and returns them.
func elapsedMatches(t *testing.T, f string) []elapsedOf {
	t.Helper()
	var out bytes.Buffer
	app := &cli.App{Name: "vrlog", Commands: logtools.Commands(), Writer: &out, ErrWriter: &out}
	if code := cliutil.Execute(app, []string{"vrlog", "cat", "--json", f}); code != 0 {
		t.Fatalf("cat --json: exit %d\n%s", code, out.String())
	}
	var want []elapsedOf
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			elapsedOf
			Decoded struct {
				Elapsed *float64 `json:"elapsed"`
			} `json:"decoded"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("cat line %q: %v", sc.Text(), err)
		}
		line.Elapsed = line.Decoded.Elapsed
		want = append(want, line.elapsedOf)
	}
	py, err := exec.Command(peertest.Python(t), filepath.Join("tests", "elapsed.py"), f).Output()
	if err != nil {
		t.Fatalf("tests/elapsed.py: %v", err)
	}
	lines := bytes.Split(bytes.TrimSpace(py), []byte("\n"))
	var head struct {
		Epoch *int64 `json:"session_epoch_ns"`
	}
	if err := json.Unmarshal(lines[0], &head); err != nil || head.Epoch == nil {
		t.Fatalf("elapsed.py first line %q: %v", lines[0], err)
	}
	r, err := logfmt.Open(f, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	epoch, _ := analyzer.SessionEpoch(r)
	r.Close()
	if *head.Epoch != epoch {
		t.Fatalf("python session epoch %d, Go's %d", *head.Epoch, epoch)
	}
	var got []elapsedOf
	withElapsed := 0
	for _, l := range lines[1:] {
		var e elapsedOf
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("elapsed.py line %q: %v", l, err)
		}
		got = append(got, e)
	}
	if len(got) != len(want) {
		t.Fatalf("python gave %d records, cat %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Channel != w.Channel || g.Mono != w.Mono || (g.Elapsed == nil) != (w.Elapsed == nil) ||
			(g.Elapsed != nil && *g.Elapsed != *w.Elapsed) {
			t.Fatalf("record %d: python %+v (elapsed %v), cat %+v (elapsed %v)", i, g, deref(g.Elapsed), w, deref(w.Elapsed))
		}
		if w.Elapsed != nil {
			withElapsed++
		}
	}
	t.Logf("session epoch %d; %d records, %d with an elapsed, all equal", epoch, len(want), withElapsed)
	return want
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
