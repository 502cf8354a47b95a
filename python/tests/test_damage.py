"""The rows of logfmt's corruption table (logfmt/corruption_test.go), made
from the golden log at the byte level: for each damage, what the strict
and the tolerant reader read, the torn tail, the warnings, and the error's
offset (docs/log-format.md §9)."""

import os
import struct
import subprocess
import sys
import threading

import pytest
import zstandard

import vrlog
from vrlog import _format as fmt
from conftest import TESTDATA

GOLDEN = os.path.join(TESTDATA, "logfmt", "golden-v1.vrlog")
DATA = open(GOLDEN, "rb").read()
with vrlog.open(GOLDEN) as _log:
    CHUNKS = _log.chunks
    HEADER = _log.header
    ALL = [r.recv_mono_ns for r in _log.records(payloads=False)]
FOOTER = fmt.parse_trailer(DATA[-24:], vrlog.crc32c)  # a drops block lies between the last chunk and the footer


def monos(log, payloads=True):
    return [r.recv_mono_ns for r in log.records(payloads=payloads)]


def without(*chunks):
    """ALL less the records of these chunks."""
    drop = []
    with vrlog.open(GOLDEN) as log:
        for c in chunks:
            drop += list(log._load(c, None, False)[1].mono)
    left = list(ALL)
    for m in drop:
        left.remove(m)
    return left


def write(tmp_path, data, name="x.vrlog"):
    p = tmp_path / name
    p.write_bytes(bytes(data))
    return str(p)


def flip(data, at):
    d = bytearray(data)
    d[at] ^= 0x10
    return bytes(d)


def zero_data(data, c):
    """data with chunk c's data section zeroed (power loss: its pages never
    reached the disk)."""
    d = bytearray(data)
    d[c.offset + 24 + c.meta_len:c.offset + c.size] = bytes(c.data_len)
    return bytes(d)


# ---- torn tails: not errors; everything before them is read ----

def test_zero_filled_tail(tmp_path):
    p = write(tmp_path, DATA[:FOOTER] + bytes(4096))
    for tolerant in (False, True):
        with vrlog.open(p, tolerant=tolerant) as log:
            assert log.torn_tail.offset == FOOTER and not log.warnings and not log.skipped_chunks
            assert monos(log) == ALL


def end_of(c):
    return c.offset + c.size


def test_zeroed_tail(tmp_path):
    """The last chunk's header and meta section reached the disk, its data
    and the page after it did not: the torn tail starts at that chunk."""
    last = CHUNKS[-1]
    p = write(tmp_path, zero_data(DATA[:end_of(last)], last) + bytes(4096))
    for tolerant in (False, True):
        with vrlog.open(p, tolerant=tolerant) as log:
            assert log.torn_tail.offset == last.offset and not log.warnings and not log.skipped_chunks
            assert [c.offset for c in log.chunks] == [c.offset for c in CHUNKS[:-1]]
            assert monos(log) == without(last)
            assert sum(s.records for s in log.stats) == len(without(last))  # statistics without the torn chunk
    # Two chunks in a row lost their data: the torn tail starts at the first.
    a, b = CHUNKS[1], CHUNKS[2]
    assert end_of(a) == b.offset
    p = write(tmp_path, zero_data(zero_data(DATA[:end_of(b)], b), a) + bytes(4096))
    with vrlog.open(p) as log:
        assert log.torn_tail.offset == a.offset and monos(log) == without(a, b, last)


@pytest.mark.parametrize("c", [CHUNKS[1], CHUNKS[-1]], ids=["followed by a chunk", "followed by a drops block"])
def test_zeroed_chunk_in_the_middle(tmp_path, c):
    """A chunk with a bad payload followed by any sound block is corruption,
    not a torn tail."""
    p = write(tmp_path, zero_data(DATA[:FOOTER], c))
    with vrlog.open(p) as log:
        assert log.torn_tail is None
        with pytest.raises(vrlog.CorruptionError) as e:
            monos(log)
        assert e.value.offset == c.offset + 24 + c.meta_len
    with vrlog.open(p, tolerant=True) as log:
        assert monos(log) == without(c) and [e.offset for e in log.skipped_chunks] == [c.offset + 24 + c.meta_len]


