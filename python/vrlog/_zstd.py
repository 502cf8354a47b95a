"""Decompression of stored blocks, bounded by the raw length the chunk
declares (docs/log-format.md §6.3).

An LZ4 block (kind 2) is decoded into a buffer of exactly that length,
which the decoder may not outgrow. For zstd (kind 1), that length is
trusted only as far as the zstd frame agrees with it: the frame must be
exactly one frame declaring that content size (a frame of
less than 256 bytes may omit it), and its block headers must be able to
produce it. Then the output buffer is the raw length and the decoder's
limit, so a block that inflates beyond it (a decompression bomb) is
refused, never allocated.
"""

from __future__ import annotations

try:
    import zstandard
except ImportError:  # pragma: no cover
    zstandard = None
try:
    import lz4.block as lz4block
except ImportError:  # pragma: no cover
    lz4block = None

from .errors import VrlogError

FRAME_MAGIC = b"\x28\xb5\x2f\xfd"
MAX_BLOCK = 128 << 10  # the most one zstd block decodes to (Block_Maximum_Size)


class BadFrame(ValueError):
    """A stored block that is not the zstd frame (or LZ4 block) its chunk
    declares."""


LZ4_MAX_RATIO = 255  # an LZ4 block stores a byte per 255 bytes of a match at least


def decompress_lz4(src, raw_len: int) -> bytes:
    """The raw_len bytes the LZ4 block src holds, or BadFrame."""
    if lz4block is None:
        raise VrlogError("lz4-compressed data needs the lz4 package (pip install lz4)")
    if raw_len == 0:
        if len(src):
            raise BadFrame(f"lz4 block of {len(src)} bytes for no data")
        return b""
    if raw_len > LZ4_MAX_RATIO * len(src):
        raise BadFrame(f"lz4 block of {len(src)} bytes cannot decode to {raw_len}")
    try:
        out = lz4block.decompress(src, uncompressed_size=raw_len)
    except lz4block.LZ4BlockError as e:
        raise BadFrame(f"lz4: {e}") from None
    if len(out) != raw_len:
        raise BadFrame(f"lz4 block decompresses to {len(out)} bytes, want {raw_len}")
    return out


def check_frame(src, raw_len: int) -> None:
    """Check, without decoding, that src is one zstd frame that can decode
    to exactly raw_len bytes; raise BadFrame saying why not."""
    n = len(src)
    if n < 5:
        raise BadFrame(f"zstd frame header: {n} bytes")
    magic = bytes(src[:4])
    if magic != FRAME_MAGIC:
        if magic[1:] == b"\x2a\x4d\x18" and magic[0] & 0xF0 == 0x50:
            raise BadFrame("skippable zstd frame")
        raise BadFrame("zstd frame header: bad magic")
    fhd = src[4]
    single = fhd >> 5 & 1
    if fhd & 8:
        raise BadFrame("zstd frame header: reserved bit set")
    p = 5 + (0 if single else 1)
    did_size = (0, 1, 2, 4)[fhd & 3]
    fcs_flag = fhd >> 6
    fcs_size = (1 if single else 0) if fcs_flag == 0 else 1 << fcs_flag
    if n < p + did_size + fcs_size:
        raise BadFrame("zstd frame header: cut short")
    if did_size and int.from_bytes(src[p:p + did_size], "little"):
        raise BadFrame("zstd frame needs a dictionary")
    p += did_size
    if fcs_size:
        fcs = int.from_bytes(src[p:p + fcs_size], "little") + (256 if fcs_size == 2 else 0)
        if fcs != raw_len:
            raise BadFrame(f"zstd frame declares {fcs} bytes, the chunk {raw_len}")
    elif raw_len >= 256:
        # Encoders omit the size only of small frames; a large frame without
        # it could only be bounded by the output buffer.
        raise BadFrame(f"zstd frame of {raw_len} bytes declares no content size")
    p += fcs_size
    exact = most = 0  # raw and RLE bytes; everything the blocks can produce
    while True:
        if n - p < 3:
            raise BadFrame("zstd frame ends inside a block header")
        bh = src[p] | src[p + 1] << 8 | src[p + 2] << 16
        p += 3
        size = body = bh >> 3
        kind = bh >> 1 & 3
        if kind == 0:  # raw
            exact += size
            most += size
        elif kind == 1:  # RLE: one byte, repeated size times
            exact += size
            most += size
            body = 1
        elif kind == 2:  # compressed
            most += MAX_BLOCK
        else:
            raise BadFrame("zstd block of reserved type")
        if size > MAX_BLOCK or n - p < body:
            raise BadFrame(f"zstd block of {size} bytes at frame offset {p - 3}")
        p += body
        if bh & 1:
            break
    if fhd & 4:  # content checksum
        p += 4
    if p != n:
        raise BadFrame(f"zstd frame of {p} bytes in a stored block of {n}")
    if exact > raw_len:
        raise BadFrame(f"zstd blocks decode to more than the {raw_len} bytes declared")
    if most < raw_len:
        raise BadFrame(f"zstd blocks cannot decode to the {raw_len} bytes declared")


class Decompressor:
    """One zstd decompression context, created on first use."""

    def __init__(self):
        self._dctx = None

    def block(self, kind: int, src, raw_len: int):
        """A stored block of kind (0 none, 1 zstd, 2 lz4) decompressed."""
        if kind == 2:
            return decompress_lz4(src, raw_len)
        if kind == 1:
            return self.decompress(src, raw_len)
        return src

    def decompress(self, src, raw_len: int) -> bytes:
        """The raw_len bytes the zstd frame src holds, or BadFrame when it
        is not such a frame."""
        if zstandard is None:
            raise VrlogError("zstd-compressed data needs the zstandard package (pip install zstandard)")
        check_frame(src, raw_len)
        if self._dctx is None:
            self._dctx = zstandard.ZstdDecompressor()
        # A frame that declares its size (checked: raw_len) is decoded into
        # a buffer of that size; one that does not (small) into a buffer of
        # max_output_size, which it may not outgrow (0 would mean no limit).
        try:
            out = self._dctx.decompress(src, max_output_size=max(raw_len, 1))
        except zstandard.ZstdError as e:
            raise BadFrame(f"zstd: {e}") from None
        if len(out) != raw_len:
            raise BadFrame(f"zstd frame decompresses to {len(out)} bytes, want {raw_len}")
        return out
