"""Reading a vrlog log: its channels and metadata (opened by _open, through
its footer index or by a linear scan), and its records in receive order
(RecvMonoNs, ties in file order), selected by channel and time window."""

from __future__ import annotations

import fnmatch
import functools
import itertools
import mmap
import operator
import os
from collections.abc import Iterator
from typing import NamedTuple, Optional

from . import _chunk, _format as fmt, _open, _zstd, declared, wire
from ._crc import crc32c
from .errors import CorruptionError, VrlogError

try:
    import numpy as np
except ImportError:  # pragma: no cover - exercised by the no-numpy test run
    np = None

# What a chunk whose CRCs passed can still be: content that contradicts
# itself, a zstd frame that is not the one declared.
_DAMAGE = (_chunk.BadChunk, _zstd.BadFrame, ValueError)


class Record(NamedTuple):
    """One received sample with all its stamps (a named tuple).

    capture_ns and seq are None without a capture stamp; publisher_id is
    None when the transport gave none, publisher_sn None without a zenoh
    source sequence number; header and payload are None when the records
    were read without payloads (header_len and payload_len are always set).
    """

    channel: int
    recv_wall_ns: int
    recv_mono_ns: int
    capture_ns: Optional[int]
    seq: Optional[int]
    publisher_id: Optional[bytes]
    publisher_sn: Optional[int]
    header_len: int
    payload_len: int
    header: Optional[bytes] = None
    payload: Optional[bytes] = None

    @property
    def has_stamp(self) -> bool:
        return self.capture_ns is not None


_make_record = functools.partial(tuple.__new__, Record)


# The columns of Log.timing(), in order.
TIMING_COLUMNS = ("channel", "recv_wall_ns", "recv_mono_ns", "has_stamp", "capture_ns", "seq",
                  "has_publisher_sn", "publisher_sn", "header_len", "payload_len")


def open(path: str | os.PathLike, **options) -> "Log":  # noqa: A001 - vrlog.open, like gzip.open
    """Open a log; see Log for the options."""
    return Log(path, **options)


