"""The reader on the golden logs, the sample (against what the simulator
published), and on cut, damaged and foreign files. python/reader_test.go
compares it with the Go reader record by record."""

import dataclasses
import hashlib
import json
import os
import struct

import numpy as np
import pytest

import vrlog
from conftest import TESTDATA

GOLDEN = os.path.join(TESTDATA, "logfmt", "golden-v1.vrlog")
GOLDEN_ZSTD = os.path.join(TESTDATA, "logfmt", "golden-v1-zstd.vrlog")
GOLDEN_11 = os.path.join(TESTDATA, "logfmt", "golden-v1.1.vrlog")  # format 1.1: the same records
GOLDEN_LZ4 = os.path.join(TESTDATA, "logfmt", "golden-v1.1-lz4.vrlog")  # and LZ4 payload blocks
SAMPLE = os.path.join(TESTDATA, "sample.vrlog")


def key(r):
    return (r.channel, r.recv_wall_ns, r.recv_mono_ns, r.capture_ns, r.seq, r.publisher_id, r.publisher_sn,
            r.header_len, r.payload_len, r.header, r.payload)


@pytest.mark.parametrize("path", [GOLDEN, GOLDEN_ZSTD, GOLDEN_11, GOLDEN_LZ4])
def test_golden(path):
    with vrlog.open(path) as log:
        assert log.indexed and log.torn_tail is None and not log.skipped_chunks
        assert log.version == ((1, 1) if "v1.1" in path else (1, 0))
        assert log.metadata["host"] == "golden"
        assert [(c.id, c.name, c.transport, c.schema) for c in log.channels] == [
            (1, "vr/r1/state", "zenoh", "vrsdk.State/1"), (2, "cam0", "iceoryx2", "vrsdk.Frame/1"),
            (3, "vrlog/clock", "internal", "vrlog.ClockProbe/1")]
        assert {s.channel: s.drops for s in log.stats} == {1: 1, 2: 3, 3: 0}
        recs = list(log.records())
        assert len(recs) == 34 == sum(c.records for c in log.chunks)
        monos = [r.recv_mono_ns for r in recs]
        assert monos == sorted(monos)
        by = {}
        for r in recs:
            by[r.channel] = by.get(r.channel, 0) + 1
        assert by == {s.channel: s.records for s in log.stats}


@pytest.mark.parametrize("path", [GOLDEN, GOLDEN_ZSTD, GOLDEN_LZ4, SAMPLE])
def test_decoders_and_modes_agree(path):
    """numpy and pure Python, index and scan, payloads or not: the same records."""
    with vrlog.open(path) as log:
        want = [key(r) for r in log.records()]
        meta = [key(r)[:9] for r in log.records(payloads=False)]
    assert meta == [k[:9] for k in want]
    for opts in ({"use_numpy": False}, {"ignore_index": True}, {"ignore_index": True, "use_numpy": False}):
        with vrlog.open(path, **opts) as log:
            assert [key(r) for r in log.records()] == want, opts


def test_sample_against_truth():
    """Every sample the simulator published (testdata/sample.truth.jsonl),
    byte for byte, with its seq and t_ns."""
    truth = [json.loads(line) for line in open(os.path.join(TESTDATA, "sample.truth.jsonl"))]
    with vrlog.open(SAMPLE) as log:
        names = {c.id: c.name for c in log.channels}
        got = sorted((names[r.channel], r.seq, r.capture_ns, hashlib.sha256(r.header).hexdigest(),
                      hashlib.sha256(r.payload).hexdigest(), r.payload_len)
                     for r in log.records(["vr/r1/state", "vr/r1/camera/front"]))
    assert got == sorted((t["channel"], t["seq"], t["t_ns"], t["header_sha256"], t["payload_sha256"], t["size"]) for t in truth)


