package logfmt

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
)

func openBytes(b []byte, o ReaderOptions) (*Reader, error) {
	return NewReader(bytes.NewReader(b), int64(len(b)), o)
}

func recoverBytes(t testing.TB, b []byte) ([]byte, *RecoverReport) {
	t.Helper()
	var out bytes.Buffer
	rep, err := recoverTo(context.Background(), bytes.NewReader(b), int64(len(b)), &out, ReaderOptions{}, false)
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	v, err := verify(bytes.NewReader(out.Bytes()), int64(out.Len()), ReaderOptions{})
	if err != nil || !v.OK() || v.Records != rep.RecordsKept {
		t.Fatalf("recovered copy fails verification: %v %+v", err, v)
	}
	return out.Bytes(), rep
}

func monos(t testing.TB, b []byte, o ReaderOptions) []int64 {
	t.Helper()
	r, err := openBytes(b, o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer r.Close()
	var out []int64
	for _, rec := range readAll(t, r, Filter{}) {
		out = append(out, rec.RecvMonoNs)
	}
	return out
}

func monosOf(rs ...[]Record) []int64 {
	var out []int64
	for _, r := range rs {
		for _, x := range r {
			out = append(out, x.RecvMonoNs)
		}
	}
	return out
}

func TestCorruptionTable(t *testing.T) {
	a, b, c := recs(1, 1000, 5), recs(1, 100000, 4), recs(2, 200000, 3)
	ca, cb, cc := chunk(zstd1, a...), chunk(Compression{}, b...), chunk(zstd1, c...)
	base := file(prelude(), header(), channel(1, zstd1), channel(2, zstd1), ca)
	off := func(parts ...[]byte) int64 { return int64(len(file(parts...))) }
	offB := off(base)
	badLen := append([]byte(nil), cb...)
	le.PutUint32(badLen[8:], 1<<31) // meta length 2 GiB, header CRC fixed up
	le.PutUint32(badLen[20:], crc(badLen[:20]))

	for _, tc := range []struct {
		name     string
		file     []byte
		strict   error // expected error of a strict open + full read (nil: none)
		offset   int64 // expected CorruptionError offset, when strict != nil
		survive  []int64
		tornTail bool
	}{
		{"clean", withFooter(t, file(base, cb, cc)), nil, 0, monosOf(a, b, c), false},
		{"no_footer", file(base, cb, cc), nil, 0, monosOf(a, b, c), false},
		{"torn_last_chunk", file(base, cb, cut(cc, 5)), nil, 0, monosOf(a, b), true},
		{"torn_block_header", file(base, cb, cc[:10]), nil, 0, monosOf(a, b), true},
		{"torn_footer", cut(withFooter(t, file(base, cb, cc)), 30), nil, 0, monosOf(a, b, c), true},
		{"zero_filled_tail", file(base, cb, make([]byte, 4096)), nil, 0, monosOf(a, b), true},
		{"bad_checksum_meta", file(base, flip(cb, 40), cc), ErrBadCRC, offB + blockHeaderSize, monosOf(a, c), false},
		{"bad_checksum_payload", withFooter(t, file(base, flip(cb, len(cb)-3), cc)), ErrBadCRC, -1, monosOf(a, c), false},
		{"bad_length", file(base, flip(cb, 9), cc), ErrBadCRC, offB, monosOf(a, c), false},
		{"length_over_limit", file(base, badLen, cc), ErrTooLarge, offB, monosOf(a, c), false},
		{"bad_sync", file(base, flip(cb, 0), cc), ErrBadMagic, offB, monosOf(a, c), false},
		{"garbage_between_chunks", file(base, []byte("garbage!"), cb, cc), ErrBadMagic, offB, monosOf(a, b, c), false},
		{"lost_channel_block", file(prelude(), header(), channel(1, zstd1), flip(channel(2, zstd1), 30), ca, cb, cc), ErrBadCRC, -1, monosOf(a, b, c), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Strict read.
			r, err := openBytes(tc.file, ReaderOptions{})
			if err == nil {
				it := r.Records(Filter{})
				for it.Next() {
				}
				err = it.Err()
				if tc.tornTail != (r.TornTail() != nil) {
					t.Errorf("torn tail = %v, want %v", r.TornTail(), tc.tornTail)
				}
				if r.TornTail() != nil && !errors.Is(r.TornTail(), ErrTornTail) {
					t.Errorf("torn tail error %v", r.TornTail())
				}
				r.Close()
			}
			if tc.strict == nil && err != nil {
				t.Fatalf("strict read: %v", err)
			}
			if tc.strict != nil {
				var ce *CorruptionError
				if !errors.Is(err, tc.strict) || !errors.As(err, &ce) {
					t.Fatalf("strict read: %v, want %v", err, tc.strict)
				}
				if tc.offset >= 0 && ce.Offset != tc.offset {
					t.Fatalf("offset %d, want %d (%v)", ce.Offset, tc.offset, ce)
				}
			}
			// Tolerant read keeps the rest.
			got := monos(t, tc.file, ReaderOptions{Tolerant: true})
			if !equalInt64(got, tc.survive) {
				t.Fatalf("tolerant read %v, want %v", got, tc.survive)
			}
			// Recover keeps the same, and its copy reads strictly.
			rec, rep := recoverBytes(t, tc.file)
			if got := monos(t, rec, ReaderOptions{}); !equalInt64(got, tc.survive) {
				t.Fatalf("recovered %v, want %v", got, tc.survive)
			}
			if (rep.TornTail != nil) != tc.tornTail {
				t.Fatalf("recover torn tail %v", rep.TornTail)
			}
			if tc.strict != nil && len(rep.Dropped) == 0 {
				t.Fatalf("recover reported no damage")
			}
		})
	}
	t.Run("future_version", func(t *testing.T) {
		_, err := openBytes(file(preludeVersion(2), header(), channel(1, zstd1), ca), ReaderOptions{})
		if !errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("foreign_file", func(t *testing.T) {
		_, err := openBytes([]byte("PK\x03\x04 this is a zip file, not a log"), ReaderOptions{})
		if !errors.Is(err, ErrBadMagic) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("missing_channel_definition", func(t *testing.T) {
		f := file(prelude(), header(), channel(1, zstd1), ca, cc) // cc is channel 2, never defined
		r, err := openBytes(f, ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if len(r.Channels()) != 2 || r.Channels()[1].Meta["vrlog.placeholder"] == "" {
			t.Fatalf("channels %+v", r.Channels())
		}
		_, rep := recoverBytes(t, f)
		if len(rep.Placeholders) != 1 || rep.Placeholders[0] != 2 {
			t.Fatalf("placeholders %v", rep.Placeholders)
		}
	})
}

func equalInt64(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// smallLog writes a small multi-chunk log and returns its bytes and
// the records in read order.
func smallLog(t testing.TB) ([]byte, []Record) {
	path := tempPath(t, "small.vrlog")
	w, err := Create(path, WriterOptions{ChunkSize: 600, FlushInterval: -1, CreatedAt: fixedTime, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := w.AddChannel(Channel{Name: "state", Transport: TransportZenoh, Topic: "vr/r1/state", Schema: "vrsdk.State/1", Compression: zstd1})
	fr, _ := w.AddChannel(Channel{Name: "cam", Transport: TransportIceoryx2, Topic: "cam0", Schema: "vrsdk.Frame/1"})
	var want []Record
	buf := make([]byte, 0, 200)
	for i := 0; i < 40; i++ {
		r := Record{Channel: st, RecvMonoNs: int64(1e9 + i*1e6), RecvWallNs: int64(1.7e18 + i*1e6), HasStamp: true,
			CaptureNs: int64(1.7e18 + i*1e6 - 3e4), Seq: uint64(i), PublisherID: []byte("zid-1"), Payload: stateLike(buf, uint64(i), int64(i))[:60]}
		if i%7 == 3 {
			r.Channel = fr
			r.Header = []byte("frame-header")
			r.Payload = frameLike(150, uint64(i))
		}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
		r.Payload = append([]byte(nil), r.Payload...)
		want = append(want, r)
		if i == 20 {
			w.AddDrops(st, 2)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, want
}

// TestTruncateEveryOffset cuts a small multi-chunk file at every byte and
// checks that Recover keeps exactly the chunks that are complete, and
// that a plain Open reads the same records.
func TestTruncateEveryOffset(t *testing.T) {
	full, want := smallLog(t)
	r, err := openBytes(full, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	chunks := r.Chunks()
	r.Close()
	if len(chunks) < 5 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	step := 1
	if testing.Short() {
		step = 7
	}
	for n := 0; n <= len(full); n += step {
		b := full[:n]
		var wantChunks int
		var wantRecs uint32
		for _, c := range chunks {
			if c.Offset+c.Size() <= int64(n) {
				wantChunks++
				wantRecs += c.Records
			}
		}
		if n < preludeSize {
			if _, err := recoverTo(context.Background(), bytes.NewReader(b), int64(n), io.Discard, ReaderOptions{}, false); !errors.Is(err, ErrTornTail) {
				t.Fatalf("cut at %d, inside the prelude: recover %v, want nothing to recover (ErrTornTail)", n, err)
			}
			continue
		}
		rec, rep := recoverBytes(t, b)
		if rep.ChunksKept != wantChunks || rep.RecordsKept != uint64(wantRecs) {
			t.Fatalf("cut at %d: kept %d chunks/%d records, want %d/%d", n, rep.ChunksKept, rep.RecordsKept, wantChunks, wantRecs)
		}
		if len(rep.Dropped) != 0 {
			t.Fatalf("cut at %d: torn tail reported as corruption: %v", n, rep.Dropped[0])
		}
		got := readAll(t, mustOpen(t, rec), Filter{})
		for i := range got {
			checkRecord(t, &got[i], &want[i], false)
		}
		if n >= preludeSize {
			rr, err := openBytes(b, ReaderOptions{})
			if err != nil {
				t.Fatalf("cut at %d: open: %v", n, err)
			}
			if got := readAll(t, rr, Filter{MetaOnly: true}); len(got) != int(wantRecs) {
				t.Fatalf("cut at %d: open read %d records, want %d", n, len(got), wantRecs)
			}
			rr.Close()
		}
	}
	// The full path through files, on a few cuts.
	for _, n := range []int{len(full) - 1, len(full) * 2 / 3, len(full) / 3} {
		src := tempPath(t, "cut.vrlog")
		writeFile(t, src, full[:n])
		dst := src + ".recovered"
		rep, err := Recover(context.Background(), src, dst, RecoverOptions{})
		if err != nil {
			t.Fatalf("Recover: %v", err)
		}
		if rep.TornTail == nil || !rep.Verified.OK() {
			t.Fatalf("report %+v", rep)
		}
		if _, err := Recover(context.Background(), src, dst, RecoverOptions{}); !errors.Is(err, ErrExists) {
			t.Fatalf("Recover over an existing file: %v", err)
		}
	}
}

func mustOpen(t testing.TB, b []byte) *Reader {
	t.Helper()
	r, err := openBytes(b, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
