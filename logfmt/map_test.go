package logfmt

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// mapLog writes a log with a raw channel (frames) and a zstd one.
func mapLog(t *testing.T) (string, []Record) {
	t.Helper()
	path := tempPath(t, "map.vrlog")
	w, err := Create(path, WriterOptions{Sync: SyncNone, FlushInterval: -1, ChunkSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := w.AddChannel(Channel{Name: "cam", Topic: "cam", Transport: TransportIceoryx2})
	if err != nil {
		t.Fatal(err)
	}
	z, err := w.AddChannel(Channel{Name: "state", Topic: "state", Transport: TransportZenoh, Compression: Compression{Kind: CompressionZstd}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var want []Record
	for i := range 200 {
		r := genRecord(rng, z, i, int64(i)*1000, 300)
		if i%10 == 0 {
			r = genRecord(rng, raw, i, int64(i)*1000, 0)
			r.Payload = frameLike(100_000, uint64(i))
		}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, want
}

// A mapped reader reads the same records as one that reads; raw blocks'
// payloads are views of the map (Mapped), stable until Close, the zstd
// ones' are not.
func TestMapReadsTheSame(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Map maps on Linux only")
	}
	path, want := mapLog(t)
	r, err := Open(path, ReaderOptions{Map: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	it := r.Records(Filter{Workers: 1})
	defer it.Close()
	var kept [][]byte // raw payloads, compared again after the iteration
	i := 0
	for it.Next() {
		rec := it.Record()
		checkRecord(t, rec, &want[i], false)
		raw := rec.Channel == want[0].Channel
		if got := r.Mapped(rec.Payload); got != raw {
			t.Fatalf("record %d (channel %d): Mapped %v", i, rec.Channel, got)
		}
		if raw {
			kept = append(kept, rec.Payload)
		}
		i++
	}
	if err := it.Err(); err != nil || i != len(want) {
		t.Fatalf("%d records of %d: %v", i, len(want), err)
	}
	for k, p := range kept {
		if !bytes.Equal(p, want[10*k].Payload) {
			t.Fatalf("raw payload %d changed after its record", k)
		}
	}
	plain, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if plain.Mapped(want[0].Payload) || r.Mapped(want[0].Payload) {
		t.Fatal("Mapped true for bytes outside a map")
	}
	if got := readAll(t, plain, Filter{}); len(got) != len(want) {
		t.Fatalf("plain reader: %d records", len(got))
	}
}

// A flipped byte in a mapped raw block is the same CRC error as read.
func TestMapChecksRawBlocks(t *testing.T) {
	path, _ := mapLog(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r0, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ci := r0.Chunks()[0]
	r0.Close()
	at := int(ci.Offset) + blockHeaderSize + int(ci.MetaLen) + 10 // in the first payload block: a frame
	writeFile(t, path, flip(b, at))
	for _, m := range []bool{false, true} {
		r, err := Open(path, ReaderOptions{Map: m})
		if err != nil {
			t.Fatal(err)
		}
		it := r.Records(Filter{})
		for it.Next() {
		}
		var ce *CorruptionError
		if err := it.Err(); !errors.As(err, &ce) || !errors.Is(err, ErrBadCRC) {
			t.Errorf("Map %v: %v, want a CRC error", m, err)
		}
		it.Close()
		r.Close()
	}
}