def test_sample_decodes():
    with vrlog.open(SAMPLE) as log:
        states = list(log.states())
        frames = list(log.frames())
        probes = [log.decode(r) for r in log.records("vrlog/clock/*")]
    assert len(states) == 300 and all(s is not None for _, s in states)
    assert all(r.capture_ns == s.t_ns and r.seq == s.seq for r, s in states)
    assert len(frames) == 358
    r, f = frames[0]
    assert f.pixels().shape == (48, 64, 3) and f.header.encoding == "rgb8" and r.capture_ns == f.header.t_ns
    assert len(probes) == 13 and all(isinstance(p, vrlog.ClockProbe) for p in probes)
    offsets = sorted(p.offset_ns for p in probes)
    assert 1.5e6 < offsets[len(offsets) // 2] < 2.5e6  # the sample's clock runs 2 ms ahead


def test_selection_and_windows():
    with vrlog.open(SAMPLE) as log:
        all_ = list(log.records(payloads=False))
        assert log.select("vr/*/state") == [3] and log.select(["vr/r1/state", 2, "vr/r1/state"]) == [3, 2]
        with pytest.raises(ValueError, match="no channel matches"):
            log.select("nope/*")
        mid = all_[len(all_) // 2]
        t0, t1 = mid.recv_mono_ns, mid.recv_mono_ns + 2_000_000_000
        win = list(log.records(start_ns=t0, end_ns=t1, payloads=False))
        assert [key(r) for r in win] == [key(r) for r in all_ if t0 <= r.recv_mono_ns < t1]
        w0, w1 = mid.recv_wall_ns, mid.recv_wall_ns + 1_000_000_000
        win = list(log.records(3, w0, w1, clock="wall", payloads=False))
        assert [key(r) for r in win] == [key(r) for r in all_ if r.channel == 3 and w0 <= r.recv_wall_ns < w1]
        assert log.session_epoch_ns() == next(r.capture_ns for r in all_ if r.channel == 3)


def test_timing_columns_are_the_records():
    with vrlog.open(SAMPLE) as log:
        recs = list(log.records(payloads=False))
        t = log.timing()
    assert t["recv_mono_ns"].dtype == np.int64 and t["seq"].dtype == np.uint64
    assert t["recv_mono_ns"].tolist() == [r.recv_mono_ns for r in recs]
    assert t["capture_ns"].tolist() == [r.capture_ns or 0 for r in recs]
    assert t["has_stamp"].tolist() == [r.has_stamp for r in recs]


def test_to_pandas_exact():
    with vrlog.open(SAMPLE) as log:
        recs = list(log.records(payloads=False))
        df = log.to_pandas()
        st = log.to_pandas("states")
        epoch = log.session_epoch_ns()
    assert len(df) == len(recs)
    assert str(df["recv_wall_ns"].dtype) == "int64" and str(df["t_ns"].dtype) == "Int64"
    assert df["recv_wall_ns"].tolist() == [r.recv_wall_ns for r in recs]
    assert [None if v is None or v is np.nan else int(v) for v in df["t_ns"].astype(object).where(df["t_ns"].notna(), None)] == \
        [r.capture_ns for r in recs]
    assert df["t_ns"].isna().sum() == 13  # the clock probes carry no capture stamp
    assert len(st) == 300 and st["decoded"].all() and st.attrs["epoch_ns"] == epoch
    assert str(st["t_ns"].dtype) == "Int64" and str(st["position.x"].dtype) == "float64"
    assert st["elapsed"].iloc[0] == 0.0 and {"sensors.3.t_ns", "angular_velocity.z"} <= set(st.columns)


def copy(tmp_path, data, name="x.vrlog"):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_cut_logs(tmp_path):
    """An unfinished recording: read by scan, the records of the complete
    chunks, a torn tail where the incomplete one starts."""
    data = open(GOLDEN, "rb").read()
    with vrlog.open(GOLDEN) as log:
        chunks = log.chunks
        full = [key(r) for r in log.records()]
    for ci, c in enumerate(chunks):
        for cut in (c.offset, c.offset + 30, c.offset + c.size - 1):
            with vrlog.open(copy(tmp_path, data[:cut])) as log:
                assert not log.indexed
                assert (log.torn_tail.offset if log.torn_tail else None) == (c.offset if cut > c.offset else None)
                got = [key(r) for r in log.records()]
                assert len(got) == sum(x.records for x in chunks[:ci])
                assert set(got) <= set(full)


def test_damage(tmp_path):
    data = bytearray(open(GOLDEN, "rb").read())
    with vrlog.open(GOLDEN) as log:
        c = log.chunks[1]
        n = sum(x.records for x in log.chunks)
    data[c.offset + c.size - 3] ^= 0x10  # inside the chunk's last payload block
    p = copy(tmp_path, bytes(data))
    with vrlog.open(p) as log:
        with pytest.raises(vrlog.CorruptionError) as e:
            list(log.records())
        assert c.offset < e.value.offset < c.offset + c.size and p in str(e.value)
        assert len(list(log.records(payloads=False))) == n  # metadata is intact
    with vrlog.open(p, tolerant=True) as log:
        assert len(list(log.records())) == n - c.records and len(log.skipped_chunks) == 1


def test_bad_files(tmp_path):
    with pytest.raises(vrlog.CorruptionError):
        vrlog.open(copy(tmp_path, b""))  # cut before the prelude's end, like a recorder killed at once
    with pytest.raises(vrlog.NotVrlogError):
        vrlog.open(copy(tmp_path, b"PK\x03\x04 not a log at all, a zip"))
    with pytest.raises(vrlog.CorruptionError):
        vrlog.open(copy(tmp_path, vrlog._format.MAGIC + b"\x01\0"))  # cut inside the prelude
    data = bytearray(open(GOLDEN, "rb").read())
    data[8:10] = struct.pack("<H", 2)
    data[12:16] = struct.pack("<I", vrlog.crc32c(bytes(data[:12])))
    with pytest.raises(vrlog.UnsupportedVersionError):
        vrlog.open(copy(tmp_path, bytes(data)))
    data[12] ^= 1  # the version is not to be trusted: a valid block follows, the log is read as 1.1
    with vrlog.open(copy(tmp_path, bytes(data))) as log:
        assert log.version == (1, 1) and [w.offset for w in log.warnings] == [12]
    data[16] ^= 1  # and no valid block follows: not a log this reader can read
    with pytest.raises(vrlog.CorruptionError) as e:
        vrlog.open(copy(tmp_path, bytes(data)))
    assert e.value.offset == 12


def test_lz4_blocks_are_bounded():
    """An LZ4 block decodes to exactly the raw length its chunk declares:
    one that would inflate further (a bomb of 4 KiB for 1 MiB) is refused,
    never allocated; so is a length no block of its size can produce."""
    import lz4.block
    from vrlog import _zstd

    data = b"state " * 1000
    block = lz4.block.compress(data, store_size=False)
    assert _zstd.decompress_lz4(block, len(data)) == data
    bomb = lz4.block.compress(b"A" * (1 << 20), store_size=False)
    for src, raw in ((bomb, 8), (block, len(data) - 1), (block, len(data) + 1), (block[:10], 1 << 30), (b"\x00", 0)):
        with pytest.raises(_zstd.BadFrame):
            _zstd.decompress_lz4(src, raw)


def test_crc32c():
    assert vrlog.crc32c(b"123456789") == 0xE3069283  # the check value of CRC-32C
    rng = np.random.default_rng(1)
    for n in (0, 5, 4096, 70001, 1 << 20):
        b = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert vrlog.crc32c(b) == vrlog._crc.crc32c_py(b)


def test_installed():
    """`pip install ./python` put this package in the venv (make peers)."""
    import importlib.metadata

    assert importlib.metadata.version("vrlog") == vrlog.__version__


def test_without_numpy():
    """Pure Python plus zstandard: numpy is optional. A child interpreter
    that cannot import numpy reads the same records."""
    import subprocess
    import sys

    code = f"""
import sys, hashlib
sys.modules["numpy"] = None  # import numpy now fails
sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r})
import vrlog
assert vrlog._crc._np is None and vrlog._chunk.np is None
for p in sys.argv[1:]:
    with vrlog.open(p) as log:
        for r in log.records():
            print(r.channel, r.recv_wall_ns, r.recv_mono_ns, r.capture_ns, r.seq, r.publisher_sn, hashlib.sha256(r.payload).hexdigest())
        t = log.timing()
        assert isinstance(t["recv_mono_ns"], list)
"""
    out = subprocess.run([sys.executable, "-c", code, GOLDEN_ZSTD, SAMPLE], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    want = []
    for p in (GOLDEN_ZSTD, SAMPLE):
        with vrlog.open(p) as log:
            want += [f"{r.channel} {r.recv_wall_ns} {r.recv_mono_ns} {r.capture_ns} {r.seq} {r.publisher_sn} "
                     f"{hashlib.sha256(r.payload).hexdigest()}" for r in log.records()]
    assert out.stdout.splitlines() == want


def test_states_frame_is_every_state():
    """to_pandas("states") (vectorized) holds what decode_state gives per
    record, elapsed from the same (session) epoch by default."""
    with vrlog.open(SAMPLE) as log:
        df = log.to_pandas("states")
        per = list(log.states())
        assert df.attrs["epoch_ns"] == log.session_epoch_ns() != 0
    assert len(df) == len(per)
    from vrlog import frames

    floats = [f"{v}.{a}" for v, axes in frames._VEC.items() for a in axes]
    rows = df.to_dict("records")
    for row, (r, s) in zip(rows, per):
        assert (row["recv_mono_ns"], row["seq"], row["t_ns"], row["estimate_t_ns"], row["elapsed"]) == \
            (r.recv_mono_ns, s.seq, s.t_ns, s.estimate_t_ns, s.elapsed)
        assert [row[c] for c in floats] == [getattr(getattr(s, c.split(".")[0]), c.split(".")[1]) for c in floats]
        assert row["sensor_count"] == len(s.sensors)
        assert [(row[f"sensors.{k}.id"], row[f"sensors.{k}.t_ns"]) for k in range(len(s.sensors))] == [(x.id, x.t_ns) for x in s.sensors]


def test_crc_c_package_and_fallback_agree():
    """The C-backed crc32c package is what the reader uses (a dependency:
    make peers and CI install it); the numpy and pure fallbacks agree with
    it on every length, on bytes and on views of a memory map."""
    import mmap
    import random

    from vrlog import _crc

    assert _crc.IMPLEMENTATION == "crc32c", "the crc32c package is missing: pip install ./python"
    rnd = random.Random(7)
    data = bytes(rnd.getrandbits(8) for _ in range(300_000))
    with open(SAMPLE, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        mv = memoryview(mm)
        for n in (0, 1, 7, 63, 64, 4095, 4096, 70_001, 300_000):
            for buf in (data[:n], memoryview(data)[1:n + 1], mv[13:13 + n]):
                assert _crc.crc32c(buf) == _crc.crc32c_fallback(buf), n
            if n < 5000:
                assert _crc.crc32c_py(data[:n]) == _crc.crc32c(data[:n])
        del buf
        mv.release()
    assert vrlog.crc32c(b"123456789") == 0xE3069283


@pytest.mark.parametrize("path", [GOLDEN_ZSTD, GOLDEN_LZ4, SAMPLE])
def test_payloads_are_read_only_views(path):
    """header and payload are read-only memoryviews (one empty one where a
    record has no header), made as the records are taken: held past their
    group of chunks, they read what a loop that copies them read."""
    with vrlog.open(path) as log:
        copied = [(bytes(r.header), bytes(r.payload)) for r in log.records()]
        held = list(log.records())
    assert [(bytes(r.header), bytes(r.payload)) for r in held] == copied
    for r in held:
        for v, n in ((r.header, r.header_len), (r.payload, r.payload_len)):
            assert isinstance(v, memoryview) and v.readonly and len(v) == n
    assert any(r.header_len == 0 for r in held) and any(r.header_len for r in held)


def test_frames_are_views_of_the_map():
    """A frame stored uncompressed comes out without a copy: Frame.data is
    a view of the log's memory map and pixels() an array over it (read
    only); the log closes while views are held, and they stay valid."""
    with vrlog.open(SAMPLE) as log:
        got = [(r, f) for r, f in log.frames() if f is not None]
        views = [(r, f) for r, f in got if f.data.obj is log._mm]
        assert views, "no frame of the sample is stored raw"
        r, f = views[0]
        px = f.pixels()
        assert not px.flags.writeable and np.shares_memory(px, np.frombuffer(f.data, np.uint8))
        assert px.tobytes() == bytes(r.payload) and r.payload.obj is log._mm
    # Closed with views alive: still readable, unmapped when they go.
    assert px.reshape(-1)[:16].tobytes() == bytes(f.data[:16])
def test_snapshot_session_epoch():
    """A snapshot (record --snapshot) stores its recording's epoch: it wins
    over the snapshot's own first state, which may be long after it."""
    with vrlog.open(SAMPLE) as log:
        own = log.session_epoch_ns()
        md = dict(log.header.metadata)
        md["vrlog.snapshot.session_epoch_ns"] = str(own - 75_000_000_000)
        log.header = dataclasses.replace(log.header, metadata=md)
        assert log.session_epoch_ns() == own - 75_000_000_000
        st = log.to_pandas("states")
        assert st["elapsed"].iloc[0] == pytest.approx(75.0)
        md["vrlog.snapshot.session_epoch_ns"] = "x"
        log.header = dataclasses.replace(log.header, metadata=md)
        with pytest.raises(ValueError, match="session_epoch_ns"):
            log.session_epoch_ns()


def test_stored_session_epoch():
    """A cut or merge stores its source's epoch in vrlog.session_epoch_ns:
    it wins over the log's own first state and over a snapshot's key."""
    with vrlog.open(SAMPLE) as log:
        own = log.session_epoch_ns()
        md = dict(log.header.metadata)
        md["vrlog.snapshot.session_epoch_ns"] = str(own - 75_000_000_000)
        md["vrlog.session_epoch_ns"] = str(own - 25_000_000_000)
        log.header = dataclasses.replace(log.header, metadata=md)
        assert log.session_epoch_ns() == own - 25_000_000_000
        assert log.to_pandas("states")["elapsed"].iloc[0] == pytest.approx(25.0)
        md["vrlog.session_epoch_ns"] = "x"
        log.header = dataclasses.replace(log.header, metadata=md)
        with pytest.raises(ValueError, match="vrlog.session_epoch_ns"):
            log.session_epoch_ns()
