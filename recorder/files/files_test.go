package files

import (
	"path/filepath"
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
