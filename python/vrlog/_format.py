"""The byte layout of a vrlog log (docs/log-format.md, version 1.0):
prelude, block headers, header, channel, drops and footer blocks, trailer.
Chunks are in _chunk.py."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

MAGIC = b"\x89VRL\r\n\x1a\n"
SYNC = b"VRBK"
END_MAGIC = b"VRLEND\r\n"
PRELUDE_SIZE = 16
BLOCK_HEADER_SIZE = 24
TRAILER_SIZE = 24
MAJOR = 1
MINOR = 1  # the newest minor version this reader knows (1.1: LZ4 blocks)

KIND_HEADER, KIND_CHANNEL, KIND_CHUNK, KIND_DROPS, KIND_FOOTER = 1, 2, 3, 4, 5
SMALL_BLOCK_LIMIT = 16 << 20  # meta section of every block but chunks and the footer

TRANSPORTS = {0: "internal", 1: "zenoh", 2: "iceoryx2"}
COMPRESSIONS = {0: "none", 1: "zstd", 2: "lz4"}

MASK64 = (1 << 64) - 1


def wrap64(v: int) -> int:
    """Two's complement int64 of v modulo 2^64."""
    v &= MASK64
    return v - (1 << 64) if v >> 63 else v


class Short(Exception):
    """A structure ends before its fields do (turned into a CorruptionError
    by the caller, who knows the offset)."""


class Cursor:
    """Little-endian fields, varints and strings from a bytes-like buffer."""

    __slots__ = ("b", "pos", "end")

    def __init__(self, b, pos: int = 0, end: int | None = None):
        self.b, self.pos, self.end = b, pos, len(b) if end is None else end

    def take(self, n: int):
        if n < 0 or self.pos + n > self.end:
            raise Short(f"needs {n} bytes at {self.pos}, {self.end - self.pos} left")
        p = self.pos
        self.pos += n
        return self.b[p:p + n]

    def unpack(self, fmt: struct.Struct):
        return fmt.unpack(self.take(fmt.size))

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return struct.unpack("<H", self.take(2))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def i64(self) -> int:
        return struct.unpack("<q", self.take(8))[0]

    def uvarint(self) -> int:
        v = shift = 0
        b, p, end = self.b, self.pos, self.end
        while True:
            if p >= end:
                raise Short("varint runs past the end")
            c = b[p]
            p += 1
            if shift == 63 and c > 1:
                raise Short("varint overflows 64 bits")
            v |= (c & 0x7F) << shift
            if c < 0x80:
                self.pos = p
                return v
            shift += 7
            if shift > 63:
                raise Short("varint longer than 10 bytes")

    def str(self) -> str:
        n = self.uvarint()
        return bytes(self.take(n)).decode("utf-8", "replace")

    def map(self) -> dict[str, str]:
        n = self.uvarint()
        if n > self.end - self.pos:  # every entry takes at least two bytes
            raise Short(f"map of {n} entries in {self.end - self.pos} bytes")
        out = {}
        for _ in range(n):
            k = self.str()
            out[k] = self.str()
        return out

    def left(self) -> int:
        return self.end - self.pos


@dataclass(frozen=True)
class BlockHeader:
    kind: int
    meta_len: int
    data_len: int
    meta_crc: int

    @property
    def size(self) -> int:
        return BLOCK_HEADER_SIZE + self.meta_len + self.data_len


_BLOCK = struct.Struct("<4sB3sIIII")


def parse_block_header(b, crc32c) -> BlockHeader | str:
    """The block header in the 24 bytes b, or why it is not one."""
    if len(b) < BLOCK_HEADER_SIZE:
        return "block header: file ends inside it"
    sync, kind, reserved, meta_len, data_len, meta_crc, hcrc = _BLOCK.unpack_from(b)
    if sync != SYNC:
        return f"block header: sync {SYNC.hex()} expected, found {bytes(sync).hex()}"
    if crc32c(b[:20]) != hcrc:
        return "block header: CRC mismatch"
    if reserved != b"\0\0\0":
        return "block header: reserved bytes are not zero"
    return BlockHeader(kind, meta_len, data_len, meta_crc)


@dataclass
class Header:
    """The file-level information written when the log was created."""

    version_major: int
    version_minor: int
    created_wall_ns: int
    metadata: dict[str, str]


def parse_header_body(b) -> tuple[int, dict[str, str]]:
    c = Cursor(b)
    return c.i64(), c.map()


