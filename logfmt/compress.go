// The compression worker pool: sealed chunks are compressed on worker
// goroutines (compressLoop), in parallel, then written in order by the
// writer stage (stage.go). job is the unit both queues carry.

package logfmt

import (
	"hash/crc32"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

type jobKind uint8

const (
	jobChunk jobKind = iota
	jobBlock
	jobBarrier
)

// job is a unit in the ordered queue: a chunk (compressed by a worker,
// then written), a small pre-encoded block, or a barrier.
type job struct {
	kind    jobKind
	b       chunkBuilder
	opened  time.Time
	done    chan struct{} // chunk: compression finished
	head    []byte        // block header + meta section
	info    ChunkInfo
	block   []byte       // jobBlock
	defines uint16       // jobBlock: the channel it defines, or 0
	written bool         // jobBlock: written already (stage only)
	sync    bool         // jobBarrier: sync after flushing
	tick    bool         // jobBarrier from the ticker: sync only if SyncInterval is due
	result  chan error   // jobBarrier: nil for fire-and-forget
	metaBuf []byte       // compressed record metadata, reused
	kept    []chunkGroup // jobSealed: the kept chunk's channels
}

func (j *job) reset() {
	j.b.reset()
	j.info = ChunkInfo{Channels: j.info.Channels[:0]}
}

type compressor struct {
	enc    [5]*zstd.Encoder
	lz4    lz4.Compressor
	pieces [][]byte // scratch for groupBuf.pieces
}

func (c *compressor) encoder(level int) *zstd.Encoder {
	if c.enc[level] == nil {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevel(level)),
			zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
		if err != nil {
			panic(err) // options are constants
		}
		c.enc[level] = e
	}
	return c.enc[level]
}

func (c *compressor) close() {
	for _, e := range c.enc {
		if e != nil {
			e.Close()
		}
	}
}

// compress stores src per comp into *buf and returns the bytes to write and
// their kind; incompressible data is stored raw.
func (c *compressor) compress(comp Compression, src []byte, buf *[]byte) ([]byte, CompressionKind) {
	switch {
	case len(src) == 0:
	case comp.Kind == CompressionZstd:
		*buf = c.encoder(comp.level()).EncodeAll(src, (*buf)[:0])
		if len(*buf) < len(src) {
			return *buf, CompressionZstd
		}
	case comp.Kind == CompressionLZ4:
		*buf = sized(*buf, lz4.CompressBlockBound(len(src)))
		// 0 bytes without an error: the block does not compress.
		if n, err := c.lz4.CompressBlock(src, *buf); err == nil && n > 0 && n < len(src) {
			return (*buf)[:n], CompressionLZ4
		}
	}
	return src, CompressionNone
}

func (w *Writer) compressLoop() {
	defer w.wg.Done()
	var c compressor
	defer c.close()
	for j := range w.work {
		c.sealChunk(j, *w.opts.MetaCompression)
		j.done <- struct{}{}
	}
}

// sealChunk compresses the payload blocks and the record metadata and
// builds the block header and meta section.
func (c *compressor) sealChunk(j *job, metaComp Compression) {
	b := &j.b
	var dataLen uint64
	j.info.Channels = j.info.Channels[:0]
	for _, g := range b.groups[:b.ng] {
		if len(g.refs) > 0 { // uncompressed with owned payloads
			g.out, g.outKind, g.outLen, g.crc = g.raw, CompressionNone, g.rawLen(), 0
			for _, p := range g.pieces(c.pieces[:0]) {
				g.crc = crc32.Update(g.crc, castagnoli, p)
			}
		} else {
			g.out, g.outKind = c.compress(g.comp, g.raw, &g.stored)
			g.outLen, g.crc = len(g.out), crc(g.out)
		}
		dataLen += uint64(g.outLen)
		j.info.Channels = append(j.info.Channels, ChunkChannel{Channel: g.ch, Records: g.n, RawBytes: uint32(g.rawLen()), StoredBytes: uint32(g.outLen)})
	}
	metaOut, metaKind := c.compress(metaComp, b.meta, &j.metaBuf)
	h := j.head[:0]
	h = append(h, make([]byte, blockHeaderSize)...)
	h = b.appendPrefix(h, metaKind, len(b.meta), len(metaOut))
	h = append(h, metaOut...)
	meta := h[blockHeaderSize:]
	var hb [blockHeaderSize]byte
	copy(h, appendBlockHeader(hb[:0], blockHeader{kind: kindChunk, metaLen: uint32(len(meta)), dataLen: uint32(dataLen), metaCRC: crc(meta)}))
	j.head = h
	j.info.MetaLen, j.info.DataLen, j.info.Records, j.info.Sorted = uint32(len(meta)), uint32(dataLen), b.n, b.sorted
	j.info.MinMonoNs, j.info.MaxMonoNs, j.info.MinWallNs, j.info.MaxWallNs = b.minMono, b.maxMono, b.minWall, b.maxWall
}
