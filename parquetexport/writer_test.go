package parquetexport

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/mcapexport"
)

// export writes every channel of log into out with opts and returns the
// reader's records by channel id, or the first error of Write.
func export(t testing.TB, log, out string, opts Options) (*Writer, map[uint16][]logfmt.Record, error) {
	t.Helper()
	r, err := logfmt.Open(log, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sel, err := r.Select(logfmt.Select{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Create(out, opts)
	if err != nil {
		t.Fatal(err)
	}
	var full []uint16
	for _, ch := range sel.Channels {
		if err := w.AddChannel(ch); err != nil {
			t.Fatal(err)
		}
		if NeedsPayload(&ch, opts) {
			full = append(full, ch.ID)
		}
	}
	got := map[uint16][]logfmt.Record{}
	it := mcapexport.NewRecords(r, sel, full)
	for it.Next() {
		rec := *it.Record()
		rec.Payload = append([]byte(nil), rec.Payload...)
		rec.Header = append([]byte(nil), rec.Header...)
		rec.PublisherID = append([]byte(nil), rec.PublisherID...)
		got[rec.Channel] = append(got[rec.Channel], rec)
		if err := w.Write(it.Record()); err != nil {
			return w, got, err
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return w, got, nil
}

// readDir reads a channel's part files in order.
func readDir(t testing.TB, dir string) []arrow.Table {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "part-*.parquet"))
	var out []arrow.Table
	for _, f := range files {
		pf, err := file.OpenParquetFile(f, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := pf.MetaData().KeyValueMetadata().FindValue("vrlog.records.schema"); got == nil || *got != Schema {
			t.Fatalf("%s: schema %v", f, got)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := fr.ReadTable(context.Background())
		pf.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tb.Release)
		out = append(out, tb)
	}
	return out
}

func int64s(tb arrow.Table, name string) []int64 {
	var out []int64
	for _, c := range tb.Column(tb.Schema().FieldIndices(name)[0]).Data().Chunks() {
		out = append(out, c.(*array.Int64).Int64Values()...)
	}
	return out
}

func float64s(tb arrow.Table, name string) []float64 {
	var out []float64
	for _, c := range tb.Column(tb.Schema().FieldIndices(name)[0]).Data().Chunks() {
		out = append(out, c.(*array.Float64).Float64Values()...)
	}
	return out
}

// The synthetic session (states with gaps and a restart, frames, clock
// probes, stray non-state payloads, a raw channel) split into files of
// 100 rows: each channel's files hold its records in order with the
// exact stamps, and the decoded state fields bit for bit.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "s.vrlog")
	if _, err := synth.WriteFile(log, synth.Default(), logfmt.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	w, recs, err := export(t, log, out, Options{RowsPerFile: 100, EpochNs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	r, _ := logfmt.Open(log, logfmt.ReaderOptions{})
	defer r.Close()
	undecodable := 0
	for _, ch := range r.Channels() {
		tables := readDir(t, filepath.Join(out, DirName(ch.Name)))
		want := recs[ch.ID]
		if n := (len(want) + 99) / 100; len(tables) != max(n, 1) {
			t.Fatalf("%s: %d files for %d records", ch.Name, len(tables), len(want))
		}
		var wall []int64
		for _, tb := range tables {
			wall = append(wall, int64s(tb, "recv_wall_ns")...)
		}
		if len(wall) != len(want) {
			t.Fatalf("%s: %d rows, want %d", ch.Name, len(wall), len(want))
		}
		for i := range want {
			if wall[i] != want[i].RecvWallNs {
				t.Fatalf("%s row %d: recv_wall_ns %d, want %d", ch.Name, i, wall[i], want[i].RecvWallNs)
			}
		}
		if ch.Schema != codec.SchemaState {
			continue
		}
		i := 0
		for _, tb := range tables {
			dec := tb.Column(tb.Schema().FieldIndices("decoded")[0]).Data().Chunks()[0].(*array.Boolean)
			px := float64s(tb, "position_x")
			el := tb.Column(tb.Schema().FieldIndices("elapsed")[0]).Data().Chunks()[0].(*array.Float64)
			for j := range int(tb.NumRows()) {
				s, err := codec.DecodeState(want[i].Payload, 1)
				if (err == nil) != dec.Value(j) {
					t.Fatalf("state %d: decoded %v, decode error %v", i, dec.Value(j), err)
				}
				if err != nil {
					undecodable++
				} else if math.Float64bits(px[j]) != math.Float64bits(s.Position.X) || el.Value(j) != s.Elapsed {
					t.Fatalf("state %d: position_x %v elapsed %v, want %v %v", i, px[j], el.Value(j), s.Position.X, s.Elapsed)
				}
				i++
			}
		}
	}
	if undecodable != synth.Default().GarbageStates {
		t.Fatalf("%d undecodable states, want %d", undecodable, synth.Default().GarbageStates)
	}
}

// A failed export leaves nothing: Abort removes the files written, the
// channel directories and the output directory it created; an existing
// file of the same name is refused without Force and kept.
func TestAbortAndExisting(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "s.vrlog")
	cfg := synth.Default()
	cfg.Duration = 3 * time.Second
	if _, err := synth.WriteFile(log, cfg, logfmt.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	w, _, err := export(t, log, out, Options{RowsPerFile: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after Abort: %v", err)
	}
	if w, _, err = export(t, log, out, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(out, DirName(synth.StateKey(cfg.Robot)), "part-00000.parquet")
	before, _ := os.ReadFile(state)
	w, _, err = export(t, log, out, Options{RowsPerFile: 5})
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("export over existing files: %v", err)
	}
	w.Abort()
	if after, _ := os.ReadFile(state); string(after) != string(before) {
		t.Fatal("an existing file was changed")
	}
	if w, _, err = export(t, log, out, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}