def test_short_written_tail(tmp_path):
    """A write cut short: the last chunk's bytes end inside its meta section
    and zeros fill the rest of the block; the meta section's CRC fails and
    nothing valid follows."""
    last = CHUNKS[-1]
    d = bytearray(DATA[:end_of(last)])
    d[last.offset + 24 + last.meta_len // 2:] = bytes(end_of(last) - (last.offset + 24 + last.meta_len // 2))
    p = write(tmp_path, d)
    with vrlog.open(p) as log:
        assert log.torn_tail.offset == last.offset + 24 and not log.warnings
        assert monos(log) == without(last)


def test_first_page_of_zeros(tmp_path):
    """Created and grown, and none of its data reached the disk."""
    with pytest.raises(vrlog.CorruptionError, match="torn tail") as e:
        vrlog.open(write(tmp_path, bytes(8192)))
    assert e.value.offset == 0


# ---- damage that costs no record: read around with a warning ----

def test_flipped_magic(tmp_path):
    for data in (DATA, DATA[:FOOTER]):
        p = write(tmp_path, flip(data, 3))
        with vrlog.open(p) as log:
            assert [w.offset for w in log.warnings] == [0] and log.version == (1, 1)  # the reader's version
            assert log.indexed == (data is DATA) and monos(log) == ALL and log.metadata == HEADER.metadata


def test_flipped_prelude_without_a_block_behind(tmp_path):
    """A damaged prelude with no valid block at offset 16 is not a log."""
    with pytest.raises(vrlog.NotVrlogError):
        vrlog.open(write(tmp_path, b"x" * 40 + DATA[40:]))


def test_flipped_header_block(tmp_path):
    """The header's metadata is lost; the creation time is the earliest
    receive time."""
    earliest = min(c.min_wall_ns for c in CHUNKS)
    for data, ignore in ((DATA, False), (DATA, True), (DATA[:FOOTER], False)):
        p = write(tmp_path, flip(data, 16 + 24 + 3))
        with vrlog.open(p, ignore_index=ignore) as log:
            assert [w.offset for w in log.warnings] == [16 + 24]
            assert log.metadata == {} and log.created_wall_ns == earliest and monos(log) == ALL


def test_flipped_header_length_no_footer(tmp_path):
    """A length of the header block was hit: no other sync marker lies
    before the next valid block, so the damage is that one block."""
    for at in (16 + 9, 16 + 1):  # a length, the sync marker
        p = write(tmp_path, flip(DATA[:FOOTER], at))
        with vrlog.open(p) as log:
            assert [w.offset for w in log.warnings] == [16] and monos(log) == ALL and not log.skipped_chunks


def test_header_missing(tmp_path):
    """A log whose first block is not a header block, its extent unknown: a
    strict reader refuses it, a tolerant one reads the chunks."""
    d = bytearray(DATA[:FOOTER])
    hdr = fmt.parse_block_header(d[16:40], vrlog.crc32c)
    first = 16 + hdr.size
    d[16:first] = b"VRBK" * (hdr.size // 4) + b"\0" * (hdr.size % 4)  # sync markers, none valid
    p = write(tmp_path, d)
    with pytest.raises(vrlog.CorruptionError) as e:
        vrlog.open(p)
    assert e.value.offset == 16
    with vrlog.open(p, tolerant=True) as log:
        assert monos(log) == ALL and [e.offset for e in log.skipped_chunks] == [16]


def test_flipped_footer(tmp_path):
    """Read by a linear scan, as a log without a footer; nothing skipped."""
    for at, warned in ((FOOTER + 24 + 5, FOOTER + 24), (FOOTER + 9, FOOTER), (len(DATA) - 3, len(DATA) - 24)):
        p = write(tmp_path, flip(DATA, at))
        for opts in ({}, {"tolerant": True}, {"ignore_index": True}):
            with vrlog.open(p, **opts) as log:
                assert not log.indexed and log.writer_stats is None
                assert [w.offset for w in log.warnings] == [warned], (at, opts)
                assert not log.skipped_chunks and log.torn_tail is None and monos(log) == ALL


def test_footer_index_that_fails_its_checks(tmp_path):
    """A CRC-valid footer whose index points outside the file: read by scan,
    the footer's offset the warning."""
    blk = fmt.parse_block_header(DATA[FOOTER:FOOTER + 24], vrlog.crc32c)
    body = bytearray(DATA[FOOTER + 24:FOOTER + 24 + blk.meta_len])
    f = fmt.parse_footer_body(bytes(body))
    # The first chunk entry's offset (its first u64) moved past the footer.
    first_chunk_at = bytes(body).index(struct.pack("<Q", f.chunks[0].offset))
    body[first_chunk_at:first_chunk_at + 8] = struct.pack("<Q", FOOTER)
    head = bytearray(DATA[FOOTER:FOOTER + 24])
    head[16:20] = struct.pack("<I", vrlog.crc32c(bytes(body)))
    head[20:24] = struct.pack("<I", vrlog.crc32c(bytes(head[:20])))
    p = write(tmp_path, DATA[:FOOTER] + bytes(head) + bytes(body) + DATA[FOOTER + 24 + len(body):])
    with vrlog.open(p) as log:
        assert not log.indexed and [w.offset for w in log.warnings] == [FOOTER] and monos(log) == ALL


# ---- lying raw lengths: a zstd frame that is not what its chunk declares ----

def zstd_frame(size, blocks):
    """A zstd frame declaring size bytes of content (none if None)."""
    if size is None:
        return b"\x28\xb5\x2f\xfd\x00\x50" + blocks  # no size, no checksum; 1 MiB window
    return b"\x28\xb5\x2f\xfd\x80\x50" + struct.pack("<I", size) + blocks


def rle_blocks(n):
    """RLE blocks of 128 KiB that inflate to n bytes, 4 bytes each."""
    out = bytearray()
    for left in range(n, 0, -(128 << 10)):
        h = (128 << 10) << 3 | 1 << 1 | (left <= 128 << 10)
        out += h.to_bytes(3, "little") + b"A"
    return bytes(out)


def compressed_blocks():
    """Compressed blocks that decode to 1 MiB."""
    src = bytes(ord("vrlog frames "[i % 13]) ^ (i >> 12 & 0xFF) for i in range(1 << 20))
    f = zstandard.ZstdCompressor(level=3, write_content_size=False, write_checksum=False).compress(src)
    assert f[4] == 0 and len(f) < 100_000  # no size, no checksum, no dictionary: the header is 6 bytes
    return f[6:]


LIES = {
    "bomb": lambda raw: zstd_frame(None, rle_blocks(1 << 30)),
    "declared bomb": lambda raw: zstd_frame(raw, rle_blocks(1 << 30)),
    "declaring more": lambda raw: zstd_frame(raw + 1, rle_blocks(1 << 30)),
    "inflating": lambda raw: zstd_frame(raw, compressed_blocks()),
    "trailing bytes": lambda raw: zstd_frame(raw, rle_blocks(128 << 10)) + b"xx",
}


def lying_chunk(c, lie, meta):
    """The golden log without its footer, with chunk c's record metadata
    (meta) or first payload block stored as the frame lie(raw length): the
    raw length is the true one and every CRC is right."""
    at = c.offset + 24
    m = bytearray(DATA[at:at + c.meta_len])
    data = DATA[at + c.meta_len:c.offset + c.size]
    ng = struct.unpack_from("<H", m, 4)[0]
    if meta:
        frame = lie(struct.unpack_from("<I", m, 40)[0])
        m = m[:48 + 72 * ng] + frame
        m[6] = 1  # zstd
        struct.pack_into("<I", m, 44, len(frame))
    else:
        raw, stored = struct.unpack_from("<II", m, 48 + 12)
        frame = lie(raw)
        m[48 + 2] = 1  # zstd
        struct.pack_into("<II", m, 48 + 16, len(frame), vrlog.crc32c(frame))
        data = frame + data[stored:]
    h = bytearray(DATA[c.offset:at])
    struct.pack_into("<III", h, 8, len(m), len(data), vrlog.crc32c(bytes(m)))
    struct.pack_into("<I", h, 20, vrlog.crc32c(bytes(h[:20])))
    return DATA[:c.offset] + bytes(h) + bytes(m) + data + DATA[c.offset + c.size:FOOTER]


@pytest.mark.parametrize("meta", [True, False], ids=["metadata", "payload"])
@pytest.mark.parametrize("lie", sorted(LIES))
@pytest.mark.parametrize("use_numpy", [True, False], ids=["numpy", "pure"])
def test_lying_raw_length(tmp_path, lie, meta, use_numpy):
    c = CHUNKS[1]
    d = lying_chunk(c, LIES[lie], meta)
    ng = struct.unpack_from("<H", d, c.offset + 24 + 4)[0]
    where = c.offset + 24 + 48 + 72 * ng  # the stored record metadata
    if not meta:
        where = c.offset + 24 + struct.unpack_from("<I", d, c.offset + 8)[0]  # the payload block
    p = write(tmp_path, d)
    with vrlog.open(p, use_numpy=use_numpy) as log:
        assert log.torn_tail is None and not log.warnings
        with pytest.raises(vrlog.CorruptionError) as e:
            monos(log)
        assert e.value.offset == where and "zstd" in str(e.value), str(e.value)
        if not meta:
            assert monos(log, payloads=False) == ALL  # the record metadata is sound
    with vrlog.open(p, tolerant=True, use_numpy=use_numpy) as log:
        assert monos(log) == without(c) and [x.offset for x in log.skipped_chunks] == [where]


def test_lying_raw_length_memory(tmp_path):
    """Reading the bombs allocates nothing for what they would inflate to:
    the child that reads them all stays far below the 1 GiB of one."""
    paths = [write(tmp_path, lying_chunk(CHUNKS[1], LIES[lie], meta), f"{lie}-{meta}.vrlog")
             for lie in LIES for meta in (True, False)]
    code = """
import resource, sys
import vrlog
for p in sys.argv[1:]:
    with vrlog.open(p, tolerant=True) as log:
        n = sum(1 for _ in log.records())
        assert len(log.skipped_chunks) == 1, p
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code, *paths], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) < 400 << 10, f"peak RSS {int(out.stdout) >> 10} MiB"  # ru_maxrss is in KiB


def test_check_frame():
    """The frame check alone: exactly one frame that can produce the raw
    length, and no more."""
    from vrlog._zstd import BadFrame, check_frame

    good = zstandard.ZstdCompressor(write_checksum=True).compress(b"abc" * 1000)
    check_frame(good, 3000)
    for frame, raw, why in ((good, 2999, "declares 3000"), (good + good, 3000, "in a stored block"),
                            (zstd_frame(100, b"\x01"), 100, "ends inside a block header"),
                            (b"\x50\x2a\x4d\x18" + bytes(8), 0, "skippable"), (b"PK\x03\x04\x00", 0, "magic"),
                            (zstd_frame(None, rle_blocks(1 << 30)), 300, "no content size"),
                            (zstd_frame(100, (100 << 3 | 1).to_bytes(3, "little") + bytes(99)), 100, "block of 100 bytes"),
                            (zstd_frame(None, (2 << 3 | 6 | 1).to_bytes(3, "little")), 2, "reserved"),
                            (zstd_frame(200 << 10, (64 << 3 | 1).to_bytes(3, "little") + bytes(64)), 200 << 10, "cannot decode")):
        with pytest.raises(BadFrame, match=why):
            check_frame(frame, raw)


def test_chunk_without_records(tmp_path):
    """A chunk that holds no record (never written, but not malformed):
    nothing to read in it, as in Go."""
    meta = struct.pack("<IHBBqqqqII", 0, 0, 0, 1, 0, 0, 0, 0, 0, 0)
    head = bytearray(b"VRBK" + bytes([3, 0, 0, 0]) + struct.pack("<III", len(meta), 0, vrlog.crc32c(meta)))
    head += struct.pack("<I", vrlog.crc32c(bytes(head)))
    at = CHUNKS[0].offset
    p = write(tmp_path, DATA[:at] + bytes(head) + meta + DATA[at:FOOTER])
    for use_numpy in (True, False):
        with vrlog.open(p, use_numpy=use_numpy) as log:
            assert [c.records for c in log.chunks] == [0] + [c.records for c in CHUNKS]
            assert monos(log) == ALL and monos(log, payloads=False) == ALL and not log.warnings


# ---- not regular files ----

def test_fifo(tmp_path):
    """A FIFO without a writer is refused at once (opening it would block),
    saying what to do; so is a directory."""
    fifo = str(tmp_path / "stream.vrlog")
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(_refusal(fifo)), daemon=True)
    t.start()
    t.join(10)
    assert got, "vrlog.open blocks on a FIFO without a writer"
    assert isinstance(got[0], vrlog.NotRegularError) and "save the stream to a file" in str(got[0]) and fifo in str(got[0])
    assert isinstance(_refusal(str(tmp_path)), vrlog.NotRegularError)


def test_pipe():
    """`cat run.vrlog | python -c '...vrlog.open("/dev/stdin")'`: refused."""
    code = "import vrlog\ntry:\n    vrlog.open('/dev/stdin')\nexcept vrlog.NotRegularError as e:\n    print(e)\n"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(GOLDEN, "rb") as f:
        cat = subprocess.Popen(["cat"], stdin=f, stdout=subprocess.PIPE)
        out = subprocess.run([sys.executable, "-c", code], stdin=cat.stdout, capture_output=True, text=True, env=env, timeout=60)
        cat.stdout.close()
        cat.wait()
    assert "a pipe or FIFO" in out.stdout, (out.stdout, out.stderr)


def _refusal(path):
    try:
        vrlog.open(path).close()
    except vrlog.VrlogError as e:
        return e
    return None
