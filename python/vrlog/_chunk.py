"""Chunk blocks (docs/log-format.md §6): the meta section with its group
directory, and the record metadata, decoded into columns.

Two decoders give the same columns: a pure-Python one, and with numpy one
that decodes every varint of a chunk at once and walks the records with one
list lookup each (the metadata-only path's speed comes from here).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ._format import MASK64, Cursor, Short, wrap64

try:
    import numpy as np
except ImportError:  # pragma: no cover - exercised by the no-numpy test run
    np = None

STAMP, PUBID, PUBSAME, PUBSN, HEADER = 1, 2, 4, 8, 16
MAX_PUBLISHER_ID = 64
CHUNK_PREFIX = 48
GROUP_SIZE = 72


class BadChunk(Exception):
    """Chunk content that contradicts itself (its CRCs passed): a buggy writer
    or a crafted file. where is "meta" (the chunk's meta section) or
    "records" (its stored record metadata)."""

    def __init__(self, what: str, where: str = "meta"):
        super().__init__(what)
        self.where = where


@dataclass
class Group:
    """One entry of a chunk's group directory: a channel's payload block."""

    channel: int
    kind: int  # how the block is stored: 0 none, 1 zstd, 2 lz4
    level: int
    flags: int
    record_count: int
    raw_len: int
    stored_len: int
    crc: int
    first_mono_ns: int
    last_mono_ns: int
    first_wall_ns: int
    last_wall_ns: int
    first_capture_ns: int
    last_capture_ns: int


@dataclass
class ChunkMeta:
    record_count: int
    meta_compression: int
    sorted: bool
    min_mono_ns: int
    max_mono_ns: int
    min_wall_ns: int
    max_wall_ns: int
    meta_raw_len: int
    meta_stored_len: int
    groups: list[Group]

    @property
    def records_at(self) -> int:
        """Offset of the stored record metadata in the meta section."""
        return CHUNK_PREFIX + GROUP_SIZE * len(self.groups)


_PREFIX = struct.Struct("<IHBBqqqqII")
_GROUP = struct.Struct("<HBBIIIIIqqqqqq")


def parse_chunk_meta(meta, data_len: int, max_chunk: int) -> ChunkMeta:
    """Parse and check a chunk's meta section (its CRC already checked)."""
    if len(meta) < CHUNK_PREFIX:
        raise BadChunk(f"meta section of {len(meta)} bytes, the prefix alone is {CHUNK_PREFIX}")
    n, gc, mc, srt, mn, mx, wn, wx, raw, stored = _PREFIX.unpack_from(meta)
    if CHUNK_PREFIX + GROUP_SIZE * gc + stored != len(meta):
        raise BadChunk(f"48 + 72 × {gc} groups + {stored} bytes of record metadata != meta section of {len(meta)}")
    if mc not in (0, 1, 2) or srt not in (0, 1):
        raise BadChunk(f"meta compression {mc}, sorted {srt}: want 0 to 2, 0 or 1")
    if mc == 0 and raw != stored:
        raise BadChunk(f"uncompressed record metadata of {stored} bytes says {raw} raw")
    if raw > max_chunk:
        raise BadChunk(f"record metadata of {raw} bytes exceeds the limit {max_chunk}")
    groups = []
    total, seen = 0, set()
    for i in range(gc):
        g = Group(*_GROUP.unpack_from(meta, CHUNK_PREFIX + GROUP_SIZE * i))
        if g.kind not in (0, 1, 2) or g.flags > 1:
            raise BadChunk(f"group {i}: storage kind {g.kind}, flags {g.flags:#x}")
        if g.kind == 0 and g.raw_len != g.stored_len:
            raise BadChunk(f"group {i}: stored raw but raw_len {g.raw_len} != stored_len {g.stored_len}")
        if g.raw_len > max_chunk:
            raise BadChunk(f"group {i}: {g.raw_len} raw bytes exceed the limit {max_chunk}")
        if g.channel in seen:
            raise BadChunk(f"group {i}: channel {g.channel} has two payload blocks")
        seen.add(g.channel)
        total += g.stored_len
        groups.append(g)
    if total != data_len:
        raise BadChunk(f"payload blocks of {total} bytes in a data section of {data_len}")
    # The records are checked against the directory (counts, byte sums)
    # when they are decoded: that is damage in the record metadata.
    return ChunkMeta(n, mc, srt == 1, mn, mx, wn, wx, raw, stored, groups)


class Columns:
    """A chunk's records in record order, one sequence per field (numpy
    arrays from the numpy decoder, lists from the pure one).

    group, mono, wall, stamp (bool), capture, seq, has_sn (bool), sn, pub
    (index into pubs, -1: no publisher id), hlen, plen, off (offset of the
    record's header in its group's raw block); capture, seq and sn are 0
    where the record has none.
    """

    __slots__ = ("group", "mono", "wall", "stamp", "capture", "seq", "has_sn", "sn", "pub", "pubs", "hlen", "plen", "off")


def _check_groups(cm: ChunkMeta, counts, sums) -> None:
    for i, g in enumerate(cm.groups):
        if counts[i] != g.record_count:
            raise BadChunk(f"group {i} (channel {g.channel}): {counts[i]} records, the directory says {g.record_count}", "records")
        if sums[i] != g.raw_len:
            raise BadChunk(f"group {i} (channel {g.channel}): records of {sums[i]} bytes, the directory says {g.raw_len}", "records")


def decode_records_py(b, cm: ChunkMeta, max_record: int) -> Columns:
    """The record metadata b (decompressed), in pure Python."""
    ng = len(cm.groups)
    c = Cursor(b)
    col = Columns()
    names = ("group", "mono", "wall", "stamp", "capture", "seq", "has_sn", "sn", "pub", "hlen", "plen", "off")
    lists = {k: [] for k in names}
    col.pubs = []
    prev_mono = prev_off = 0
    prev_seq, prev_sn, prev_pub = [0] * ng, [0] * ng, [-1] * ng
    goff, gcount = [0] * ng, [0] * ng

    def sv():
        u = c.uvarint()
        return (u >> 1) ^ -(u & 1)

    try:
        for _ in range(cm.record_count):
            g = c.uvarint()
            if g >= ng:
                raise BadChunk(f"record in group {g} of {ng}", "records")
            f = c.u8()
            if f & ~0x1F or (f & PUBID and f & PUBSAME):
                raise BadChunk(f"record flags {f:#x}", "records")
            mono = wrap64(prev_mono + sv())
            off = wrap64(prev_off + sv())
            wall = wrap64(mono + off)
            prev_mono, prev_off = mono, off
            capture = seq = sn = 0
            if f & STAMP:
                capture = wrap64(wall + sv())
                seq = (prev_seq[g] + 1 + sv()) & MASK64
                prev_seq[g] = seq
            pub = -1
            if f & PUBID:
                n = c.uvarint()
                if not 1 <= n <= MAX_PUBLISHER_ID:
                    raise BadChunk(f"publisher id of {n} bytes (1..64)", "records")
                col.pubs.append(bytes(c.take(n)))
                pub = prev_pub[g] = len(col.pubs) - 1
            elif f & PUBSAME:
                pub = prev_pub[g]
                if pub < 0:
                    raise BadChunk("PUBSAME before any publisher id in its group", "records")
            if f & PUBSN:
                sn = (prev_sn[g] + 1 + sv()) & MASK64
                prev_sn[g] = sn
            hlen = 0
            if f & HEADER:
                hlen = c.uvarint()
                if hlen == 0:
                    raise BadChunk("HEADER flag with a zero header length", "records")
            plen = c.uvarint()
            if hlen + plen > max_record:
                raise BadChunk(f"record of {hlen + plen} bytes exceeds the limit {max_record}", "records")
            for k, v in zip(names, (g, mono, wall, bool(f & STAMP), capture, seq, bool(f & PUBSN), sn, pub, hlen, plen, goff[g])):
                lists[k].append(v)
            goff[g] += hlen + plen
            gcount[g] += 1
    except Short as e:
        raise BadChunk(f"record metadata: {e}", "records") from None
    if c.left():
        raise BadChunk(f"{c.left()} bytes after the last record", "records")
    _check_groups(cm, gcount, goff)
    m = lists["mono"]
    if cm.sorted and any(m[i] > m[i + 1] for i in range(len(m) - 1)):
        raise BadChunk("a chunk marked sorted is not in receive order", "records")
    for k in names:
        setattr(col, k, lists[k])
    return col


# ---- numpy ----

# Tokens a record takes (with PUBID: up to the length; its bytes are no token).
_NTOK = [4 + 2 * (f & STAMP) + bool(f & PUBID) + bool(f & PUBSN) + bool(f & HEADER) + 1 for f in range(32)]


def _tokens(b):
    """Every uvarint of b as if b held nothing else: values, the byte
    offsets where each starts and ends, and which are invalid (longer than
    10 bytes or past 64 bits). A trailing unterminated varint is left out.
    Publisher id bytes are not varints; the walk skips the tokens they make."""
    ends = np.flatnonzero(b < 0x80)
    starts = np.empty_like(ends)
    if len(ends):
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
    lens = ends - starts + 1
    vals = (b[starts] & 0x7F).astype(np.uint64)
    invalid = lens > 10
    idx = np.flatnonzero((lens > 1) & ~invalid)
    for k in range(1, 10):
        idx = idx[lens[idx] > k]
        if not len(idx):
            break
        byte = b[starts[idx] + k]
        if k == 9:
            invalid[idx[byte > 1]] = True
        vals[idx] |= (byte & 0x7F).astype(np.uint64) << np.uint64(7 * k)
    return vals, starts, ends, invalid


def _varint_at(b, p0: int, p1: int) -> tuple[int, bool]:
    """The uvarint in b[p0:p1+1] (its last byte at p1), and whether it is valid."""
    v = 0
    for k, c in enumerate(bytes(b[p0:p1 + 1])):
        v |= (c & 0x7F) << (7 * k)
    return v, p1 - p0 < 10 and v <= MASK64


_NEXT_TABLE = None


def _next_table():
    """Per flags value: tokens to the next record (-1: PUBID, worked out
    apart; -2: invalid flags)."""
    global _NEXT_TABLE
    if _NEXT_TABLE is None:
        t = np.full(256, -2, dtype=np.int64)
        for f in range(32):
            if not (f & PUBID and f & PUBSAME):
                t[f] = -1 if f & PUBID else _NTOK[f]
        _NEXT_TABLE = t
    return _NEXT_TABLE


def _zigzag(u):
    return (u >> np.uint64(1)).astype(np.int64) ^ -(u & np.uint64(1)).astype(np.int64)


def decode_records_np(b, cm: ChunkMeta, max_record: int) -> Columns:
    """The record metadata b (decompressed), with numpy.

    Every varint is decoded at once; then, for every token, where the next
    record would start if a record started there (its flags are the next
    token); the record starts are that map iterated from token 0, by
    doubling (log2(records) gathers, no Python loop per record).
    """
    buf = np.frombuffer(b, dtype=np.uint8)
    n, ng = cm.record_count, len(cm.groups)
    vals, tstart, tend, inval = _tokens(buf)
    T = len(vals)
    bad = T + 1  # absorbing: no record can start here
    flags_of = np.minimum(vals[1:], 255).astype(np.int64)
    step = _next_table()[flags_of]
    nx = np.full(T + 2, bad, dtype=np.int64)
    ok = step >= 0
    nx[:T - 1][ok] = np.flatnonzero(ok) + step[ok]
    # A record with a publisher id: its bytes follow the id's length token;
    # the record goes on at the token that ends at or after them.
    cand = np.flatnonzero(step == -1)
    if len(cand):
        f = flags_of[cand]
        k = cand + 4 + 2 * (f & STAMP)
        fits = k < T
        cand, f, k = cand[fits], f[fits], k[fits]
        size = vals[k].astype(np.int64)
        p1 = tend[k] + 1 + size
        good = (size >= 1) & (size <= MAX_PUBLISHER_ID) & (p1 <= len(buf)) & ~inval[k]
        j = np.searchsorted(tend, p1, side="left")
        rem = np.asarray(_NTOK, dtype=np.int64)[f] - (k - cand + 1)
        nx[cand[good]] = (j + rem)[good]
    nx = np.minimum(nx, bad)
    nx[T], nx[bad] = bad, bad
    st = np.zeros(n, dtype=np.int64)
    jump, m = nx, 1
    while m < n:
        take = min(m, n - m)
        st[m:m + take] = jump[st[:take]]
        m += take
        if m < n:
            jump = jump[jump]
    if n and (st[-1] >= T or nx[st[-1]] != T):
        r = int(np.argmax(st >= T)) if (st >= T).any() else n
        raise BadChunk(f"record metadata does not hold {n} records (stops at record {r})", "records")
    if T and int(tend[-1]) + 1 != len(buf):
        raise BadChunk(f"{len(buf) - int(tend[-1]) - 1} bytes after the last record", "records")

    flags = vals[st + 1].astype(np.int64)
    stamp = (flags & STAMP) != 0
    pubid, pubsame, has_sn, has_h = (flags & PUBID) != 0, (flags & PUBSAME) != 0, (flags & PUBSN) != 0, (flags & HEADER) != 0
    used = [st, st + 1, st + 2, st + 3]
    p = st + 4
    used += [p[stamp], p[stamp] + 1]
    p = p + 2 * stamp
    pubs, shift = [], np.zeros(n, dtype=np.int64)
    for r in np.flatnonzero(pubid).tolist():
        k = int(p[r])
        size = int(vals[k])
        p0 = int(tend[k]) + 1
        pubs.append(bytes(b[p0:p0 + size]))
        j = int(np.searchsorted(tend, p0 + size, side="left"))
        if int(tstart[j]) != p0 + size:  # the token began inside the id: it starts after it
            v, valid = _varint_at(buf, p0 + size, int(tend[j]))
            vals[j], inval[j] = np.uint64(v) if valid else 0, not valid
        shift[r] = j - (k + 1)
        used.append(np.array([k]))
    p = p + pubid + shift
    used.append(p[has_sn])
    p = p + has_sn
    used.append(p[has_h])
    hp = p
    p = p + has_h
    used.append(p)
    if inval[np.concatenate(used)].any():
        raise BadChunk("a varint longer than 64 bits", "records")
    group = vals[st]
    if n and int(group.max()) >= ng:
        raise BadChunk(f"record in group {int(group.max())} of {ng}", "records")
    group = group.astype(np.int64)

    def at(q, mask):
        return np.where(mask, vals[np.minimum(q, T - 1)], np.uint64(0))

    mono = np.cumsum(_zigzag(vals[st + 2]))
    wall = mono + np.cumsum(_zigzag(vals[st + 3]))
    q = st + 4
    capture = np.where(stamp, wall + _zigzag(at(q, stamp)), 0)
    dseq = _zigzag(at(q + 1, stamp)).astype(np.uint64) + np.uint64(1)
    dsn = _zigzag(at(hp - has_sn, has_sn)).astype(np.uint64) + np.uint64(1)
    hlen = at(hp, has_h)
    plen = vals[p]
    if (has_h & (hlen == 0)).any():
        raise BadChunk("HEADER flag with a zero header length", "records")
    if (hlen > np.uint64(max_record)).any() or (plen > np.uint64(max_record)).any() or (hlen + plen > np.uint64(max_record)).any():
        raise BadChunk(f"a record exceeds the limit of {max_record} bytes", "records")
    hlen, plen = hlen.astype(np.int64), plen.astype(np.int64)
    size = hlen + plen
    seq = np.zeros(n, dtype=np.uint64)
    sn = np.zeros(n, dtype=np.uint64)
    off = np.zeros(n, dtype=np.int64)
    pub = np.full(n, -1, dtype=np.int64)
    pub[pubid] = np.arange(len(pubs))
    counts, sums = [], []
    for g in range(ng):
        in_g = group == g
        m = in_g & stamp
        seq[m] = np.cumsum(dseq[m], dtype=np.uint64)
        m = in_g & has_sn
        sn[m] = np.cumsum(dsn[m], dtype=np.uint64)
        idx = np.flatnonzero(in_g)
        s = size[idx]
        cs = np.cumsum(s)
        off[idx] = cs - s
        counts.append(len(idx))
        sums.append(int(cs[-1]) if len(cs) else 0)
        idx = np.flatnonzero(in_g & (pubid | pubsame))
        if len(idx):
            cur = np.maximum.accumulate(pub[idx])  # ids are numbered in record order
            if (cur < 0).any():
                raise BadChunk("PUBSAME before any publisher id in its group", "records")
            pub[idx] = cur
    _check_groups(cm, counts, sums)
    if cm.sorted and n > 1 and (mono[1:] < mono[:-1]).any():
        raise BadChunk("a chunk marked sorted is not in receive order", "records")
    col = Columns()
    col.group, col.mono, col.wall, col.stamp, col.capture = group, mono, wall, stamp, capture
    col.seq, col.has_sn, col.sn, col.pub, col.pubs = seq, has_sn, sn, pub, pubs
    col.hlen, col.plen, col.off = hlen, plen, off
    return col


_DTYPES = {"group": "int64", "mono": "int64", "wall": "int64", "stamp": "bool", "capture": "int64", "seq": "uint64",
           "has_sn": "bool", "sn": "uint64", "pub": "int64", "hlen": "int64", "plen": "int64", "off": "int64"}


def decode_records(b, cm: ChunkMeta, max_record: int, use_numpy: bool = True) -> Columns:
    if use_numpy and np is not None:
        if cm.record_count:
            return decode_records_np(b, cm, max_record)
        # A chunk without records (nothing to vectorize): the pure checks,
        # and empty arrays.
        col = decode_records_py(b, cm, max_record)
        for k, t in _DTYPES.items():
            setattr(col, k, np.zeros(0, dtype=t))
        return col
    return decode_records_py(b, cm, max_record)