class Log:
    """An open vrlog log.

    Options: tolerant (skip damaged chunks, listed in skipped_chunks, instead
    of raising), ignore_index (read by linear scan even with a footer),
    max_record_size, max_chunk_size, max_index_size, max_merge_chunks (the
    limits of docs/log-format.md §11), use_numpy (False forces the pure
    Python decoder).

    What opening found: indexed (through the footer, else by a scan),
    torn_tail (where an interrupted recording ends, or None), warnings
    (damage read around without losing a record, in strict mode too: a
    damaged prelude, header block, footer or trailer) and skipped_chunks
    (damage skipped in tolerant mode).
    """

    def __init__(self, path, *, tolerant: bool = False, ignore_index: bool = False, max_record_size: int = 256 << 20,
                 max_chunk_size: int = 1 << 30, max_index_size: int = 256 << 20, max_merge_chunks: int = 64,
                 use_numpy: bool = True):
        self.path = os.fspath(path)
        self.tolerant = tolerant
        self.max_record_size, self.max_chunk_size = max_record_size, min(max_chunk_size, (1 << 32) - 1)
        self.max_index_size, self.max_merge = min(max_index_size, (1 << 32) - 1), max(1, min(max_merge_chunks, 0xFFFF))
        self.use_numpy = use_numpy and np is not None
        self._mm = None
        self._src = None
        self._epoch_ns: int | None = None
        self._zstd = _zstd.Decompressor()
        self._file = _open.open_regular(self.path)
        try:
            self.size = os.fstat(self._file.fileno()).st_size
            if self.size == 0:  # a prefix of the magic, like any cut inside the prelude
                raise CorruptionError(self.path, 0, "prelude: torn tail: the file is empty")
            self._mm = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
            if hasattr(self._mm, "madvise") and hasattr(mmap, "MADV_SEQUENTIAL"):
                self._mm.madvise(mmap.MADV_SEQUENTIAL)  # read ahead, drop behind
            self._src = _open.Source(self.path, self._mm, self.size, self.max_chunk_size, self.max_index_size)
            o = _open.open_log(self._src, tolerant, ignore_index)
            self.version, self.header, self.indexed, self.torn_tail = o.version, o.header, o.indexed, o.torn_tail
            self.channels, self.chunks, self.stats, self.writer_stats = o.channels, o.chunks, o.stats, o.writer_stats
            self.warnings: list[CorruptionError] = o.warnings
            self.skipped_chunks: list[CorruptionError] = o.problems
            self._plan_order()
        except BaseException:
            self.close()
            raise

    def _plan_order(self) -> None:
        """Groups of chunks to load and merge together, in time order:
        chunks sorted by min_mono (ties in file order); a chunk joins the
        group while its min_mono is below the group's largest max_mono, up
        to max_merge_chunks chunks (docs/log-format.md §10)."""
        order = sorted(range(len(self.chunks)), key=lambda i: self.chunks[i].min_mono_ns)  # stable: ties in file order
        clusters: list[list[int]] = []
        hi = None
        for i in order:
            c = self.chunks[i]
            if clusters and c.min_mono_ns < hi and len(clusters[-1]) < self.max_merge:
                clusters[-1].append(i)
                hi = max(hi, c.max_mono_ns)
            else:
                clusters.append([i])
                hi = c.max_mono_ns
        self._clusters = clusters

    # ---- what the log says about itself ----

    @property
    def metadata(self) -> dict[str, str]:
        return self.header.metadata

    @property
    def created_wall_ns(self) -> int:
        return self.header.created_wall_ns

    def channel(self, key: int | str) -> fmt.Channel:
        """The channel with this id or name."""
        for c in self.channels:
            if c.id == key or c.name == key:
                return c
        raise KeyError(f"{self.path}: no channel {key!r}; channels: {', '.join(c.name for c in self.channels)}")

    def select(self, channels=None) -> list[int] | None:
        """Channel ids for a selection: None (all), or an id, a name, a glob
        (fnmatch: * also matches /) or an iterable of those. A selector that
        matches nothing is an error."""
        if channels is None:
            return None
        if isinstance(channels, (int, str)):
            channels = [channels]
        ids: list[int] = []
        for sel in channels:
            hit = [c.id for c in self.channels if c.id == sel or (isinstance(sel, str) and fnmatch.fnmatchcase(c.name, sel))]
            if not hit:
                raise ValueError(f"{self.path}: no channel matches {sel!r}; channels: {', '.join(c.name for c in self.channels)}")
            ids += [i for i in hit if i not in ids]
        return ids

    def session_epoch_ns(self) -> int:
        """The session epoch, from which every elapsed of this reader counts
        (decode, states, frames, to_pandas), as vrlog cat, export and the
        analyzer do (Go's analyzer.SessionEpoch, the same rule): the first
        capture stamp of the state channel whose first record arrived
        first; without a stamped state channel the earliest capture stamp of
        a non-internal channel; without any, the log's first receive wall
        stamp (0 for a log without chunks). From the channel statistics:
        reads no chunk. A snapshot (record --snapshot) stores its
        recording's epoch in vrlog.snapshot.session_epoch_ns, a cut or merge
        its inputs' in vrlog.session_epoch_ns (which comes first); a stored
        epoch wins: the log's own first state may be long after (Go reads it
        the same way)."""
        md = self.header.metadata
        for key in ("vrlog.session_epoch_ns", "vrlog.snapshot.session_epoch_ns"):
            stored = md.get(key)
            if stored is not None:
                try:
                    return int(stored)
                except ValueError:
                    raise ValueError(f"{self.path}: metadata {key}: {stored!r} is not an integer") from None
        if self._epoch_ns is None:
            self._epoch_ns = self._find_session_epoch()
        return self._epoch_ns

    def _find_session_epoch(self) -> int:
        by_id = {c.id: c for c in self.channels}
        live = [(by_id.get(st.channel), st) for st in self.stats if st.has_capture and st.records > 0]
        states = [st for c, st in live if c is not None and c.schema == wire.SCHEMA_STATE]
        if states:
            return min(states, key=lambda st: st.first_mono_ns).first_capture_ns  # min: the first of ties, as Go
        caps = [st.first_capture_ns for c, st in live if c is not None and c.transport != "internal"]
        if caps:
            return min(caps)
        return min((ci.min_wall_ns for ci in self.chunks), default=0)

    def _epoch(self, epoch_ns: int | None) -> int:
        return self.session_epoch_ns() if epoch_ns is None else epoch_ns

    # ---- records ----

    def _load(self, ci: fmt.ChunkInfo, want: set[int] | None, payloads: bool):
        """One chunk's records as columns (and its wanted payload blocks)."""
        src = self._src
        blk = src.block(ci.offset)
        if isinstance(blk, CorruptionError):
            raise blk
        bh, meta = blk
        if bh.kind != fmt.KIND_CHUNK or bh.meta_len != ci.meta_len or bh.data_len != ci.data_len:
            raise src.corrupt(ci.offset, "chunk: block header disagrees with the index")
        try:
            cm = _chunk.parse_chunk_meta(meta, bh.data_len, self.max_chunk_size)
        except _chunk.BadChunk as e:
            raise src.corrupt(ci.offset + fmt.BLOCK_HEADER_SIZE, f"chunk meta section: {e}") from None
        at = ci.offset + fmt.BLOCK_HEADER_SIZE + cm.records_at
        try:
            stored = meta[cm.records_at:]
            raw = self._zstd.block(cm.meta_compression, stored, cm.meta_raw_len)
            cols = _chunk.decode_records(raw, cm, self.max_record_size, self.use_numpy)
        except _DAMAGE as e:
            raise src.corrupt(at, f"record metadata: {e}") from None
        if cm.record_count != ci.records:
            raise src.corrupt(at, f"{cm.record_count} records, the index says {ci.records}")
        blocks: list[memoryview | None] = [None] * len(cm.groups)
        if payloads:
            off = ci.offset + fmt.BLOCK_HEADER_SIZE + ci.meta_len
            for i, g in enumerate(cm.groups):
                if want is None or g.channel in want:
                    data = src.view(off, g.stored_len)  # the memory map itself: no copy
                    if crc32c(data) != g.crc:
                        raise src.corrupt(off, f"payload block of channel {g.channel}: CRC mismatch")
                    if g.kind != 0:
                        try:
                            data = memoryview(self._zstd.block(g.kind, data, g.raw_len))
                        except _DAMAGE as e:
                            raise src.corrupt(off, f"payload block of channel {g.channel}: {e}") from None
                    blocks[i] = data
                off += g.stored_len
        return cm, cols, blocks

    def _window(self, start_ns, end_ns, clock):
        if clock not in ("mono", "wall"):
            raise ValueError(f"clock {clock!r}: want 'mono' (the receive monotonic clock) or 'wall'")
        return start_ns, end_ns, clock

    def _clusters_for(self, want, start_ns, end_ns, clock):
        for cl in self._clusters:
            infos = [self.chunks[i] for i in cl]
            if want is not None and not any(cc.channel in want for ci in infos for cc in ci.channels):
                continue
            lo = min(c.min_wall_ns if clock == "wall" else c.min_mono_ns for c in infos)
            hi = max(c.max_wall_ns if clock == "wall" else c.max_mono_ns for c in infos)
            if (start_ns is not None and hi < start_ns) or (end_ns is not None and lo >= end_ns):
                continue
            yield sorted(infos, key=lambda c: c.offset)  # file order: ties keep it

    def _cluster_columns(self, infos, want, start_ns, end_ns, clock, payloads):
        """A cluster's selected records, in receive order: (columns as lists
        or arrays, publisher ids, the record's payload block, blocks)."""
        parts = []
        for ci in infos:
            try:
                parts.append((ci, *self._load(ci, want, payloads)))
            except CorruptionError as e:
                if not self.tolerant:
                    raise
                self.skipped_chunks.append(e)
        if not parts:
            return None
        pubs, blocks = [], []
        cols = {k: [] for k in ("channel", "wall", "mono", "stamp", "capture", "seq", "has_sn", "sn", "pub", "hlen", "plen", "off", "block")}
        for ci, cm, c, blks in parts:
            gch = [g.channel for g in cm.groups]
            if self.use_numpy:
                group = c.group
                cols["channel"].append(np.asarray(gch, dtype=np.int64)[group])
                cols["pub"].append(np.where(c.pub >= 0, c.pub + len(pubs), -1))
                cols["block"].append(group + len(blocks))
            else:
                cols["channel"].append([gch[g] for g in c.group])
                cols["pub"].append([p + len(pubs) if p >= 0 else -1 for p in c.pub])
                cols["block"].append([g + len(blocks) for g in c.group])
            for k, v in (("wall", c.wall), ("mono", c.mono), ("stamp", c.stamp), ("capture", c.capture), ("seq", c.seq),
                         ("has_sn", c.has_sn), ("sn", c.sn), ("hlen", c.hlen), ("plen", c.plen), ("off", c.off)):
                cols[k].append(v)
            pubs += c.pubs
            blocks += blks
        need_sort = len(parts) > 1 or not parts[0][1].sorted
        if self.use_numpy:
            cols = {k: (np.concatenate(v) if len(v) > 1 else v[0]) for k, v in cols.items()}
            keep = np.ones(len(cols["mono"]), dtype=bool)
            if want is not None:
                keep &= np.isin(cols["channel"], list(want))
            t = cols["wall" if clock == "wall" else "mono"]
            if start_ns is not None:
                keep &= t >= start_ns
            if end_ns is not None:
                keep &= t < end_ns
            if need_sort:
                idx = np.argsort(cols["mono"], kind="stable")
                idx = idx[keep[idx]]
            else:
                idx = np.flatnonzero(keep)
            cols = {k: v[idx] for k, v in cols.items()}
        else:
            cols = {k: [x for part in v for x in part] for k, v in cols.items()}
            idx = range(len(cols["mono"]))
            if need_sort:
                idx = sorted(idx, key=cols["mono"].__getitem__)
            t = cols["wall" if clock == "wall" else "mono"]
            idx = [i for i in idx if (want is None or cols["channel"][i] in want)
                   and (start_ns is None or t[i] >= start_ns) and (end_ns is None or t[i] < end_ns)]
            cols = {k: [v[i] for i in idx] for k, v in cols.items()}
        return cols, pubs, blocks

    def records(self, channels=None, start_ns: int | None = None, end_ns: int | None = None, *,
                clock: str = "mono", payloads: bool = True) -> Iterator[Record]:
        """Records in receive order (RecvMonoNs, ties in file order).

        channels selects (see select); start_ns and end_ns bound the receive
        clock to [start_ns, end_ns): the monotonic one by default, the wall
        clock with clock="wall". payloads=False reads record metadata only:
        no payload block is read or decompressed.
        """
        want = self.select(channels)
        want = None if want is None else set(want)
        window = self._window(start_ns, end_ns, clock)
        # Chained per group of chunks: no Python frame runs per record.
        return itertools.chain.from_iterable(self._record_groups(want, *window, payloads))

    def _groups(self, want, start_ns, end_ns, clock, payloads):
        """(columns, publisher ids, payload blocks) per group of chunks read
        together, the selected records in receive order."""
        for infos in self._clusters_for(want, start_ns, end_ns, clock):
            got = self._cluster_columns(infos, want, start_ns, end_ns, clock, payloads)
            if got is not None:
                yield got

    def _record_groups(self, want, start_ns, end_ns, clock, payloads):
        for got in self._groups(want, start_ns, end_ns, clock, payloads):
            yield _records(*got, payloads)

    def iter_batches(self, channels=None, start_ns: int | None = None, end_ns: int | None = None, *, clock: str = "mono"):
        """Record metadata in receive order, one dict of columns per group of
        chunks (numpy arrays with numpy, else lists): TIMING_COLUMNS, with
        capture_ns, seq and publisher_sn 0 where has_stamp or
        has_publisher_sn is false. The fastest way through a log."""
        want = self.select(channels)
        want = None if want is None else set(want)
        for c, _, _ in self._groups(want, *self._window(start_ns, end_ns, clock), False):
            yield {"channel": c["channel"], "recv_wall_ns": c["wall"], "recv_mono_ns": c["mono"], "has_stamp": c["stamp"],
                   "capture_ns": c["capture"], "seq": c["seq"], "has_publisher_sn": c["has_sn"], "publisher_sn": c["sn"],
                   "header_len": c["hlen"], "payload_len": c["plen"]}

    def timing(self, channels=None, start_ns: int | None = None, end_ns: int | None = None, *, clock: str = "mono") -> dict:
        """All of iter_batches' columns in one dict."""
        out = {k: [] for k in TIMING_COLUMNS}
        for b in self.iter_batches(channels, start_ns, end_ns, clock=clock):
            for k in TIMING_COLUMNS:
                out[k].append(b[k])
        if self.use_numpy:
            dtypes = {"channel": np.uint16, "has_stamp": bool, "has_publisher_sn": bool, "seq": np.uint64, "publisher_sn": np.uint64}
            return {k: (np.concatenate(v) if v else np.zeros(0, dtype=dtypes.get(k, np.int64))).astype(dtypes.get(k, np.int64), copy=False)
                    for k, v in out.items()}
        return {k: [x for part in v for x in part] for k, v in out.items()}

    # ---- decoding ----

    def decode(self, rec: Record, epoch_ns: int | None = None):
        """Decode a record read with payloads by its channel's schema (wire
        module): State, Frame, TimeReply, ClockProbe, ReplayClock, a dict for
        a channel with a declared schema (declared module), or None for a
        raw channel; elapsed counts from epoch_ns, by default the
        session epoch (session_epoch_ns, as vrlog cat). Raises DecodeError
        for a payload that is not of the schema."""
        if rec.payload is None:
            raise ValueError("the record was read without payloads (payloads=False)")
        ch = self.channel(rec.channel)
        if declared.declared(ch.meta):  # a declared schema (docs/schemas.md): a dict, as vrlog cat --json
            return declared.decode(ch.schema, ch.meta, rec.header, rec.payload)
        return wire.decode(ch.schema, rec.header, rec.payload, self._epoch(epoch_ns))

    def states(self, channels=None, start_ns=None, end_ns=None, *, clock="mono", epoch_ns: int | None = None):
        """(Record, State) for every record of the selected state channels
        (all of them by default), in receive order; State is None where the
        payload does not decode. elapsed counts from epoch_ns, by default
        the session epoch."""
        epoch = self._epoch(epoch_ns)
        return self._decoded(wire.SCHEMA_STATE, lambda r: wire.decode_state(r.payload, epoch), channels, start_ns, end_ns, clock)

    def frames(self, channels=None, start_ns=None, end_ns=None, *, clock="mono", epoch_ns: int | None = None):
        """(Record, Frame) for every record of the selected frame channels
        (all of them by default), in receive order; Frame is None where the
        record does not decode. Frame.pixels() is a numpy array that shares
        the record's bytes: a read-only view of the log's memory map where
        the chunk stores frames uncompressed (the recorder's default), no
        copy. elapsed counts from epoch_ns, by default the session epoch."""
        epoch = self._epoch(epoch_ns)
        return self._decoded(wire.SCHEMA_FRAME, lambda r: wire.decode_frame(r.header, r.payload, epoch), channels, start_ns, end_ns, clock)

    def _decoded(self, schema, decode, channels, start_ns, end_ns, clock):
        if channels is None:
            channels = [c.id for c in self.channels if c.schema == schema]
            if not channels:
                return
        for r in self.records(channels, start_ns, end_ns, clock=clock):
            try:
                yield r, decode(r)
            except VrlogError:
                yield r, None

    def to_pandas(self, what: str = "timing", channels=None, start_ns=None, end_ns=None, *, clock="mono", epoch_ns=None):
        """A pandas DataFrame: what="timing" (one row per record, metadata
        only) or "states" (one row per state, decoded and flattened). See
        vrlog.frames."""
        from . import frames

        if what == "timing":
            return frames.timing(self, channels, start_ns, end_ns, clock)
        if what == "states":
            return frames.states(self, channels, start_ns, end_ns, clock, epoch_ns)
        raise ValueError(f"to_pandas({what!r}): want 'timing' or 'states'")

    # ---- lifetime ----

    def close(self) -> None:
        """Close the file. Records, frames and pixel arrays still held keep
        the memory map alive (they are views of it): it is unmapped when
        the last of them goes."""
        if self._src is not None:
            self._src.release()
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:  # views of the map are still in use
                pass
            self._mm = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "Log":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        how = "indexed" if self.indexed else "scanned"
        return f"<vrlog.Log {self.path!r} {how}, {len(self.channels)} channels, {len(self.chunks)} chunks>"


