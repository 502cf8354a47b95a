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
	o := ReaderOptions{}.withDefaults()
	var n int64
	res, err := scan(bytes.NewReader(full), int64(len(full)), &o, false, &n)
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
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.Offset >= preludeSize {
				t.Fatalf("flip at %d (prelude): %v", p, err)
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
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.Offset < s.off || ce.Offset >= s.off+s.size {
				t.Fatalf("flip at %d in %s: strict open %v", p, kindName(s.kind), err)
			}
		}
		rec, _ := recoverBytes(t, b)
		if len(rec) == 0 {
			t.Fatalf("empty recovery")
		}
	}
}
