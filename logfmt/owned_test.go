package logfmt

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
)

// ownedMix is a record sequence that exercises every WriteOwned case:
// large and small payloads on an uncompressed and a zstd channel, with
// and without headers, several large payloads in one chunk.
func ownedMix() []Record {
	rng := rand.New(rand.NewPCG(7, 8))
	var recs []Record
	for i := 0; i < 60; i++ {
		ch := uint16(1 + i%2) // 1: none, 2: zstd
		r := genRecord(rng, ch, i, int64(1e9+i*1e6), 256)
		switch i % 5 {
		case 0, 3:
			r.Payload = frameLike(ZeroCopyMin+rng.IntN(3*ZeroCopyMin), uint64(i))
		case 1:
			r.Payload = frameLike(ZeroCopyMin, uint64(i)) // exactly the threshold
		}
		if i%3 == 0 {
			r.Header = []byte("frame-header-48")
		}
		recs = append(recs, r)
	}
	return recs
}

// writeMix writes recs to a fresh file with Write or WriteOwned and
// returns the file's bytes; with WriteOwned it scribbles over every
// payload once it is released, as a caller recycling buffers would.
func writeMix(t *testing.T, recs []Record, owned bool) []byte {
	t.Helper()
	path := tempPath(t, "owned.vrlog")
	w, err := Create(path, WriterOptions{ChunkSize: 1 << 20, FlushInterval: -1, CreatedAt: fixedTime, Concurrency: 2, MaxChunksInFlight: 2})
	if err != nil {
		t.Fatal(err)
	}
	w.AddChannel(Channel{Name: "cam", Transport: TransportIceoryx2})
	w.AddChannel(Channel{Name: "state", Transport: TransportZenoh, Compression: zstd1})
	var pending, released atomic.Int64
	for i := range recs {
		r := recs[i]
		if !owned {
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
			if i == 30 {
				w.Flush()
			}
			continue
		}
		r.Payload = append([]byte(nil), recs[i].Payload...)
		var calls atomic.Int32
		p := r.Payload
		pending.Add(1)
		err := w.WriteOwned(&r, func() {
			if calls.Add(1) != 1 {
				t.Errorf("record %d: release called twice", i)
			}
			for k := range p {
				p[k] = 0xEE
			}
			released.Add(1)
		})
		if err != nil {
			t.Fatal(err)
		}
		if small := len(p) < ZeroCopyMin || r.Channel == 2; small && calls.Load() != 1 {
			t.Fatalf("record %d (%d B, channel %d): copied payload not released before WriteOwned returned", i, len(p), r.Channel)
		}
		if i == 30 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if released.Load() != pending.Load() {
				t.Fatalf("after Flush: %d of %d payloads released", released.Load(), pending.Load())
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if owned && released.Load() != int64(len(recs)) {
		t.Fatalf("after Close: %d of %d payloads released", released.Load(), len(recs))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWriteOwned: WriteOwned writes the very same bytes as Write, reads
// back exactly, and releases every payload once, after it is written.
func TestWriteOwned(t *testing.T) {
	recs := ownedMix()
	copied := writeMix(t, recs, false)
	owned := writeMix(t, recs, true)
	if !bytes.Equal(copied, owned) {
		t.Fatalf("WriteOwned file (%d B) differs from Write file (%d B)", len(owned), len(copied))
	}
	path := tempPath(t, "owned-read.vrlog")
	writeFile(t, path, owned)
	got := readAll(t, mustOpen(t, owned), Filter{})
	if len(got) != len(recs) {
		t.Fatalf("read %d records, wrote %d", len(got), len(recs))
	}
	for i := range got {
		checkRecord(t, &got[i], &recs[i], false)
	}
	if rep, err := Verify(path, ReaderOptions{}); err != nil || !rep.OK() || rep.Records != uint64(len(recs)) {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestWriteOwnedFullDisk: when the file fails, owned payloads are still
// released exactly once, and WriteOwned after the failure releases at
// once and returns the error.
func TestWriteOwnedFullDisk(t *testing.T) {
	recs := ownedMix()
	for _, limit := range []int{0, 100, 5000, 300 << 10, 1 << 20} {
		d := &fullDisk{limit: limit}
		w, err := NewWriter(d, WriterOptions{ChunkSize: 256 << 10, FlushInterval: -1, CreatedAt: fixedTime, Concurrency: 2})
		if err != nil {
			continue // the header did not fit
		}
		w.AddChannel(Channel{Name: "cam", Transport: TransportIceoryx2})
		w.AddChannel(Channel{Name: "state", Transport: TransportZenoh, Compression: zstd1})
		var released, calls atomic.Int64
		var sawErr error
		for i := range recs {
			r := recs[i]
			calls.Add(1)
			if err := w.WriteOwned(&r, func() { released.Add(1) }); err != nil {
				sawErr = err
				break
			}
		}
		if err := w.Close(); sawErr == nil {
			sawErr = err
		}
		if !errors.Is(sawErr, syscall.ENOSPC) {
			t.Fatalf("limit %d: error %v, want ENOSPC", limit, sawErr)
		}
		if released.Load() != calls.Load() {
			t.Fatalf("limit %d: %d of %d payloads released", limit, released.Load(), calls.Load())
		}
	}
}