def _records(cols, pubs, blocks, payloads):
    """A group's Record objects, made as they are taken, header and payload
    views too: no Python frame runs per record, and no record is held
    longer than the caller holds it."""
    ch, wall, mono, hl, pl = (_list(cols[k]) for k in ("channel", "wall", "mono", "hlen", "plen"))
    capture, seq = _masked(cols["capture"], cols["stamp"]), _masked(cols["seq"], cols["stamp"])
    sn = _masked(cols["sn"], cols["has_sn"])
    pub = _lookup(pubs, cols["pub"]) if pubs else itertools.repeat(None)
    if payloads:
        of = _lookup(blocks, cols["block"])  # each record's payload block
        off = _list(cols["off"])
        if any(hl):
            at = list(map(operator.add, off, hl))
            heads = map(operator.getitem, of, map(slice, off, at))
        else:
            heads, at = itertools.repeat(_NO_HEADER), off
        bodies = map(operator.getitem, of, map(slice, at, map(operator.add, at, pl)))
    else:
        heads = bodies = itertools.repeat(None)
    return map(_make_record, zip(ch, wall, mono, capture, seq, pub, sn, hl, pl, heads, bodies))


# The header of every record that has none (read with payloads): one empty
# read-only view, shared.
_NO_HEADER = memoryview(b"")


def _list(v) -> list:
    return v.tolist() if hasattr(v, "tolist") else v


def _lookup(table: list, idx) -> list:
    """table[i] for each i of idx, None where i is -1."""
    if np is not None and hasattr(idx, "dtype"):
        t = np.empty(len(table) + 1, dtype=object)  # None
        for i, x in enumerate(table):
            t[i] = x  # one at a time: a view (a buffer) is stored as it is, not as an array
        return t[idx].tolist()  # -1 picks the trailing None
    return [table[i] if i >= 0 else None for i in idx]


def _masked(values, present):
    """values as a list (or an iterable), None where present is false."""
    if np is not None and hasattr(values, "dtype"):
        if present.all():
            return values.tolist()
        if not present.any():
            return itertools.repeat(None, len(values))
        out = values.astype(object)
        out[~present] = None
        return out.tolist()
    return [v if p else None for v, p in zip(values, present)]

