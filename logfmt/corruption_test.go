package logfmt

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func openBytes(b []byte, o ReaderOptions) (*Reader, error) {
	return NewReader(bytes.NewReader(b), int64(len(b)), o)
}

func recoverBytes(t testing.TB, b []byte) ([]byte, *RecoverReport) {
	t.Helper()
	var out bytes.Buffer
	rep, err := recoverTo(context.Background(), bytes.NewReader(b), int64(len(b)), &out, ReaderOptions{}, false, nil)
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

// craftedDir, when set, receives each file of TestCorruptionTable (the
// memory check of every verb, bench/crafted-memory.sh, runs on them).
var craftedDir = flag.String("crafted", "", "also write TestCorruptionTable's files into `DIR`")

// TestCorruptionTable reads each named damage with the strict reader, the
// tolerant reader, Verify and Recover, and says what must survive each.
func TestCorruptionTable(t *testing.T) {
	a, b, c := recs(1, 1000, 5), recs(1, 100000, 4), recs(2, 200000, 3)
	ca, cb, cc := chunk(zstd1, a...), chunk(Compression{}, b...), chunk(zstd1, c...)
	base := file(prelude(), header(), channel(1, zstd1), channel(2, zstd1), ca)
	off := func(parts ...[]byte) int64 { return int64(len(file(parts...))) }
	offB, offC := off(base), off(base, cb)
	badLen := append([]byte(nil), cb...)
	le.PutUint32(badLen[8:], 1<<31) // meta length 2 GiB, header CRC fixed up
	le.PutUint32(badLen[20:], crc(badLen[:20]))
	closed := withFooter(t, file(base, cb, cc))
	footerAt := int(offC) + len(cc)
	// Power loss: the last chunk's header and meta section reached the
	// disk, its data and the page after it (the file had grown) did not.
	zeroed := file(base, cb, cc, make([]byte, 4096))
	clear(zeroed[int(offC)+blockHeaderSize+int(le.Uint32(cc[8:])) : int(offC)+len(cc)])
	// A write cut short: the last chunk's bytes end inside its meta
	// section and zeros fill the rest of the block.
	short := file(base, cb, cc)
	clear(short[int(offC)+blockHeaderSize+int(le.Uint32(cc[8:]))/2:])
	// Decompression bombs: 32 KiB of zstd that inflate to 1 GiB, in a
	// chunk whose directory declares the true, small raw length.
	bomb := bombFrame(1 << 30)
	payloadBomb, metaBomb := lyingChunk(b, bomb, CompressionZstd, false), lyingChunk(b, bomb, CompressionZstd, true)
	// And LZ4 blocks of 4 KiB that decode to 1 GiB.
	lz4b := lz4Bomb(1 << 30)
	lz4PayloadBomb, lz4MetaBomb := lyingChunk(b, lz4b, CompressionLZ4, false), lyingChunk(b, lz4b, CompressionLZ4, true)
	metaAt := offB + blockHeaderSize + chunkPrefixSize + groupEntrySize

	all, ab, ac := monosOf(a, b, c), monosOf(a, b), monosOf(a, c)
	for _, tc := range []struct {
		name string
		file []byte
		fifo bool // a FIFO with no writer instead of a file
		// strict is the error a strict open + full read ends with (nil:
		// none), at offset when >= 0; torn and warned say whether the
		// strict reader reports a torn tail and warnings.
		strict        error
		offset        int64
		torn, warned  bool
		keepStrict    []int64 // records the strict reader returns
		keepTolerant  []int64 // records the tolerant reader returns
		keepRecovered []int64 // records Recover's copy holds
	}{
		{name: "clean", file: closed, keepStrict: all, keepTolerant: all, keepRecovered: all},
		{name: "no_footer", file: file(base, cb, cc), keepStrict: all, keepTolerant: all, keepRecovered: all},
		{name: "torn_last_chunk", file: file(base, cb, cut(cc, 5)), torn: true, keepStrict: ab, keepTolerant: ab, keepRecovered: ab},
		{name: "torn_block_header", file: file(base, cb, cc[:10]), torn: true, keepStrict: ab, keepTolerant: ab, keepRecovered: ab},
		{name: "torn_footer", file: cut(closed, 30), torn: true, keepStrict: all, keepTolerant: all, keepRecovered: all},
		{name: "zero_filled_tail", file: file(base, cb, make([]byte, 4096)), torn: true, keepStrict: ab, keepTolerant: ab, keepRecovered: ab},
		{name: "zeroed_tail", file: zeroed, torn: true, keepStrict: ab, keepTolerant: ab, keepRecovered: ab},
		{name: "short_written_tail", file: short, torn: true, keepStrict: ab, keepTolerant: ab, keepRecovered: ab},
		{name: "bad_checksum_meta", file: file(base, flip(cb, 40), cc), strict: ErrBadCRC, offset: offB + blockHeaderSize, keepTolerant: ac, keepRecovered: ac},
		{name: "bad_checksum_payload", file: withFooter(t, file(base, flip(cb, len(cb)-3), cc)), strict: ErrBadCRC, offset: -1, keepStrict: monosOf(a), keepTolerant: ac, keepRecovered: ac},
		{name: "bad_length", file: file(base, flip(cb, 9), cc), strict: ErrBadCRC, offset: offB, keepTolerant: ac, keepRecovered: ac},
		{name: "length_over_limit", file: file(base, badLen, cc), strict: ErrTooLarge, offset: offB, keepTolerant: ac, keepRecovered: ac},
		{name: "bad_sync", file: file(base, flip(cb, 0), cc), strict: ErrBadMagic, offset: offB, keepTolerant: ac, keepRecovered: ac},
		{name: "garbage_between_chunks", file: file(base, []byte("garbage!"), cb, cc), strict: ErrBadMagic, offset: offB, keepTolerant: all, keepRecovered: all},
		{name: "lost_channel_block", file: file(prelude(), header(), channel(1, zstd1), flip(channel(2, zstd1), 30), ca, cb, cc), strict: ErrBadCRC, offset: -1, keepTolerant: all, keepRecovered: all},
		{name: "lying_raw_length_payload", file: withFooter(t, file(base, payloadBomb, cc)), strict: ErrMalformed, offset: offB + int64(len(payloadBomb)-len(bomb)), keepStrict: monosOf(a), keepTolerant: ac, keepRecovered: ac},
		{name: "lying_raw_length_metadata", file: withFooter(t, file(base, metaBomb, cc)), strict: ErrMalformed, offset: metaAt, keepStrict: monosOf(a), keepTolerant: ac, keepRecovered: ac},
		{name: "lz4_lying_raw_length_payload", file: withFooter(t, file(base, lz4PayloadBomb, cc)), strict: ErrMalformed, offset: offB + int64(len(lz4PayloadBomb)-len(lz4b)), keepStrict: monosOf(a), keepTolerant: ac, keepRecovered: ac},
		{name: "lz4_lying_raw_length_metadata", file: withFooter(t, file(base, lz4MetaBomb, cc)), strict: ErrMalformed, offset: metaAt, keepStrict: monosOf(a), keepTolerant: ac, keepRecovered: ac},
		{name: "flipped_magic", file: flip(closed, 3), warned: true, keepStrict: all, keepTolerant: all, keepRecovered: all},
		{name: "flipped_header_block", file: flip(closed, preludeSize+blockHeaderSize+3), warned: true, keepStrict: all, keepTolerant: all, keepRecovered: all},
		{name: "flipped_header_length_no_footer", file: flip(file(base, cb, cc), preludeSize+9), warned: true, keepStrict: all, keepTolerant: all, keepRecovered: all},
		{name: "flipped_footer", file: flip(closed, footerAt+blockHeaderSize+5), warned: true, keepStrict: all, keepTolerant: all, keepRecovered: all},
		{name: "fifo", fifo: true, strict: ErrNotRegular},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.name+".vrlog")
			if tc.fifo {
				if err := syscall.Mkfifo(path, 0o600); err != nil {
					t.Fatal(err)
				}
				checkFIFO(t, path)
				return
			}
			writeFile(t, path, tc.file)
			if *craftedDir != "" {
				writeFile(t, filepath.Join(*craftedDir, tc.name+".vrlog"), tc.file)
			}
			// Strict read: up to the damage, then its error.
			got, r, err := readMonos(path, ReaderOptions{})
			if !equalInt64(got, tc.keepStrict) {
				t.Errorf("strict read %v, want %v", got, tc.keepStrict)
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
			if r != nil {
				if tc.torn != (r.TornTail() != nil) || (r.TornTail() != nil && !errors.Is(r.TornTail(), ErrTornTail)) {
					t.Errorf("torn tail = %v, want %v", r.TornTail(), tc.torn)
				}
				if tc.warned != (len(r.Warnings()) > 0) {
					t.Errorf("warnings %v, want some: %v", r.Warnings(), tc.warned)
				}
			}
			// Tolerant read keeps the rest.
			if got, _, err := readMonos(path, ReaderOptions{Tolerant: true}); err != nil || !equalInt64(got, tc.keepTolerant) {
				t.Fatalf("tolerant read %v (%v), want %v", got, err, tc.keepTolerant)
			}
			// Verify tells a torn tail from damage.
			v, err := Verify(path, ReaderOptions{})
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			if (v.TornTail != nil) != tc.torn || (len(v.Problems) > 0) != (tc.strict != nil || tc.warned) {
				t.Fatalf("verify: torn tail %v, problems %v", v.TornTail, v.Problems)
			}
			// Recover keeps what the tolerant reader reads, and says how.
			dst := filepath.Join(dir, "recovered.vrlog")
			rep, err := Recover(context.Background(), path, dst, RecoverOptions{})
			if err != nil {
				t.Fatalf("recover: %v", err)
			}
			if got, _, err := readMonos(dst, ReaderOptions{}); err != nil || !equalInt64(got, tc.keepRecovered) {
				t.Fatalf("recovered %v (%v), want %v", got, err, tc.keepRecovered)
			}
			if (rep.TornTail != nil) != tc.torn || (len(rep.Dropped) > 0) != (tc.strict != nil) || (len(rep.Rebuilt) > 0) != tc.warned {
				t.Fatalf("recover: torn tail %v, dropped %v, rebuilt %v", rep.TornTail, rep.Dropped, rep.Rebuilt)
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
		foreign := []byte("PK\x03\x04 this is a zip file, not a log")
		if _, err := openBytes(foreign, ReaderOptions{}); !errors.Is(err, ErrBadMagic) {
			t.Fatalf("open: %v", err)
		}
		for _, force := range []bool{false, true} {
			if _, err := recoverTo(context.Background(), bytes.NewReader(foreign), int64(len(foreign)), io.Discard, ReaderOptions{}, force, nil); !errors.Is(err, ErrBadMagic) {
				t.Fatalf("recover (force %v): %v", force, err)
			}
		}
	})
	t.Run("zero_filled_file", func(t *testing.T) {
		// Created, grown, and nothing of it reached the disk: torn at 0.
		z := make([]byte, 8192)
		if _, err := openBytes(z, ReaderOptions{}); !errors.Is(err, ErrTornTail) {
			t.Fatalf("open: %v, want a torn tail", err)
		}
		if _, err := recoverTo(context.Background(), bytes.NewReader(z), int64(len(z)), io.Discard, ReaderOptions{}, true, nil); !errors.Is(err, ErrTornTail) {
			t.Fatalf("recover: %v, want nothing to recover", err)
		}
	})
	t.Run("log_behind_foreign_bytes", func(t *testing.T) {
		// Without its prelude and behind other bytes, a log does not look
		// like one: Recover refuses it, and with Force finds every chunk.
		f := file([]byte("some other header, then the blocks: "), closed[preludeSize:])
		if _, err := recoverTo(context.Background(), bytes.NewReader(f), int64(len(f)), io.Discard, ReaderOptions{}, false, nil); !errors.Is(err, ErrBadMagic) {
			t.Fatalf("recover without force: %v", err)
		}
		var out bytes.Buffer
		rep, err := recoverTo(context.Background(), bytes.NewReader(f), int64(len(f)), &out, ReaderOptions{}, true, nil)
		if err != nil || len(rep.Rebuilt) != 1 || len(rep.Dropped) != 0 {
			t.Fatalf("recover with force: %v %+v", err, rep)
		}
		if got := monos(t, out.Bytes(), ReaderOptions{}); !equalInt64(got, all) {
			t.Fatalf("recovered %v", got)
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

// readMonos opens path and reads every record, returning their receive
// times up to the first error, the reader (closed) and that error.
func readMonos(path string, o ReaderOptions) ([]int64, *Reader, error) {
	r, err := Open(path, o)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var out []int64
	it := r.Records(Filter{})
	for it.Next() {
		out = append(out, it.Record().RecvMonoNs)
	}
	return out, r, it.Err()
}

// checkFIFO checks that every entry point refuses a FIFO that has no
// writer at once, instead of blocking in open(2).
func checkFIFO(t *testing.T, path string) {
	done := make(chan error, 4)
	go func() {
		_, err := Open(path, ReaderOptions{})
		done <- err
		_, err = Open(path, ReaderOptions{Tolerant: true})
		done <- err
		_, err = Verify(path, ReaderOptions{})
		done <- err
		_, err = Recover(context.Background(), path, path+".recovered", RecoverOptions{})
		done <- err
	}()
	for i := 0; i < 4; i++ {
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "save the stream to a file") {
				t.Fatalf("entry point %d: %v, want ErrNotRegular saying what to do", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("entry point %d blocks on a FIFO without a writer", i)
		}
	}
	if _, err := os.Stat(path + ".recovered"); !os.IsNotExist(err) {
		t.Fatalf("recover left an output: %v", err)
	}
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
			if _, err := recoverTo(context.Background(), bytes.NewReader(b), int64(n), io.Discard, ReaderOptions{}, false, nil); !errors.Is(err, ErrTornTail) {
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

// One definition of intact: a log that ends at a block boundary without
// its footer (a recorder killed between two chunks) has no torn tail and
// nothing damaged, yet it is not intact; with its footer it is.
func TestIntactNeedsTheFooter(t *testing.T) {
	body := file(prelude(), header(), channel(1, Compression{}), chunk(Compression{}, recs(1, 1000, 5)...))
	for _, c := range []struct {
		name   string
		data   []byte
		intact bool
		why    string
	}{
		{"finished", withFooter(t, body), true, ""},
		{"killed at a chunk boundary", body, false, "no footer: the log was not closed"},
		{"torn", cut(body, 3), false, "torn tail at byte"},
	} {
		r, err := NewReader(bytes.NewReader(c.data), int64(len(c.data)), ReaderOptions{Name: "k9.vrlog"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		d := r.Damage()
		if d.Intact() != c.intact || r.Finished() != c.intact || !strings.Contains(d.NotIntact(), c.why) {
			t.Errorf("%s: intact %v finished %v (%q), want %v", c.name, d.Intact(), r.Finished(), d.NotIntact(), c.intact)
		}
		if lines := d.Lines(); (len(lines) == 0) != c.intact {
			t.Errorf("%s: lines %q", c.name, lines)
		}
		rep, err := verify(bytes.NewReader(c.data), int64(len(c.data)), ReaderOptions{Name: "k9.vrlog"})
		if err != nil || rep.OK() != c.intact {
			t.Errorf("%s: verify OK %v (%v), want %v", c.name, rep.OK(), err, c.intact)
		}
	}
}

// A corrupt chunk met by two passes of one tolerant reader (replay
// --loop 2, or a second read) is one finding, said once.
func TestSkippedChunkBookedOnce(t *testing.T) {
	head := file(prelude(), header(), channel(1, Compression{}), chunk(Compression{}, recs(1, 1000, 5)...))
	mid := chunk(Compression{}, recs(1, 2000, 5)...)
	data := withFooter(t, file(head, mid, chunk(Compression{}, recs(1, 3000, 5)...)))
	data = flip(data, len(head)+blockHeaderSize+2) // the index holds the chunk; reading it fails
	r, err := NewReader(bytes.NewReader(data), int64(len(data)), ReaderOptions{Tolerant: true, Name: "x.vrlog"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := readAll(t, r, Filter{}); len(got) != 10 {
			t.Fatalf("%d records", len(got))
		}
	}
	if s := r.SkippedChunks(); len(s) != 1 {
		t.Fatalf("skipped %v", s)
	}
}

// A damaged payload block costs its own records, not its chunk's: recover
// keeps the records of the chunk's sound blocks (it dropped the whole
// chunk: 4 damaged bytes in one frame block cost 60 records, ~50 of them
// states whose own block was intact).
func TestRecoverSalvagesPerBlock(t *testing.T) {
	states := recs(1, 100_000, 40)
	frames := recs(2, 100_500, 10)
	mixed := chunk(zstd1, append(append([]Record{}, states...), frames...)...) // group 1 states, then group 2 frames
	head := file(prelude(), header(), channel(1, zstd1), channel(2, Compression{}), chunk(zstd1, recs(1, 1000, 5)...))
	body := file(head, mixed, chunk(zstd1, recs(1, 900_000, 5)...))
	data := withFooter(t, body)
	data = flip(data, len(head)+len(mixed)-3) // a byte of the frames' block, the chunk's last
	out, rep := recoverBytes(t, data)
	if len(rep.Salvaged) != 1 || rep.Salvaged[0].Kept != 40 || rep.Salvaged[0].Lost != 10 || rep.Salvaged[0].Offset != int64(len(head)) {
		t.Fatalf("salvaged %+v", rep.Salvaged)
	}
	if d := rep.Salvaged[0].Damaged; rep.RecordsKept != 50 || rep.ChunksKept != 3 || len(rep.Dropped) != 0 || len(d) != 1 || !strings.Contains(d[0].Error(), "payload block of channel 2") {
		t.Fatalf("kept %d records in %d chunks, dropped %v, damaged %v", rep.RecordsKept, rep.ChunksKept, rep.Dropped, d)
	}
	r, err := openBytes(out, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := readAll(t, r, Filter{Channels: []uint16{1}})
	if len(got) != 50 {
		t.Fatalf("%d states read back", len(got))
	}
	for i := range states {
		checkRecord(t, &got[5+i], &states[i], false) // every state of the damaged chunk, as written
	}
	// Damage to the chunk's record metadata leaves nothing to salvage by:
	// the chunk is dropped whole, as before.
	meta := flip(withFooter(t, body), len(head)+blockHeaderSize+60)
	if _, rep := recoverBytes(t, meta); len(rep.Salvaged) != 0 || rep.RecordsKept != 10 {
		t.Fatalf("metadata damage: salvaged %+v, kept %d", rep.Salvaged, rep.RecordsKept)
	}
}
