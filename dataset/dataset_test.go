package dataset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/vrlog/vrlog/analyzer"
)

// The sample log's golden report: a real analysis (skips, restarts,
// outages, lag across outages, clock probes).
func sampleReport(t testing.TB) *analyzer.Report {
	t.Helper()
	rep, err := analyzer.LoadReport("../testdata/sample.expected.json")
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A child process of TestConcurrentAppends or TestKilledAppends: it
// appends VRLOG_DATASET_N runs (labelled proc and n) to VRLOG_DATASET_DIR.
func TestMain(m *testing.M) {
	if dir := os.Getenv("VRLOG_DATASET_DIR"); dir != "" {
		n, _ := strconv.Atoi(os.Getenv("VRLOG_DATASET_N"))
		if err := appendRuns(dir, os.Getenv("VRLOG_DATASET_PROC"), n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func appendRuns(dir, proc string, n int) error {
	rep, err := analyzer.LoadReport("../testdata/sample.expected.json")
	if err != nil {
		return err
	}
	for i := range n {
		ds, err := Open(dir) // each run opens it, as each CI job does
		if err != nil {
			return err
		}
		if _, err := ds.Append(rep, RunInfo{Labels: map[string]string{"proc": proc, "n": strconv.Itoa(i)}}); err != nil {
			return err
		}
	}
	return nil
}

// appenders starts procs child processes appending n runs each.
func appenders(t *testing.T, dir string, procs, n int) []*exec.Cmd {
	t.Helper()
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "VRLOG_DATASET_DIR="+dir, "VRLOG_DATASET_N="+strconv.Itoa(n), "VRLOG_DATASET_PROC="+strconv.Itoa(p))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

// readTable reads every visible file of a table (what a reader's
// *.parquet glob sees) into one Arrow table per file.
func readTable(t *testing.T, dir, name string) map[string]arrow.Table {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, name, "date=*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]arrow.Table{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := pqarrow.ReadTable(context.Background(), fh, nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		t.Cleanup(tb.Release)
		out[strings.TrimSuffix(filepath.Base(f), ".parquet")] = tb
	}
	return out
}

// stringsOf returns the strings of a string column of tb.
func stringsOf(t *testing.T, tb arrow.Table, name string) []string {
	t.Helper()
	idx := tb.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("no column %s", name)
	}
	var out []string
	for _, c := range tb.Column(idx[0]).Data().Chunks() {
		s := c.(*array.String)
		for i := range s.Len() {
			out = append(out, s.Value(i))
		}
	}
	return out
}

// labels returns the labels map of each row of a runs table.
func labels(t *testing.T, tb arrow.Table) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, c := range tb.Column(tb.Schema().FieldIndices("labels")[0]).Data().Chunks() {
		m := c.(*array.Map)
		keys, items := m.Keys().(*array.String), m.Items().(*array.String)
		for i := range m.Len() {
			lo, hi := m.ValueOffsets(i)
			row := map[string]string{}
			for j := lo; j < hi; j++ {
				row[keys.Value(int(j))] = items.Value(int(j))
			}
			out = append(out, row)
		}
	}
	return out
}

// hidden lists the files under dir a reader's glob does not see: the
// temporary files of appends that did not finish.
func hidden(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// 100 appends from 4 processes at once into one directory, no lock: every
// run is there once, with its channels and events rows, and nothing else.
func TestConcurrentAppends(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	for _, cmd := range appenders(t, dir, 4, 25) {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	rep := sampleReport(t)
	runs, channels, events := readTable(t, dir, TableRuns), readTable(t, dir, TableChannels), readTable(t, dir, TableEvents)
	if len(runs) != 100 || len(channels) != 100 || len(events) != 100 {
		t.Fatalf("files: %d runs, %d channels, %d events; want 100 each", len(runs), len(channels), len(events))
	}
	seen := map[string]bool{}
	wantEvents := len(eventRows("x", rep))
	for id, tb := range runs {
		l := labels(t, tb)
		if len(l) != 1 {
			t.Fatalf("%s: %d runs rows", id, len(l))
		}
		key := l[0]["proc"] + "/" + l[0]["n"]
		if seen[key] {
			t.Fatalf("run %s appended twice", key)
		}
		seen[key] = true
		if got := stringsOf(t, channels[id], "run_id"); len(got) != len(rep.Channels) || got[0] != id {
			t.Fatalf("%s: channels rows %v", id, got)
		}
		if got := events[id].NumRows(); got != int64(wantEvents) {
			t.Fatalf("%s: %d events rows, want %d", id, got, wantEvents)
		}
	}
	if len(seen) != 100 {
		t.Fatalf("%d distinct runs, want 100", len(seen))
	}
	if h := hidden(t, dir); len(h) > 0 {
		t.Fatalf("left behind: %v", h)
	}
}

// Appending processes killed (SIGKILL) at random moments: every file a
// reader sees is complete, every run a runs row names has its channels
// and events files (they are renamed into place before it), and what the
// killed appends left are hidden temporary files.
func TestKilledAppends(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for range 4 {
		cmds := appenders(t, dir, 3, 1000)
		time.Sleep(time.Duration(100+rng.IntN(300)) * time.Millisecond)
		for _, cmd := range cmds {
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
		}
	}
	rep := sampleReport(t)
	runs, channels, events := readTable(t, dir, TableRuns), readTable(t, dir, TableChannels), readTable(t, dir, TableEvents)
	if len(runs) == 0 {
		t.Fatal("no run was appended before the kills")
	}
	for id := range runs {
		if channels[id] == nil || events[id] == nil {
			t.Fatalf("run %s: its channels or events file is missing", id)
		}
		if int(channels[id].NumRows()) != len(rep.Channels) {
			t.Fatalf("run %s: %d channels rows", id, channels[id].NumRows())
		}
	}
	orphans := 0
	for id := range channels {
		if runs[id] == nil {
			orphans++ // killed between the renames: no runs row names them
		}
	}
	t.Logf("%d runs appended, %d killed after their channels file, %d temporary files left hidden", len(runs), orphans, len(hidden(t, dir)))
	// The dataset takes appends on after the kills.
	if err := appendRuns(dir, "after", 1); err != nil {
		t.Fatal(err)
	}
}

// A dataset written by a newer vrlog, or an older one, is refused with a
// message that says which and what to do; a foreign marker too; nothing
// is written into such a directory.
func TestSchemaVersionRefused(t *testing.T) {
	for _, c := range []struct{ marker, want string }{
		{`{"schema": "vrlog.dataset/2"}`, "newer than this vrlog's vrlog.dataset/1"},
		{`{"schema": "vrlog.dataset/99", "note": "x"}`, "newer"},
		{`{"schema": "vrlog.dataset/0"}`, "older than this vrlog's vrlog.dataset/1"},
		{`{"schema": "something/1"}`, "not a vrlog dataset marker"},
		{`not json`, "not a vrlog dataset marker"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, MarkerFile), []byte(c.marker), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("marker %s: %v, want an error saying %q", c.marker, err, c.want)
		}
		if strings.Contains(c.want, "er than") && !errors.Is(err, ErrSchema) {
			t.Fatalf("marker %s: %v is not ErrSchema", c.marker, err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Fatalf("marker %s: the directory holds %d entries", c.marker, len(entries))
		}
	}
}

// Labels are data: quotes, '=', commas, slashes, spaces, non-ASCII and
// SQL are kept exactly; a label without '=', with an empty key, a control
// character or invalid UTF-8 is refused.
func TestLabels(t *testing.T) {
	odd := map[string]string{
		"commit":         "0123456789abcdef0123456789abcdef01234567",
		"branch":         `feat/ü "quoted", 'single' = sign`,
		"job name":       "nightly / 2 of 4",
		"sql":            "x'; drop table runs; --",
		"ключ":           "значение 🚀",
		"empty":          "",
		"a=b":            "",
		"path/../../etc": "../..",
	}
	for k, v := range odd {
		if k == "a=b" {
			continue // '=' ends a key
		}
		gk, gv, err := ParseLabel(k + "=" + v)
		if err != nil || gk != k || gv != v {
			t.Fatalf("ParseLabel(%q) = %q, %q, %v", k+"="+v, gk, gv, err)
		}
	}
	if k, v, _ := ParseLabel("a=b=c"); k != "a" || v != "b=c" {
		t.Fatalf("a=b=c: %q %q", k, v)
	}
	for _, bad := range []string{"novalue", "=v", " =v", "k=line\nbreak", "k=tab\tx", "k=\x00", "k=\xff\xfe"} {
		if _, _, err := ParseLabel(bad); err == nil {
			t.Fatalf("ParseLabel(%q) accepted", bad)
		}
	}
	dir := t.TempDir()
	ds, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	delete(odd, "a=b")
	id, err := ds.Append(sampleReport(t), RunInfo{Labels: odd})
	if err != nil {
		t.Fatal(err)
	}
	runs := readTable(t, dir, TableRuns)
	got := labels(t, runs[id])
	if len(got) != 1 || len(got[0]) != len(odd) {
		t.Fatalf("labels read back: %v", got)
	}
	for k, v := range odd {
		if got[0][k] != v {
			t.Fatalf("label %q: read back %q, want %q", k, got[0][k], v)
		}
	}
}

// A run whose analysis failed is one runs row of status error with the
// error; its channels and events files hold no row.
func TestFailedRun(t *testing.T) {
	dir := t.TempDir()
	ds, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	id, err := ds.AppendFailed(errors.New("run.vrlog: offset 0: bad magic"), RunInfo{Files: []string{"run.vrlog"}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	runs := readTable(t, dir, TableRuns)
	if got := stringsOf(t, runs[id], "status"); !slices.Equal(got, []string{"error"}) {
		t.Fatalf("status %v", got)
	}
	if got := stringsOf(t, runs[id], "error"); got[0] != "run.vrlog: offset 0: bad magic" {
		t.Fatalf("error %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, TableRuns, "date=2026-03-04", id+".parquet")); err != nil {
		t.Fatalf("partitioned by the append's date: %v", err)
	}
	for _, tb := range []string{TableChannels, TableEvents} {
		if n := readTable(t, dir, tb)[id].NumRows(); n != 0 {
			t.Fatalf("%s: %d rows for a failed run", tb, n)
		}
	}
}

// damaged keeps its meaning (a torn tail, a skipped chunk, damage read
// around); intact is analyze --require-intact's judgement: an unfinished
// log (no footer, no torn tail) is not intact, yet not damaged.
func TestDamagedAndIntact(t *testing.T) {
	rep, err := analyzer.LoadReport("../testdata/sample.expected.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		change          func(f *analyzer.FileReport)
		damaged, intact bool
	}{
		{"whole", func(*analyzer.FileReport) {}, false, true},
		{"unfinished", func(f *analyzer.FileReport) { f.Finished = false }, false, false},
		{"torn", func(f *analyzer.FileReport) { f.Finished, f.TornTail = false, 1000 }, true, false},
		{"chunk skipped", func(f *analyzer.FileReport) { f.SkippedChunks = []string{"a chunk"} }, true, false},
	} {
		r := *rep
		r.Files = slices.Clone(rep.Files)
		tc.change(&r.Files[0])
		row := runRow("id", &r, RunInfo{})
		if row.Damaged != tc.damaged || row.Intact != tc.intact {
			t.Errorf("%s: damaged %v intact %v, want %v %v", tc.name, row.Damaged, row.Intact, tc.damaged, tc.intact)
		}
	}
}