@dataclass
class Channel:
    """One recorded stream."""

    id: int
    name: str
    transport: str  # internal, zenoh, iceoryx2 (or transport(N))
    topic: str
    schema: str  # codec schema name; "" = raw
    compression: str  # none, zstd or lz4 (the channel's request)
    level: int
    meta: dict[str, str] = field(default_factory=dict)


def parse_channel_body(b) -> Channel:
    c = Cursor(b)
    cid = c.u16()
    transport, comp, level = c.u8(), c.u8(), c.u8()
    name, topic, schema = c.str(), c.str(), c.str()
    meta = c.map()
    return Channel(cid, name, TRANSPORTS.get(transport, f"transport({transport})"), topic, schema,
                   COMPRESSIONS.get(comp, f"compression({comp})"), level, meta)


@dataclass
class ChunkChannel:
    channel: int
    records: int
    raw_bytes: int
    stored_bytes: int


@dataclass
class ChunkInfo:
    """One chunk, from the footer index or a linear scan."""

    offset: int
    meta_len: int
    data_len: int
    records: int
    sorted: bool
    min_mono_ns: int
    max_mono_ns: int
    min_wall_ns: int
    max_wall_ns: int
    channels: list[ChunkChannel]

    @property
    def size(self) -> int:
        return BLOCK_HEADER_SIZE + self.meta_len + self.data_len


@dataclass
class ChannelStats:
    """One channel over the whole log (first/last in file order)."""

    channel: int
    records: int = 0
    raw_bytes: int = 0
    stored_bytes: int = 0
    drops: int = 0
    first_mono_ns: int = 0
    last_mono_ns: int = 0
    first_wall_ns: int = 0
    last_wall_ns: int = 0
    has_capture: bool = False
    first_capture_ns: int = 0
    last_capture_ns: int = 0


def parse_drops_body(b) -> dict[int, int]:
    c = Cursor(b)
    n = c.uvarint()
    if n * 10 > c.left():
        raise Short(f"{n} drop entries in {c.left()} bytes")
    out = {}
    for _ in range(n):
        ch = c.u16()
        out[ch] = c.u64()
    return out


_CHUNK_ENTRY = struct.Struct("<QIIIB3sqqqq")
_STATS_ENTRY = struct.Struct("<HB5sQQQQqqqqqq")


@dataclass
class Footer:
    channels: list[Channel]
    chunks: list[ChunkInfo]
    stats: list[ChannelStats]
    writer: dict[str, int]


def _elements(c: Cursor):
    """A footer list: uvarint count, then count × (uvarint len, element)."""
    n = c.uvarint()
    if n > c.left():
        raise Short(f"list of {n} elements in {c.left()} bytes")
    for _ in range(n):
        size = c.uvarint()
        yield c.take(size)


def parse_footer_body(b) -> Footer:
    c = Cursor(b)
    chans = [parse_channel_body(e) for e in _elements(c)]
    chunks = []
    for e in _elements(c):
        ec = Cursor(e)
        off, ml, dl, recs, srt, _, mn, mx, wn, wx = ec.unpack(_CHUNK_ENTRY)
        n = ec.uvarint()
        if n * 14 > ec.left():
            raise Short(f"{n} chunk channels in {ec.left()} bytes")
        cc = []
        for _ in range(n):
            ch, r, raw, stored = struct.unpack("<HIII", ec.take(14))
            cc.append(ChunkChannel(ch, r, raw, stored))
        chunks.append(ChunkInfo(off, ml, dl, recs, srt == 1, mn, mx, wn, wx, cc))
    stats = []
    for e in _elements(c):
        v = Cursor(e).unpack(_STATS_ENTRY)
        stats.append(ChannelStats(v[0], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[1] == 1, v[11], v[12]))
    w = Cursor(c.take(c.uvarint()))
    writer = dict(zip(("records", "chunks", "raw_bytes", "bytes_written", "drops"), (w.u64() for _ in range(5))))
    return Footer(chans, chunks, stats, writer)


_TRAILER = struct.Struct("<qII8s")


def parse_trailer(b, crc32c) -> int | None:
    """The footer offset from a valid 24-byte trailer (end magic, CRC),
    else None. The offset is an i64 as far as readers go: one past 2^63 is
    negative, outside the file like any other offset that is."""
    if len(b) != TRAILER_SIZE:
        return None
    off, _reserved, crc, end = _TRAILER.unpack(b)
    if end != END_MAGIC or crc32c(b[:12]) != crc:
        return None
    return off
