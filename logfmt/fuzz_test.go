package logfmt

import (
	"bytes"
	"context"
	"reflect"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// fuzzLimits keep allocations small while fuzzing.
var fuzzLimits = ReaderOptions{MaxRecordSize: 1 << 20, MaxChunkSize: 1 << 20, MaxIndexSize: 1 << 20, MaxChannels: 64}

// addSeeds adds small logs (a few hundred bytes: the fuzzer's cost per
// execution and per minimization grows with the input) and named damage
// of them: a cut, a flipped byte, a zeroed tail, a decompression bomb.
func addSeeds(f *testing.F) {
	a, b := recs(1, 1000, 3), recs(2, 9000, 2)
	clean := file(prelude(), header(), channel(1, zstd1), channel(2, Compression{}), chunk(zstd1, a...), drops(map[uint16]uint64{1: 4}), chunk(Compression{}, b...))
	f.Add(clean)
	closed := withFooter(f, clean)
	f.Add(closed)
	f.Add(cut(clean, 7))
	f.Add(flip(clean, 100))
	f.Add(flip(closed, len(closed)-trailerSize-10))
	zeroed := append([]byte(nil), clean...)
	clear(zeroed[len(zeroed)-40:])
	f.Add(zeroed)
	f.Add(file(prelude(), header(), channel(1, zstd1), lyingChunk(a, bombFrame(1<<20), CompressionZstd, false)))
	f.Add(file(prelude(), header(), channel(1, lz4c), chunk(lz4c, a...)))
	f.Add(file(prelude(), header(), channel(1, lz4c), lyingChunk(a, lz4Bomb(1<<20), CompressionLZ4, false)))
	f.Add(file(prelude(), header()))
	f.Add(prelude())
	f.Add([]byte{})
}

func FuzzOpen(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, o := range []ReaderOptions{fuzzLimits, func() ReaderOptions { o := fuzzLimits; o.Tolerant = true; return o }()} {
			r, err := openBytes(data, o)
			if err != nil {
				continue
			}
			_ = r.Header()
			_ = r.Stats()
			_ = r.Chunks()
			it := r.Records(Filter{})
			for it.Next() {
				_ = it.Record()
			}
			r.Close()
		}
		rep, err := verify(bytes.NewReader(data), int64(len(data)), fuzzLimits)
		if err != nil || !rep.OK() {
			return
		}
		// One definition of intact: what verify calls sound, a reader that
		// read it all calls intact (Damage.Intact).
		r, err := openBytes(data, fuzzLimits)
		if err != nil {
			t.Fatalf("verify OK, open: %v", err)
		}
		defer r.Close()
		it := r.Records(Filter{})
		for it.Next() {
		}
		if d := r.Damage(); it.Err() != nil || !d.Intact() {
			t.Fatalf("verify OK, the reader: %v, %q", it.Err(), d.NotIntact())
		}
	})
}

// FuzzIterate is differential: on a file that verifies clean, the
// indexed reader and the linear scan must agree on channels, chunks,
// statistics and records, in full and metadata-only reads.
func FuzzIterate(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		type result struct {
			ch    []Channel
			ck    []ChunkInfo
			st    []ChannelStats
			recs  []Record
			metas []Record
		}
		read := func(o ReaderOptions) (*result, error) {
			r, err := openBytes(data, o)
			if err != nil {
				return nil, err
			}
			defer r.Close()
			res := &result{ch: normChannels(r.Channels()), ck: r.Chunks(), st: r.Stats()}
			for _, meta := range []bool{false, true} {
				it := r.Records(Filter{MetaOnly: meta})
				for it.Next() {
					rec := *it.Record()
					rec.Payload = bytes.Clone(rec.Payload)
					rec.Header = bytes.Clone(rec.Header)
					rec.PublisherID = bytes.Clone(rec.PublisherID)
					if meta {
						res.metas = append(res.metas, rec)
					} else {
						res.recs = append(res.recs, rec)
					}
				}
				if err := it.Err(); err != nil {
					return res, err
				}
			}
			return res, nil
		}
		idx, err1 := read(fuzzLimits)
		lin := fuzzLimits
		lin.IgnoreIndex = true
		scn, err2 := read(lin)
		v, err := verify(bytes.NewReader(data), int64(len(data)), fuzzLimits)
		if err != nil || !v.OK() {
			return
		}
		if err1 != nil || err2 != nil {
			t.Fatalf("file verifies clean but reading fails: indexed %v, scan %v", err1, err2)
		}
		if !reflect.DeepEqual(idx, scn) {
			t.Fatalf("indexed and linear reads differ")
		}
		if len(idx.recs) != len(idx.metas) || uint64(len(idx.recs)) != v.Records {
			t.Fatalf("full %d, meta-only %d, verify %d records", len(idx.recs), len(idx.metas), v.Records)
		}
		for i := range idx.recs {
			a, m := idx.recs[i], idx.metas[i]
			a.Payload, a.Header = nil, nil
			if !reflect.DeepEqual(a, m) {
				t.Fatalf("record %d: metadata path differs from full decode", i)
			}
		}
	})
}

