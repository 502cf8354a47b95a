package files

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder/output"
)

// --split-duration 2s makes files that hold at most 2 s of receive time
// each: split by the records' stamps, not by a once-a-second tick (which
// let a 2 s file grow to 3 s).
func TestSplitDurationBoundsEachFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "split.vrlog")
	const split = 2 * time.Second
	o, err := New(Options{Path: out, SplitDuration: split, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	def := &logfmt.Channel{Name: "a", Transport: logfmt.TransportZenoh, Topic: "a"}
	if err := o.Define(def); err != nil {
		t.Fatal(err)
	}
	const start, step = int64(5e9), int64(30e6) // 30 ms apart for 7 s
	for mono := start; mono < start+7e9; mono += step {
		rec := &logfmt.Record{Channel: 1, RecvMonoNs: mono, RecvWallNs: 1e18 + mono, Payload: []byte("x")}
		if err := o.Write(output.Entry{Record: rec}); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	files := o.Progress().Files
	if len(files) != 4 {
		t.Fatalf("%d files for 7 s split by 2 s, want 4: %v", len(files), files)
	}
	for _, p := range files {
		r, err := logfmt.Open(p, logfmt.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var lo, hi int64
		it := r.Records(logfmt.Filter{})
		for n := 0; it.Next(); n++ {
			m := it.Record().RecvMonoNs
			if n == 0 || m < lo {
				lo = m
			}
			hi = max(hi, m)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if span := time.Duration(hi - lo); span >= split {
			t.Errorf("%s spans %v of receive time, --split-duration %v", filepath.Base(p), span, split)
		}
	}
}

// A control-plane file name is one plain name in the output's directory:
// nothing else is ever created.
func TestExpandNames(t *testing.T) {
	now := time.Date(2026, 12, 7, 13, 4, 5, 0, time.UTC)
	for _, tc := range []struct{ name, want, bad string }{
		{"run", "run.vrlog", ""},
		{"run.vrlog", "run.vrlog", ""},
		{"run-{time}", "run-20261207T130405Z.vrlog", ""},
		{"r{n}-{time}", "r3-20261207T130405Z.vrlog", ""},
		{"../x", "", "path separator"},
		{"a/b", "", "path separator"},
		{`a\b`, "", "path separator"},
		{"/etc/x", "", "path separator"},
		{"..", "", "hidden"},
		{".hidden", "", "hidden"},
		{"a\x00b", "", "NUL"},
		{"run-{host}", "", "unknown field"},
		{"run-{time", "", "without }"},
		{"run}", "", "not a field"},
		{strings.Repeat("x", 201), "", "longer than"},
	} {
		got, err := expand(tc.name, 3, now)
		switch {
		case tc.bad == "" && (err != nil || got != tc.want):
			t.Errorf("%q: %q, %v; want %q", tc.name, got, err, tc.want)
		case tc.bad != "" && (err == nil || !errors.Is(err, ErrName) || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%q: %q, %v; want an ErrName saying %q", tc.name, got, err, tc.bad)
		}
	}
}

// FuzzExpand: whatever the name, the result is one plain file name.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"run", "run-{time}", "{n}", "../x", "a/b", ".x", "{", "}", "{time}{n}{x}", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := expand(name, 1, time.Unix(0, 0))
		if err != nil {
			return
		}
		if filepath.Base(got) != got || strings.HasPrefix(got, ".") || !strings.HasSuffix(got, ".vrlog") || strings.ContainsAny(got, "/\\\x00{}") {
			t.Fatalf("%q expanded to %q", name, got)
		}
	})
}

// An idle output writes nothing; start, split and stop make the files
// they say, each record in one of them, and refuse what does not apply.
func TestStartSplitStop(t *testing.T) {
	dir := t.TempDir()
	o, err := New(Options{Path: filepath.Join(dir, "run.vrlog"), FlushInterval: -1, Idle: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Define(&logfmt.Channel{Name: "a", Transport: logfmt.TransportZenoh, Topic: "a"}); err != nil {
		t.Fatal(err)
	}
	mono := int64(1e9)
	write := func(n int) {
		for range n {
			mono += 1e6
			released := false
			if err := o.Write(output.Entry{Record: &logfmt.Record{Channel: 1, RecvMonoNs: mono, RecvWallNs: 1e18 + mono, Payload: []byte("x")},
				Release: func() { released = true }}); err != nil {
				t.Fatal(err)
			}
			if on, _ := o.Recording(); !on && !released {
				t.Fatal("an idle output kept a record")
			}
		}
	}
	write(5)
	if _, err := o.Stop(); !errors.Is(err, ErrState) {
		t.Fatalf("stop while idle: %v", err)
	}
	if _, _, err := o.Split(); !errors.Is(err, ErrState) {
		t.Fatalf("split while idle: %v", err)
	}
	if p, err := o.Start("", ""); err != nil || p != filepath.Join(dir, "run.vrlog") {
		t.Fatalf("start: %q, %v", p, err)
	}
	if _, err := o.Start("", ""); !errors.Is(err, ErrState) {
		t.Fatalf("start while recording: %v", err)
	}
	write(3)
	next, done, err := o.Split()
	if err != nil || next != filepath.Join(dir, "run_001.vrlog") {
		t.Fatalf("split: %q, %v", next, err)
	}
	if f := <-done; f.Err != nil || f.Records != 3 || f.Path != filepath.Join(dir, "run.vrlog") {
		t.Fatalf("split finished %+v", f)
	}
	if _, _, err := o.Split(); !errors.Is(err, ErrState) {
		t.Fatalf("a split with nothing written since the last: %v", err)
	}
	write(4)
	done, err = o.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if f := <-done; f.Err != nil || f.Records != 4 || f.Path != next {
		t.Fatalf("stop finished %+v", f)
	}
	write(2) // idle again: handed back
	if p, err := o.Start("", "second"); err != nil || p != filepath.Join(dir, "run-2.vrlog") {
		t.Fatalf("a second start: %q, %v", p, err)
	}
	if _, err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Start("run", ""); !errors.Is(err, ErrExists) {
		t.Fatalf("start into an existing file: %v", err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range o.Finished() {
		names = append(names, filepath.Base(f.Path))
	}
	if fmt.Sprint(names) != "[run.vrlog run_001.vrlog run-2.vrlog]" {
		t.Fatalf("finished %v", names)
	}
}

// The first file is the path given, whatever its name (a FIFO, a device,
// a name without .vrlog); its splits are BASE_NNN.vrlog.
func TestPathAsGiven(t *testing.T) {
	dir := t.TempDir()
	o, err := New(Options{Path: filepath.Join(dir, "out"), FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if on, cur := o.Recording(); !on || cur != filepath.Join(dir, "out") {
		t.Fatalf("recording %v into %q", on, cur)
	}
	o.Define(&logfmt.Channel{Name: "a", Transport: logfmt.TransportZenoh, Topic: "a"})
	o.Write(output.Entry{Record: &logfmt.Record{Channel: 1, RecvMonoNs: 1, Payload: []byte("x")}})
	if next, _, err := o.Split(); err != nil || next != filepath.Join(dir, "out_001.vrlog") {
		t.Fatalf("split: %q, %v", next, err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
}

// A start without a name takes the -o file while it is free, also after
// recordings started by name.
func TestDefaultNameAfterNamedStarts(t *testing.T) {
	dir := t.TempDir()
	o, err := New(Options{Path: filepath.Join(dir, "cam.vrlog"), FlushInterval: -1, Idle: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ name, path string }{{"first", "first.vrlog"}, {"", "cam.vrlog"}, {"", "cam-3.vrlog"}} {
		p, err := o.Start(want.name, "")
		if err != nil || p != filepath.Join(dir, want.path) {
			t.Fatalf("start %q: %q, %v; want %s", want.name, p, err, want.path)
		}
		done, err := o.Stop()
		if err != nil {
			t.Fatal(err)
		}
		<-done
	}
	o.Close()
}
