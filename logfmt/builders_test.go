package logfmt

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// Byte-level builders for fixtures: a corruption test reads like the
// corruption, e.g. file(prelude(), header(), channel(1), chunk(recs...), flip(chunk(...), 40)).

func file(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func prelude() []byte { return appendPrelude(nil) }

func preludeVersion(major uint16) []byte {
	p := appendPrelude(nil)
	le.PutUint16(p[8:], major)
	le.PutUint32(p[12:], crc(p[:12]))
	return p
}

func header() []byte {
	return appendBlock(nil, kindHeader, appendHeaderBody(nil, Header{CreatedWallNs: fixedTime.UnixNano(), Metadata: map[string]string{"note": "fixture"}}))
}

func channel(id uint16, comp Compression) []byte {
	c := Channel{ID: id, Name: "ch" + string(rune('0'+id)), Transport: TransportZenoh, Topic: "vr/r1/state", Schema: "vrsdk.State/1", Compression: comp}
	return appendBlock(nil, kindChannel, appendChannelBody(nil, &c))
}

func drops(m map[uint16]uint64) []byte { return appendBlock(nil, kindDrops, appendDropsBody(nil, m)) }

var (
	zstd1 = Compression{Kind: CompressionZstd, Level: 1}
	lz4c  = Compression{Kind: CompressionLZ4}
)

// chunk encodes records as one chunk exactly as the writer does.
func chunk(comp Compression, recs ...Record) []byte {
	j := &job{kind: jobChunk}
	j.reset()
	gi := map[uint16]int{}
	for i := range recs {
		g, ok := gi[recs[i].Channel]
		if !ok {
			g = j.b.addGroup(recs[i].Channel, comp)
			gi[recs[i].Channel] = g
		}
		j.b.add(g, &recs[i], nil)
	}
	var c compressor
	defer c.close()
	c.sealChunk(j, zstd1)
	out := append([]byte(nil), j.head...)
	for _, g := range j.b.groups[:j.b.ng] {
		out = append(out, g.out...)
	}
	return out
}

// loaderOf reads b with the options o (defaults filled in).
func loaderOf(b []byte, o ReaderOptions) *chunkLoader {
	return &chunkLoader{ra: bytes.NewReader(b), size: int64(len(b)), opts: o.withDefaults()}
}

// footerFor indexes the blocks of a fixture and returns footer + trailer.
func footerFor(t testing.TB, f []byte) []byte {
	t.Helper()
	res, err := scan(loaderOf(f, ReaderOptions{}), preludeSize, false)
	if err != nil {
		t.Fatalf("footerFor: %v", err)
	}
	channels, stats := res.index()
	ft := &footer{channels: channels, chunks: res.chunks, stats: stats}
	b := appendBlock(nil, kindFooter, appendFooterBody(nil, ft))
	return appendTrailer(b, int64(len(f)))
}

// withFooter appends footerFor(f) to f.
func withFooter(t testing.TB, f []byte) []byte { return append(f, footerFor(t, f)...) }

func flip(b []byte, off int) []byte {
	c := append([]byte(nil), b...)
	c[off] ^= 0x10
	return c
}

func cut(b []byte, n int) []byte { return append([]byte(nil), b[:len(b)-n]...) }

// recs returns n small records on channel ch starting at mono.
func recs(ch uint16, mono int64, n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = Record{Channel: ch, RecvMonoNs: mono + int64(i)*1000, RecvWallNs: 1e18 + mono + int64(i)*1000,
			HasStamp: true, CaptureNs: 1e18 + mono + int64(i)*1000 - 500, Seq: uint64(mono/1000) + uint64(i),
			Payload: bytes.Repeat([]byte{byte(ch), byte(i)}, 20+i)}
	}
	return out
}

// bombFrame is a zstd frame of RLE blocks that inflates to n bytes (a
// multiple of 128 KiB), 4 bytes per 128 KiB, and declares no content
// size, as the klauspost encoder's small frames do: a decompression bomb.
func bombFrame(n int) []byte {
	f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38} // magic; no size, no checksum; 128 KiB window
	for left := n; left > 0; left -= zstdMaxBlock {
		h := uint32(zstdMaxBlock)<<3 | 1<<1 // RLE block of 128 KiB
		if left <= zstdMaxBlock {
			h |= 1 // last
		}
		f = append(f, byte(h), byte(h>>8), byte(h>>16), 'A')
	}
	return f
}

// lz4Bomb is an LZ4 block of a few KiB that decodes to n bytes.
func lz4Bomb(n int) []byte {
	src := bytes.Repeat([]byte{'A'}, n)
	dst := make([]byte, lz4.CompressBlockBound(n))
	var c lz4.Compressor
	k, err := c.CompressBlock(src, dst)
	if err != nil || k == 0 {
		panic(fmt.Sprint("lz4 bomb: ", k, err))
	}
	return dst[:k]
}

// lyingChunk encodes recs (of one channel) as the writer does, then stores
// frame as the chunk's record metadata (meta) or as its payload block,
// with kind (zstd or lz4) as the stored kind: the directory declares the
// true raw length, the frame decodes to whatever it decodes to. Every CRC
// is right: only the lie is left.
func lyingChunk(recs []Record, frame []byte, kind CompressionKind, meta bool) []byte {
	var bld chunkBuilder
	bld.reset()
	g := bld.addGroup(recs[0].Channel, zstd1)
	for i := range recs {
		bld.add(g, &recs[i], nil)
	}
	gb := bld.groups[g]
	data, metaKind, metaStored := gb.raw, CompressionNone, bld.meta
	gb.outKind = CompressionNone
	if meta {
		metaKind, metaStored = kind, frame
	} else {
		data, gb.outKind = frame, kind
	}
	gb.outLen, gb.crc = len(data), crc(data)
	m := bld.appendPrefix(nil, metaKind, len(bld.meta), len(metaStored))
	m = append(m, metaStored...)
	out := appendBlockHeader(nil, blockHeader{kind: kindChunk, metaLen: uint32(len(m)), dataLen: uint32(len(data)), metaCRC: crc(m)})
	return file(out, m, data)
}