// FuzzRecover checks that Recover never fails on a vrlog file, that its
// output verifies clean, and that it keeps every record a tolerant scan
// can read.
func FuzzRecover(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		rep, err := recoverTo(context.Background(), bytes.NewReader(data), int64(len(data)), &out, fuzzLimits, false, nil)
		if err != nil {
			if _, _, perr := readPrelude(bytes.NewReader(data), int64(len(data)), "x"); perr == nil {
				t.Fatalf("recover failed on a file with a valid prelude: %v", err)
			}
			return
		}
		v, err := verify(bytes.NewReader(out.Bytes()), int64(out.Len()), fuzzLimits)
		if err != nil || !v.OK() || v.Records != rep.RecordsKept {
			t.Fatalf("recovered copy does not verify: %v %+v (kept %d)", err, v, rep.RecordsKept)
		}
		o := fuzzLimits
		o.Tolerant, o.IgnoreIndex = true, true
		r, err := openBytes(data, o)
		if err != nil {
			return
		}
		defer r.Close()
		n := 0
		it := r.Records(Filter{MetaOnly: true})
		for it.Next() {
			n++
		}
		if uint64(n) < rep.RecordsKept {
			t.Fatalf("recover kept %d records, tolerant scan reads %d", rep.RecordsKept, n)
		}
	})
}

// FuzzDecompress feeds stored blocks and declared raw lengths to the
// bounded decompression: it must return exactly the raw length or an
// error, allocate no more than the raw length and one zstd block (a bomb
// never inflates), and agree with a plain zstd decode when it succeeds.
func FuzzDecompress(f *testing.F) {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
	crcEnc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	for _, raw := range [][]byte{[]byte("state state state"), bytes.Repeat([]byte("frame row "), 40), bytes.Repeat([]byte{7}, 300<<10)} {
		f.Add(enc.EncodeAll(raw, nil), uint32(len(raw)))
		f.Add(crcEnc.EncodeAll(raw, nil), uint32(len(raw)))
		f.Add(enc.EncodeAll(raw, nil), uint32(len(raw)-1))
	}
	f.Add(bombFrame(1<<20), uint32(8))
	f.Add(bombFrame(1<<20), uint32(1<<20))
	f.Add([]byte{}, uint32(0))
	enc.Close()
	crcEnc.Close()
	ref, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(fuzzLimits.MaxChunkSize)), zstd.WithDecoderConcurrency(1))
	if err != nil {
		f.Fatal(err)
	}
	defer ref.Close()
	l := loaderOf(nil, fuzzLimits)
	defer l.close()
	if _, err := l.decoder(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte, rawLen uint32) {
		rawLen %= uint32(fuzzLimits.MaxChunkSize) + 1 // the chunk's parser bounds it first
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := l.decompress(CompressionZstd, src, rawLen, nil)
		runtime.ReadMemStats(&after)
		// The output buffer, plus the decoder's own block buffers (one or
		// two blocks each, reused once grown).
		if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(rawLen)+zstdSlack+4*zstdMaxBlock {
			t.Fatalf("allocated %d bytes for a raw length of %d", grew, rawLen)
		}
		if err != nil {
			return
		}
		if len(out) != int(rawLen) {
			t.Fatalf("decompressed %d bytes, declared %d", len(out), rawLen)
		}
		if want, err := ref.DecodeAll(src, nil); err != nil || !bytes.Equal(want, out) {
			t.Fatalf("plain decode disagrees: %v", err)
		}
	})
}

// FuzzDecompressLZ4 is FuzzDecompress for LZ4 blocks: exactly the raw
// length or an error, no allocation beyond the raw length (an LZ4 bomb
// stops at the end of its buffer), and the plain decoder's bytes.
func FuzzDecompressLZ4(f *testing.F) {
	var c lz4.Compressor
	for _, raw := range [][]byte{[]byte("state state state state"), bytes.Repeat([]byte("frame row "), 40), bytes.Repeat([]byte{7}, 300<<10)} {
		b := make([]byte, lz4.CompressBlockBound(len(raw)))
		n, _ := c.CompressBlock(raw, b)
		f.Add(b[:n], uint32(len(raw)))
		f.Add(b[:n], uint32(len(raw)-1))
	}
	f.Add(lz4Bomb(1<<20), uint32(8))
	f.Add([]byte{}, uint32(0))
	f.Add([]byte{0xf0}, uint32(15))
	f.Fuzz(func(t *testing.T, src []byte, rawLen uint32) {
		rawLen %= uint32(fuzzLimits.MaxChunkSize) + 1
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := decompressLZ4(src, rawLen, nil)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(rawLen)+uint64(rawLen)/8+16<<10 { // with headroom, in size classes
			t.Fatalf("allocated %d bytes for a raw length of %d", grew, rawLen)
		}
		if err != nil {
			return
		}
		if len(out) != int(rawLen) {
			t.Fatalf("decompressed %d bytes, declared %d", len(out), rawLen)
		}
		want := make([]byte, int(rawLen)+64)
		if n, err := lz4.UncompressBlock(src, want); err != nil || !bytes.Equal(want[:n], out) {
			t.Fatalf("plain decode disagrees: %v", err)
		}
	})
}
