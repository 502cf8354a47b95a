package logfmt

import (
	"bytes"
	"errors"
	"testing"
)

// TestBitFlips flips one bit at every offset of a small log and checks
// that the damage is found and named with the right byte offset, that a
// tolerant read keeps every other chunk, and that nothing panics.
func TestBitFlips(t *testing.T) {
	full, want := smallLog(t)
	res, err := scan(loaderOf(full, ReaderOptions{}), preludeSize, false)
	if err != nil {
		t.Fatal(err)
	}
	spanAt := func(p int64) span {
		for _, s := range res.blockSpans {
			if p >= s.off && p < s.off+s.size {
				return s
			}
		}
		return span{}
	}
	chunkAt := func(p int64) *ChunkInfo {
		for i := range res.chunks {
			c := &res.chunks[i]
			if p >= c.Offset && p < c.Offset+c.Size() {
				return c
			}
		}
		return nil
	}
	step := 1
	if testing.Short() {
		step = 5
	}
	size := int64(len(full))
	for p := int64(0); p < size; p += int64(step) {
		b := flip(full, int(p))
		r, err := openBytes(b, ReaderOptions{})
		if p < preludeSize {
			// The log behind a damaged prelude is intact: read it, warn.
			if err != nil || len(r.Warnings()) != 1 || r.Warnings()[0].Offset >= preludeSize {
				t.Fatalf("flip at %d (prelude): open %v, warnings %v", p, err, r.Warnings())
			}
			if got := readAll(t, r, Filter{}); len(got) != len(want) {
				t.Fatalf("flip at %d (prelude): read %d of %d records", p, len(got), len(want))
			}
			r.Close()
			if _, rep := recoverBytes(t, b); rep.RecordsKept != uint64(len(want)) || len(rep.Rebuilt) != 1 || len(rep.Dropped) != 0 {
				t.Fatalf("flip at %d (prelude): recover %+v", p, rep)
			}
			continue
		}
		var readErr error
		if err == nil {
			it := r.Records(Filter{})
			for it.Next() {
			}
			readErr = it.Err()
			r.Close()
		}
		v, verr := verify(bytes.NewReader(b), size, ReaderOptions{})
		if verr != nil {
			t.Fatalf("flip at %d: verify: %v", p, verr)
		}
		if p >= size-trailerSize {
			if v.TornTail == nil && len(v.Problems) == 0 {
				t.Fatalf("flip at %d (trailer) not detected", p)
			}
			if err != nil || readErr != nil {
				t.Fatalf("flip at %d (trailer): strict read failed: %v %v", p, err, readErr)
			}
			continue
		}
		s := spanAt(p)
		found := false
		for _, pr := range v.Problems {
			found = found || (pr.Offset >= s.off && pr.Offset < s.off+s.size)
		}
		if !found {
			t.Fatalf("flip at %d in %s at %d: verify problems %v torn %v", p, kindName(s.kind), s.off, v.Problems, v.TornTail)
		}
		switch s.kind {
		case kindChunk:
			c := chunkAt(p)
			wantOff := c.Offset
			if p >= c.Offset+blockHeaderSize {
				wantOff = c.Offset + blockHeaderSize
			}
			if data := c.Offset + blockHeaderSize + int64(c.MetaLen); p >= data {
				wantOff = data
				for _, cc := range c.Channels {
					if p < wantOff+int64(cc.StoredBytes) {
						break
					}
					wantOff += int64(cc.StoredBytes)
				}
			}
			var ce *CorruptionError
			if !errors.As(readErr, &ce) || ce.Offset != wantOff {
				t.Fatalf("flip at %d in chunk at %d: strict read error %v, want offset %d", p, c.Offset, readErr, wantOff)
			}
			got := monos(t, b, ReaderOptions{Tolerant: true})
			if len(got) != len(want)-int(c.Records) {
				t.Fatalf("flip at %d: tolerant read kept %d of %d records", p, len(got), len(want))
			}
		case kindFooter, kindHeader:
			// They hold no record: a strict read goes on with a warning
			// naming the block, and recover rebuilds them.
			if err != nil || readErr != nil {
				t.Fatalf("flip at %d in %s: strict read %v %v", p, kindName(s.kind), err, readErr)
			}
			ws := r.Warnings()
			if len(ws) != 1 || ws[0].Offset < s.off || ws[0].Offset >= s.off+s.size {
				t.Fatalf("flip at %d in %s at %d: warnings %v", p, kindName(s.kind), s.off, ws)
			}
			if got := monos(t, b, ReaderOptions{}); len(got) != len(want) {
				t.Fatalf("flip at %d in %s: strict read kept %d of %d records", p, kindName(s.kind), len(got), len(want))
			}
		}
		rec, rep := recoverBytes(t, b)
		if len(rec) == 0 {
			t.Fatalf("empty recovery")
		}
		if (s.kind == kindFooter || s.kind == kindHeader) && (rep.RecordsKept != uint64(len(want)) || len(rep.Rebuilt) != 1 || len(rep.Dropped) != 0) {
			t.Fatalf("flip at %d in %s: recover kept %d of %d records, rebuilt %v, dropped %v", p, kindName(s.kind), rep.RecordsKept, len(want), rep.Rebuilt, rep.Dropped)
		}
	}
}
