"""Opening a log (docs/log-format.md §2, §8, §9): the prelude, the footer
index in a constant number of reads, or a linear scan of block headers and
meta sections; torn tails, and damage that costs no record read around
with a warning."""

from __future__ import annotations

import mmap
import os
import stat
import struct
from dataclasses import dataclass, field

from . import _chunk, _format as fmt
from ._crc import crc32c
from .errors import CorruptionError, NotRegularError, NotVrlogError, UnsupportedVersionError

ZERO_PAGE = 4096  # a first page of only zeros: the data never reached the disk


def open_regular(path: str):
    """The file at path, opened for reading. A log is read with random
    access (the trailer at the end, chunks in time order), so a FIFO, pipe,
    socket, device or directory is refused with NotRegularError, before it
    is opened: opening a FIFO blocks until a writer appears, and a pipe has
    no size (it would look like a torn tail)."""
    _check_regular(path, os.stat(path).st_mode)
    # Non-blocking, in case the path was replaced by a FIFO since the stat.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    f = os.fdopen(fd, "rb")
    try:
        _check_regular(path, os.fstat(fd).st_mode)
    except BaseException:
        f.close()
        raise
    return f


def _check_regular(path: str, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    save = "a log is read with random access: save the stream to a file first"
    if stat.S_ISDIR(mode):
        kind = "a directory"
    elif stat.S_ISFIFO(mode):
        kind = "a pipe or FIFO; " + save
    elif stat.S_ISSOCK(mode):
        kind = "a socket; " + save
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device; " + save
    else:
        kind = f"file type {stat.S_IFMT(mode):#o}"
    raise NotRegularError(f"{path}: not a regular file ({kind})")


class Source:
    """A log's bytes (an mmap) and the reader's limits: checked blocks, and
    the search for the next valid block after damage."""

    def __init__(self, path: str, mm, size: int, max_chunk_size: int, max_index_size: int):
        self.path, self.mm, self.size = path, mm, size
        self.max_chunk_size, self.max_index_size = max_chunk_size, max_index_size
        self._mv = memoryview(mm) if isinstance(mm, mmap.mmap) else memoryview(mm).toreadonly()

    def view(self, off: int, n: int) -> memoryview:
        """n bytes at off as a read-only view of the map (no copy)."""
        return self._mv[off:off + n]

    def release(self) -> None:
        """Drop the source's own view of the map (so that it can close)."""
        self._mv.release()

    def corrupt(self, offset: int, what: str) -> CorruptionError:
        return CorruptionError(self.path, offset, what)

    def read(self, off: int, n: int) -> bytes:
        return self.mm[off:off + n]

    def limit(self, kind: int) -> int:
        """The largest meta section of a block of this kind."""
        if kind == fmt.KIND_CHUNK:
            return self.max_chunk_size
        if kind == fmt.KIND_FOOTER:
            return self.max_index_size
        return min(self.max_index_size, fmt.SMALL_BLOCK_LIMIT)

    def block(self, off: int, end: int | None = None):
        """The checked block at off (header and meta section), or the
        CorruptionError that says why not: header CRC, limits, that it fits
        before end (the file's end by default), the meta section's CRC."""
        end = self.size if end is None else end
        if off < 0 or off > end:
            return self.corrupt(off, f"block: expected an offset inside the file ({end} bytes)")
        bh = fmt.parse_block_header(self.read(off, min(fmt.BLOCK_HEADER_SIZE, end - off)), crc32c)
        if isinstance(bh, str):
            return self.corrupt(off, bh)
        if bh.meta_len > self.limit(bh.kind) or (bh.kind == fmt.KIND_CHUNK and bh.data_len > self.max_chunk_size):
            return self.corrupt(off, f"block of kind {bh.kind}: sections of {bh.meta_len}+{bh.data_len} bytes exceed the limits")
        if bh.kind != fmt.KIND_CHUNK and bh.data_len != 0:
            return self.corrupt(off, f"block of kind {bh.kind} with a data section")
        if off + bh.size > end:
            return self.corrupt(off, f"block of {bh.size} bytes, the file ends after {end - off}")
        meta = self.read(off + fmt.BLOCK_HEADER_SIZE, bh.meta_len)
        if crc32c(meta) != bh.meta_crc:
            return self.corrupt(off + fmt.BLOCK_HEADER_SIZE, f"meta section of a block of kind {bh.kind}: CRC mismatch")
        return bh, meta

    def _plausible(self, off: int) -> bool:
        """Whether a block header that checks (sync, CRC) and fits in the
        file starts at off."""
        bh = fmt.parse_block_header(self.read(off, fmt.BLOCK_HEADER_SIZE), crc32c)
        return not isinstance(bh, str) and off + bh.size <= self.size

    def valid_block_at(self, off: int) -> bool:
        return 0 <= off and self.size - off >= fmt.BLOCK_HEADER_SIZE and self._plausible(off)

    def trailer_at(self, off: int) -> int | None:
        """The footer offset of a valid trailer at off, which must be the
        file's last 24 bytes."""
        if off < 0 or self.size - off != fmt.TRAILER_SIZE:
            return None
        return fmt.parse_trailer(self.read(off, fmt.TRAILER_SIZE), crc32c)

    def resync(self, start: int) -> int | None:
        """The next valid block after start (sync, header CRC, fits in the
        file), or the trailer of a closed file; None if neither."""
        mm, pos = self.mm, start + 1
        while pos + fmt.BLOCK_HEADER_SIZE <= self.size:
            pos = mm.find(fmt.SYNC, pos, self.size)
            if pos < 0 or pos + fmt.BLOCK_HEADER_SIZE > self.size:
                break
            if self._plausible(pos):
                return pos
            pos += 1
        t = self.size - fmt.TRAILER_SIZE
        if t > start and self.trailer_at(t) is not None:
            return t
        return None

    def sync_in(self, start: int, end: int) -> bool:
        """Whether a block sync marker starts in [start, end)."""
        return self.mm.find(fmt.SYNC, start, end + len(fmt.SYNC) - 1) >= 0

    def payload_damage(self, ci: fmt.ChunkInfo, groups) -> CorruptionError | None:
        """The first payload block of the chunk whose CRC fails, or None."""
        at = ci.offset + fmt.BLOCK_HEADER_SIZE + ci.meta_len
        for g in groups:
            if crc32c(self.read(at, g.stored_len)) != g.crc:
                return self.corrupt(at, f"payload block of channel {g.channel}: CRC mismatch")
            at += g.stored_len
        return None


@dataclass
class Opened:
    """What opening a log found out about it."""

    version: tuple[int, int]
    header: fmt.Header = None
    channels: list = field(default_factory=list)
    chunks: list = field(default_factory=list)
    stats: list = field(default_factory=list)
    writer_stats: dict | None = None
    indexed: bool = False
    torn_tail: CorruptionError | None = None
    # Damage read around without losing a record, in strict mode too.
    warnings: list = field(default_factory=list)
    # Damage in the middle that may have cost records (tolerant mode).
    problems: list = field(default_factory=list)


def open_log(src: Source, tolerant: bool, ignore_index: bool) -> Opened:
    version, warning = check_start(src)
    o = Opened(version, warnings=[warning] if warning else [])
    index_err, footer_at = None, src.size
    if not ignore_index:
        index_err, footer_at = _open_indexed(src, o)
        if o.indexed:
            return o
    _scan(src, o, tolerant, index_err, footer_at)
    return o


def check_start(src: Source) -> tuple[tuple[int, int], CorruptionError | None]:
    """The version from the prelude, and the damage read past (or None).

    A damaged prelude (magic or CRC) in front of a valid block is only a
    warning: the log behind it is read as this reader's version, 1.1. A first page of only
    zeros is a torn tail at offset 0 (created, and its data never reached
    the disk). Anything else that fails is an error: not a vrlog log, a
    newer major version, a file cut inside its prelude."""
    size, path = src.size, src.path
    p = src.read(0, fmt.PRELUDE_SIZE)
    not_vrlog = NotVrlogError(f"{path}: offset 0: file magic: expected {fmt.MAGIC.hex(' ')}: not a vrlog log")
    if size < fmt.PRELUDE_SIZE:
        if fmt.MAGIC.startswith(p[:8]):  # the empty file too, like a recorder killed at once
            raise src.corrupt(0, f"prelude: torn tail: the file ends after {size} bytes, inside it")
        raise not_vrlog
    if p[:8] != fmt.MAGIC:
        damage, refusal = src.corrupt(0, f"file magic: expected {fmt.MAGIC.hex(' ')}"), not_vrlog
    else:
        major, minor, crc = struct.unpack_from("<HHI", p, 8)
        if crc32c(p[:12]) == crc:
            if major != fmt.MAJOR:
                raise UnsupportedVersionError(f"{path}: format version {major}.{minor}; this reader reads {fmt.MAJOR}.x")
            return (major, minor), None
        damage = refusal = src.corrupt(12, "prelude: CRC mismatch")
    if src.valid_block_at(fmt.PRELUDE_SIZE):
        return (fmt.MAJOR, fmt.MINOR), src.corrupt(damage.offset, damage.what + f"; a valid block follows: read as version {fmt.MAJOR}.{fmt.MINOR}")
    page = src.read(0, ZERO_PAGE)
    if not page.strip(b"\0"):
        raise src.corrupt(0, f"prelude: torn tail: {len(page)} zero bytes where the vrlog magic belongs (the data never reached the disk)")
    raise refusal


def _lost_header(version, chunks) -> fmt.Header:
    """The stand-in for a damaged header block: no metadata, and the
    earliest receive time of the chunks as the creation time."""
    return fmt.Header(version[0], version[1], min((c.min_wall_ns for c in chunks), default=0), {})


def _header(version, meta) -> fmt.Header | None:
    try:
        created, md = fmt.parse_header_body(meta)
    except fmt.Short:
        return None
    return fmt.Header(version[0], version[1], created, md)


def _open_indexed(src: Source, o: Opened) -> tuple[CorruptionError | None, int]:
    """Open through the trailer and footer (o.indexed on success). Returns
    the damage found in a footer a valid trailer points to (None without a
    footer) and the footer's offset. A damaged header block alone does not
    stop it: it is a warning, and the header a stand-in."""
    size = src.size
    if size < fmt.PRELUDE_SIZE + fmt.TRAILER_SIZE + 2 * fmt.BLOCK_HEADER_SIZE:
        return None, size
    end = size - fmt.TRAILER_SIZE
    foff = src.trailer_at(end)
    if foff is None:
        return None, size
    blk = src.block(foff, end)
    if isinstance(blk, CorruptionError):
        return blk, foff
    bh, body = blk
    if bh.kind != fmt.KIND_FOOTER or foff < fmt.PRELUDE_SIZE or foff + bh.size != end:
        return src.corrupt(foff, "footer block: expected a footer block ending at the trailer"), foff
    try:
        f = fmt.parse_footer_body(body)
    except fmt.Short as e:
        return src.corrupt(foff, f"footer block: {e}"), foff
    bad = _check_footer(f, foff)
    if bad:
        return src.corrupt(foff, f"footer block: {bad}"), foff
    blk = src.block(fmt.PRELUDE_SIZE, foff)
    header = None if isinstance(blk, CorruptionError) or blk[0].kind != fmt.KIND_HEADER else _header(o.version, blk[1])
    if header is None:
        if not isinstance(blk, CorruptionError):
            blk = src.corrupt(fmt.PRELUDE_SIZE, "header block: expected a header block after the prelude")
        o.warnings.append(blk)
        header = _lost_header(o.version, f.chunks)
    o.header, o.channels, o.chunks, o.stats, o.writer_stats = header, f.channels, f.chunks, f.stats, f.writer
    o.indexed = True
    return None, foff


def _check_footer(f: fmt.Footer, foff: int) -> str | None:
    """Why the index cannot be trusted, or None: chunks in file order
    inside [prelude, footer), channel ids unique and non-zero, every channel
    a chunk references defined, one stats entry per channel in order."""
    ids = [c.id for c in f.channels]
    if 0 in ids or len(set(ids)) != len(ids):
        return "channel ids not unique or 0"
    prev_end = fmt.PRELUDE_SIZE
    for i, c in enumerate(f.chunks):
        if c.offset < prev_end or c.offset + c.size > foff:
            return f"chunk {i} at offset {c.offset} out of file order or bounds"
        prev_end = c.offset + c.size
        if any(cc.channel not in ids for cc in c.channels):
            return f"chunk {i} uses an undefined channel"
    if [s.channel for s in f.stats] != ids:
        return "statistics do not match the channels one for one"
    return None


class _Scan:
    """The state of a linear scan: what the good blocks said so far."""

    def __init__(self, src: Source, o: Opened, start: int):
        self.src, self.o, self.start = src, o, start
        self.header: fmt.Header | None = None
        self.chans: dict[int, fmt.Channel] = {}
        self.chunks: list[fmt.ChunkInfo] = []
        self.groups: list[list[_chunk.Group]] = []  # each chunk's group directory
        self.drops: dict[int, int] = {}
        self.footer = False  # a valid footer block was among the blocks
        self.kinds: list[int] = []  # kind of every good block, in file order
        self.end = start  # offset after the last good block
        self.warnings: list[CorruptionError] = []
        self.header_damaged = False

    def take(self, off: int, bh: fmt.BlockHeader, meta) -> CorruptionError | None:
        """Interpret one CRC-valid block; malformed content is damage at the
        block's offset."""
        try:
            if bh.kind == fmt.KIND_HEADER:
                header = _header(self.o.version, meta)
                if header is None or off != self.start:
                    return self.src.corrupt(off, "header block: expected the first block, well formed")
                self.header = header
            elif bh.kind == fmt.KIND_CHANNEL:
                c = fmt.parse_channel_body(meta)
                if c.id == 0:
                    return self.src.corrupt(off, "channel block: channel id 0")
                self.chans.setdefault(c.id, c)
            elif bh.kind == fmt.KIND_CHUNK:
                cm = _chunk.parse_chunk_meta(meta, bh.data_len, self.src.max_chunk_size)
                self.chunks.append(fmt.ChunkInfo(off, bh.meta_len, bh.data_len, cm.record_count, cm.sorted, cm.min_mono_ns,
                                                 cm.max_mono_ns, cm.min_wall_ns, cm.max_wall_ns,
                                                 [fmt.ChunkChannel(g.channel, g.record_count, g.raw_len, g.stored_len) for g in cm.groups]))
                self.groups.append(cm.groups)
            elif bh.kind == fmt.KIND_DROPS:
                self.drops = fmt.parse_drops_body(meta)
            elif bh.kind == fmt.KIND_FOOTER:
                fmt.parse_footer_body(meta)
                self.footer = True
        except (fmt.Short, _chunk.BadChunk) as e:
            return self.src.corrupt(off, f"block of kind {bh.kind}: {e}")
        return None  # unknown kinds are skipped: later minor versions may add blocks

    def harmless(self, off: int, nxt: int) -> bool:
        """Whether the damage from off up to the next valid block at nxt cost
        no record: it is exactly the first block (the header) or exactly the
        footer the trailer points to. The damaged first block's extent is
        certain when its lengths lead to nxt although its CRCs fail, or, when
        a length itself was hit, when no other sync marker lies in between
        (one block, damaged in place)."""
        src = self.src
        if off == self.start and nxt - off <= fmt.BLOCK_HEADER_SIZE + src.limit(fmt.KIND_HEADER):
            meta_len, data_len = struct.unpack_from("<II", src.read(off, fmt.BLOCK_HEADER_SIZE), 8)
            if (data_len == 0 and off + fmt.BLOCK_HEADER_SIZE + meta_len == nxt) or not src.sync_in(off + 1, nxt):
                return True
        return src.trailer_at(nxt) == off and off == self.end

    def tear_tail(self) -> None:
        """Move the chunks at the end whose payload blocks fail their CRC
        into the torn tail: their header and meta section reached the disk,
        their data did not (zeros after a power loss, a write cut short)."""
        while self.kinds and self.kinds[-1] == fmt.KIND_CHUNK:
            ci = self.chunks[-1]
            bad = self.src.payload_damage(ci, self.groups[-1])
            if bad is None:
                return
            self.o.torn_tail = self.src.corrupt(ci.offset, f"chunk: {bad.what} at offset {bad.offset}: torn tail (its payloads never reached the disk)")
            self.chunks.pop()
            self.groups.pop()
            self.kinds.pop()
            self.end = ci.offset


def _scan(src: Source, o: Opened, tolerant: bool, index_err: CorruptionError | None, footer_at: int) -> None:
    """Read the block sequence from the end of the prelude: the channels,
    chunks and drops of a log without a (usable) footer. In strict mode the
    first damage that may have cost records and has valid data after it is
    raised; a torn tail never is, nor damage that costs no record."""
    start = fmt.PRELUDE_SIZE
    s = _Scan(src, o, start)
    pos, size = start, src.size
    while pos < size:
        if src.trailer_at(pos) is not None:
            break
        blk = src.block(pos)
        err = blk if isinstance(blk, CorruptionError) else s.take(pos, *blk)
        if err is not None:
            if s.footer and pos == s.end and size - pos == fmt.TRAILER_SIZE:
                # A valid footer block, then 24 bytes that are no trailer.
                s.warnings.append(src.corrupt(pos, "trailer: expected the end magic and a valid CRC; read by scan"))
                break
            nxt = src.resync(pos)
            if nxt is None:
                o.torn_tail = err
                break
            if s.harmless(pos, nxt):
                s.warnings.append(err)
                s.header_damaged = s.header_damaged or pos == start
            elif tolerant:
                o.problems.append(err)
            else:
                raise err
            pos = nxt
            continue
        s.kinds.append(blk[0].kind)
        pos += blk[0].size
        s.end = pos
    s.tear_tail()
    if index_err is not None and not any(w.offset >= footer_at for w in s.warnings):
        o.warnings.append(index_err)  # a CRC-valid footer that fails its checks
    o.warnings += s.warnings
    if s.header is None and not tolerant and s.kinds and not s.header_damaged:
        raise src.corrupt(start, "header block: expected a header block after the prelude")
    if not s.kinds and o.torn_tail is None and not o.problems and not s.warnings:
        o.torn_tail = src.corrupt(start, "header block: torn tail: the file ends after the prelude")
    o.header = s.header or _lost_header(o.version, s.chunks)
    o.chunks = s.chunks
    o.channels, o.stats = _index(s)


def _index(s: _Scan):
    """The channel table and statistics the scanned blocks imply, as a
    footer would hold them: the channels defined, sorted by id, with a
    placeholder for every channel a chunk uses but no block defines;
    statistics folded from the group directories in file order, with the
    latest drop counts."""
    chans = dict(s.chans)
    for ci in s.chunks:
        for cc in ci.channels:
            if cc.channel not in chans:
                chans[cc.channel] = fmt.Channel(cc.channel, f"lost-channel-{cc.channel}", "internal", "", "", "none", 0,
                                                {"vrlog.placeholder": "definition lost"})
    channels = sorted(chans.values(), key=lambda c: c.id)
    by_id: dict[int, fmt.ChannelStats] = {}
    for groups in s.groups:
        for g in groups:
            st = by_id.setdefault(g.channel, fmt.ChannelStats(g.channel))
            if g.record_count:
                if not st.records:
                    st.first_mono_ns, st.first_wall_ns = g.first_mono_ns, g.first_wall_ns
                st.last_mono_ns, st.last_wall_ns = g.last_mono_ns, g.last_wall_ns
            if g.flags & 1:
                if not st.has_capture:
                    st.has_capture, st.first_capture_ns = True, g.first_capture_ns
                st.last_capture_ns = g.last_capture_ns
            st.records += g.record_count
            st.raw_bytes += g.raw_len
            st.stored_bytes += g.stored_len
    stats = []
    for c in channels:
        st = by_id.get(c.id) or fmt.ChannelStats(c.id)
        st.drops = s.drops.get(c.id, 0)
        stats.append(st)
    return channels, stats
