package logfmt

import (
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Decompression of stored blocks (docs/log-format.md §6.3), bounded by
// the raw length the chunk declares. An LZ4 block is decoded into a
// buffer of exactly that length, which the decoder never writes past. For
// zstd, that length is trusted only as far
// as the zstd frame agrees with it, and the decoder never produces more
// than one zstd block beyond it: a block that inflates further (a
// decompression bomb) is refused before it exists.

const (
	// zstdMaxBlock is the most one zstd block decodes to (the format's
	// Block_Maximum_Size).
	zstdMaxBlock = 128 << 10
	// zstdSlack is the output room beyond the raw length: the block
	// that crosses it, and the decoder's over-allocation for fast copies.
	zstdSlack = zstdMaxBlock + 64
)

// checkZstdFrame checks, without decoding, that src is exactly one zstd
// frame that declares rawLen bytes of content (a frame of less than 256
// bytes may omit it) and whose blocks can produce that much: the 3-byte block headers are walked, raw and RLE
// blocks count their exact size, compressed ones at most zstdMaxBlock.
// So a raw length is refused before anything is allocated for it when
// the frame cannot produce it.
func checkZstdFrame(src []byte, rawLen uint32) error {
	var h zstd.Header
	if err := h.Decode(src); err != nil {
		return fmt.Errorf("zstd frame header: %v", err)
	}
	switch {
	case h.Skippable:
		return errors.New("skippable zstd frame")
	case !h.HasFCS && rawLen >= 256:
		// Encoders omit the size only of small frames (klauspost's below
		// 256 bytes); a large frame without it could only be bounded by
		// the output buffer.
		return fmt.Errorf("zstd frame of %d bytes declares no content size", rawLen)
	case h.HasFCS && h.FrameContentSize != uint64(rawLen):
		return fmt.Errorf("zstd frame declares %d bytes, the chunk %d", h.FrameContentSize, rawLen)
	case h.DictionaryID != 0:
		return errors.New("zstd frame needs a dictionary")
	}
	var exact, most uint64 // raw and RLE bytes; everything the blocks can produce
	p := h.HeaderSize
	for {
		if len(src)-p < 3 {
			return errors.New("zstd frame ends inside a block header")
		}
		bh := uint32(src[p]) | uint32(src[p+1])<<8 | uint32(src[p+2])<<16
		p += 3
		size, body := int(bh>>3), int(bh>>3)
		switch bh >> 1 & 3 {
		case 0: // raw
			exact += uint64(size)
			most += uint64(size)
		case 1: // RLE: one byte, repeated size times
			exact += uint64(size)
			most += uint64(size)
			body = 1
		case 2: // compressed
			most += zstdMaxBlock
		default:
			return errors.New("zstd block of reserved type")
		}
		if size > zstdMaxBlock || len(src)-p < body {
			return fmt.Errorf("zstd block of %d bytes at frame offset %d", size, p-3)
		}
		p += body
		if bh&1 != 0 {
			break
		}
	}
	if h.HasCheckSum {
		p += 4
	}
	switch {
	case p != len(src):
		return fmt.Errorf("zstd frame of %d bytes in a stored block of %d", p, len(src))
	case exact > uint64(rawLen):
		return fmt.Errorf("zstd blocks decode to more than the %d bytes declared", rawLen)
	case most < uint64(rawLen):
		return fmt.Errorf("zstd blocks cannot decode to the %d bytes declared", rawLen)
	}
	return nil
}

func (l *chunkLoader) decoder() (*zstd.Decoder, error) {
	l.decOnce.Do(func() {
		l.dec, l.decErr = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(l.opts.MaxChunkSize)+zstdSlack),
			zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderConcurrency(0))
	})
	return l.dec, l.decErr
}

// decompress decodes a stored block of kind k whose raw length is rawLen
// (already checked against MaxChunkSize) into dst, which it returns
// (reallocated if too small) also on error, for reuse.
func (l *chunkLoader) decompress(k CompressionKind, src []byte, rawLen uint32, dst []byte) ([]byte, error) {
	switch k {
	case CompressionNone:
		return src, nil
	case CompressionLZ4:
		return decompressLZ4(src, rawLen, dst)
	}
	if err := checkZstdFrame(src, rawLen); err != nil {
		return dst, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	d, err := l.decoder()
	if err != nil {
		return dst, err
	}
	n := int(rawLen) + zstdSlack
	if cap(dst) < n {
		dst = make([]byte, 0, n+int(rawLen)/8) // room for a chunk or two larger
	}
	// The capacity is the decoder's limit (WithDecodeAllCapLimit), and
	// the frame's declared size stops it one block past rawLen at the
	// latest: the output never outgrows the buffer.
	out, err := d.DecodeAll(src, dst[:0:n])
	if err != nil {
		return dst, fmt.Errorf("%w: zstd: %v", ErrMalformed, err)
	}
	if len(out) != int(rawLen) {
		return dst, fmt.Errorf("%w: decompressed %d bytes, expected %d", ErrMalformed, len(out), rawLen)
	}
	// out is dst's memory limited to n: hand back its whole capacity, so
	// that a larger block next time (chunks differ by a record or two)
	// reuses it instead of allocating and clearing a new one.
	if len(out) > 0 && &out[0] != &dst[:1][0] {
		return out, nil // moved by the decoder (not under its cap limit)
	}
	return dst[:len(out)], nil
}

// decompressLZ4 decodes the LZ4 block src, of rawLen bytes decoded, into
// dst (see decompress). The output is bounded by the buffer, so a block
// that would decode to more is an error, never an allocation.
func decompressLZ4(src []byte, rawLen uint32, dst []byte) ([]byte, error) {
	switch {
	case rawLen == 0 && len(src) == 0:
		return dst[:0], nil
	case rawLen == 0:
		// (The lz4 package's decoder faults on an empty output buffer.)
		return dst, fmt.Errorf("%w: lz4 block of %d bytes for no data", ErrMalformed, len(src))
	case int(rawLen) > lz4MaxRatio*len(src):
		// An LZ4 sequence copies at most 255 bytes per byte it stores: a
		// length the block cannot produce is refused before its buffer
		// exists.
		return dst, fmt.Errorf("%w: lz4 block of %d bytes cannot decode to %d", ErrMalformed, len(src), rawLen)
	}
	if cap(dst) < int(rawLen) {
		dst = make([]byte, 0, int(rawLen)+int(rawLen)/8) // room for a chunk or two larger
	}
	n, err := lz4.UncompressBlock(src, dst[:rawLen])
	if err != nil {
		return dst, fmt.Errorf("%w: lz4: %v", ErrMalformed, err)
	}
	if n != int(rawLen) {
		return dst, fmt.Errorf("%w: decompressed %d bytes, expected %d", ErrMalformed, n, rawLen)
	}
	return dst[:n], nil
}

// lz4MaxRatio bounds how far an LZ4 block inflates: every 255 bytes of a
// match length cost one byte of the block.
const lz4MaxRatio = 255
