package logfmt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
)

// workersLog writes a log of many small in-order chunks over three
// channels and returns its path.
func workersLog(t *testing.T) string {
	t.Helper()
	path := tempPath(t, "w.vrlog")
	w, err := Create(path, WriterOptions{ChunkSize: 8 << 10, Sync: SyncNone, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint16
	for c := range 3 {
		id, err := w.AddChannel(Channel{Name: string(rune('a' + c)), Transport: TransportZenoh, Compression: Compression{Kind: CompressionZstd}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 20_000 {
		r := genRecord(rng, ids[i%3], i, int64(i)*1000, 100)
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// iterate reads every record f selects, and the error that ended it.
func iterate(t *testing.T, path string, opts ReaderOptions, f Filter) ([]Record, error, []string) {
	t.Helper()
	r, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []Record
	it := r.Records(f)
	for it.Next() {
		rec := *it.Record()
		rec.PublisherID = bytes.Clone(rec.PublisherID)
		rec.Header, rec.Payload = bytes.Clone(rec.Header), bytes.Clone(rec.Payload)
		out = append(out, rec)
	}
	var skipped []string
	for _, ce := range r.SkippedChunks() {
		skipped = append(skipped, ce.Error())
	}
	return out, it.Err(), skipped
}

// With workers loading chunks ahead, an iteration returns the records
// and errors it returns without: every record, selections, a damaged
// chunk (strict: the records before it, then the error; tolerant: skipped).
func TestWorkersIterateAlike(t *testing.T) {
	path := workersLog(t)
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.chunks) < 20 {
		t.Fatalf("%d chunks: too few to load ahead", len(r.chunks))
	}
	mid := r.chunks[r.order[len(r.order)/2]]
	r.Close()
	b, _ := os.ReadFile(path)
	damaged := tempPath(t, "damaged.vrlog")
	b[mid.Offset+blockHeaderSize+int64(mid.MetaLen)+3] ^= 0x40 // a payload block: only full reads see it
	b2 := bytes.Clone(b)
	b2[mid.Offset+blockHeaderSize+10] ^= 0x40 // the meta section: every read sees it
	os.WriteFile(damaged, b, 0o644)
	damagedMeta := tempPath(t, "damaged-meta.vrlog")
	os.WriteFile(damagedMeta, b2, 0o644)

	for _, c := range []struct {
		name string
		path string
		opts ReaderOptions
		f    Filter
	}{
		{"all", path, ReaderOptions{}, Filter{}},
		{"meta", path, ReaderOptions{}, Filter{MetaOnly: true}},
		{"channel", path, ReaderOptions{}, Filter{Channels: []uint16{2}}},
		{"window", path, ReaderOptions{}, Filter{Start: 3_000_000, End: 15_000_000}},
		{"damaged payload", damaged, ReaderOptions{}, Filter{}},
		{"damaged payload, meta", damaged, ReaderOptions{}, Filter{MetaOnly: true}},
		{"damaged payload, tolerant", damaged, ReaderOptions{Tolerant: true}, Filter{}},
		{"damaged meta", damagedMeta, ReaderOptions{}, Filter{MetaOnly: true}},
		{"damaged meta, tolerant", damagedMeta, ReaderOptions{Tolerant: true}, Filter{MetaOnly: true}},
	} {
		want, wantErr, wantSkipped := iterate(t, c.path, c.opts, c.f)
		for _, n := range []int{1, 2, 3} {
			f := c.f
			f.Workers = n
			got, gotErr, gotSkipped := iterate(t, c.path, c.opts, f)
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotSkipped, wantSkipped) || (gotErr == nil) != (wantErr == nil) ||
				(gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("%s, %d workers: %d records, err %v, skipped %q; without: %d records, err %v, skipped %q",
					c.name, n, len(got), gotErr, gotSkipped, len(want), wantErr, wantSkipped)
			}
		}
		damagedRead := c.path == damagedMeta || (c.path == damaged && !c.f.MetaOnly)
		if len(want) == 0 || damagedRead != (wantErr != nil || len(wantSkipped) > 0) {
			t.Fatalf("%s: %d records, err %v, skipped %q", c.name, len(want), wantErr, wantSkipped)
		}
	}
}

// An iteration closed early stops its workers (goleak checks at exit).
func TestWorkersCloseEarly(t *testing.T) {
	r, err := Open(workersLog(t), ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	it := r.Records(Filter{Workers: 2, MetaOnly: true})
	for i := 0; i < 10 && it.Next(); i++ {
	}
	seq := it.Record().RecvMonoNs
	it.Close()
	if it.Next() || it.Record().RecvMonoNs != seq {
		t.Fatal("Next after Close")
	}
}

// The read-ahead holds about aheadBytes of chunks: dozens of small ones,
// never fewer than one per worker and one more, never more than
// maxAheadChunks.
func TestReadAheadBudget(t *testing.T) {
	rs := realStates(20_000, 3)
	for _, tc := range []struct {
		chunk    int
		min, max int
	}{{16 << 10, maxAheadChunks, maxAheadChunks}, {256 << 10, 8, 32}, {4 << 20, 3, 3}} {
		p := fmt.Sprintf("%s/c%d.vrlog", t.TempDir(), tc.chunk)
		if err := writeVrlog(p, rs, true, tc.chunk); err != nil {
			t.Fatal(err)
		}
		r, err := Open(p, ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		it := r.Records(Filter{})
		payloads := it.aheadChunks(2)
		if payloads < tc.min || payloads > tc.max {
			t.Errorf("chunks of %d bytes: %d ahead, want %d..%d", tc.chunk, payloads, tc.min, tc.max)
		}
		it.Close()
		// Record metadata alone: at least as many fit the budget.
		it = r.Records(Filter{MetaOnly: true})
		if n := it.aheadChunks(2); n < payloads || n > maxAheadChunks {
			t.Errorf("chunks of %d bytes, metadata only: %d ahead, payloads %d", tc.chunk, n, payloads)
		}
		it.Close()
		r.Close()
	}
}
