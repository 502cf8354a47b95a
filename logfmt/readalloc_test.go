package logfmt

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// decompress hands back its buffer with the whole capacity, so that a
// block a few bytes larger than the last (chunks differ by a record or
// two) is decoded into the same memory: it used to hand back the buffer
// cut to the last block's size, and every chunk of a log then allocated
// and cleared a new buffer (the 110 KiB chunks of the flush timer:
// 240 KB a chunk).
func TestDecompressKeepsCapacity(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	l := &chunkLoader{opts: ReaderOptions{}.withDefaults()}
	defer l.close()
	var buf []byte
	var first *byte
	for i, n := range []int{100_000, 99_000, 99_800, 99_990} {
		raw := imageLike(n, uint64(i))
		out, err := l.decompress(CompressionZstd, enc.EncodeAll(raw, nil), uint32(n), buf)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, raw) {
			t.Fatalf("block %d: decoded bytes differ", i)
		}
		if first == nil {
			first = &out[0]
		} else if &out[0] != first {
			t.Fatalf("block %d of %d bytes: decoded into new memory after blocks of up to 100,000 (cap %d)", i, n, cap(buf))
		}
		buf = out
	}
}

// Iterating a log of many chunks allocates per iteration, not per chunk.
func TestReadAllocsPerChunk(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector: its sync.Pool drops items at random")
	}
	rs := realStates(20_000, 3)
	for _, lz4 := range []bool{false, true} {
		p := fmt.Sprintf("%s/small-lz4-%v.vrlog", t.TempDir(), lz4)
		if err := writeVrlog(p, rs, lz4, 16<<10); err != nil {
			t.Fatal(err)
		}
		readAllocs(t, p, len(rs))
	}
}

func readAllocs(t *testing.T, p string, records int) {
	r, err := Open(p, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	chunks := len(r.Chunks())
	if chunks < 200 {
		t.Fatalf("%d chunks", chunks)
	}
	for _, f := range []Filter{{}, {MetaOnly: true}} {
		allocs := testing.AllocsPerRun(3, func() {
			it := r.Records(f)
			n := 0
			for it.Next() {
				n++
			}
			if it.Err() != nil || n != records {
				t.Fatal(it.Err(), n)
			}
		})
		if allocs > 40 {
			t.Errorf("%s, %+v: %.0f allocations to read %d chunks", p, f, allocs, chunks)
		}
	}
}
