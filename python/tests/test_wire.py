"""The codec test vectors (testdata/codec, docs/wire-format.md): every valid
vector decodes to its JSON's values, every invalid one fails at its field
and offset."""

import glob
import hashlib
import json
import os

import numpy as np
import pytest

import vrlog
from conftest import TESTDATA

VECTORS = sorted(glob.glob(os.path.join(TESTDATA, "codec", "*.json")))


def load(name):
    with open(os.path.join(TESTDATA, "codec", name), "rb") as f:
        return f.read()


def as_dict(v):
    if isinstance(v, list):
        return [as_dict(x) for x in v]
    if hasattr(v, "__dataclass_fields__"):  # pass_: the field named pass (a Python keyword)
        return {k.rstrip("_"): as_dict(getattr(v, k)) for k in v.__dataclass_fields__}
    return v


def decode(vec):
    schema, epoch = vec["schema"], vec["epoch_ns"]
    if schema == vrlog.wire.SCHEMA_FRAME:
        payload = load(vec["payload_file"]) if "payload_file" in vec else None
        if payload is None:
            return vrlog.decode_frame_header(load(vec["header_file"]), epoch), None
        f = vrlog.decode_frame(load(vec["header_file"]), payload, epoch)
        return f.header, f
    return vrlog.decode(schema, b"", load(vec["file"]), epoch), None


def test_every_vector_is_covered():
    assert len(VECTORS) >= 25


@pytest.mark.parametrize("path", VECTORS, ids=os.path.basename)
def test_vector(path):
    with open(path) as f:
        vec = json.load(f)
    if "error" in vec:
        with pytest.raises(vrlog.DecodeError) as e:
            decode(vec)
        want = vec["error"]
        assert (e.value.field, e.value.offset, e.value.kind) == (want["field"], want["offset"], want["kind"]), str(e.value)
        assert vec["schema"] in str(e.value)
        return
    got, frame = decode(vec)
    want = dict(vec["value"])
    if want.get("sensors", 0) is None:  # zero sensors: the Go writer of the vectors says null
        want["sensors"] = []
    assert as_dict(got) == want
    if frame is not None:
        assert hashlib.sha256(frame.data).hexdigest() == vec["payload_sha256"]


@pytest.mark.parametrize("name", ["rgb8", "bgr8", "rgba8", "bgra8", "mono8", "mono16_padded", "empty"])
def test_pixels(name):
    vec = json.load(open(os.path.join(TESTDATA, "codec", f"frame_{name}.json")))
    f = vrlog.decode_frame(load(vec["header_file"]), load(vec["payload_file"]))
    h = f.header
    px = f.pixels()
    _, bpp, ch, dt = next(v for v in vrlog.wire.ENCODINGS.values() if v[0] == h.encoding)
    assert px.shape == ((h.height, h.width) if ch == 1 else (h.height, h.width, ch))
    assert px.dtype == np.dtype(dt)
    raw = np.frombuffer(f.data, dtype=np.uint8)
    for y in range(h.height):  # "pixel byte i is (7i+3) mod 256", rows of stride bytes
        row = raw[y * h.stride: y * h.stride + h.width * bpp]
        assert (row == (7 * np.arange(y * h.stride, y * h.stride + h.width * bpp) + 3) % 256).all()
        assert px[y].tobytes() == row.tobytes()


def test_clock_probe_offset_and_rtt():
    p = vrlog.decode_clock_probe(load("clock_probe.bin"))
    assert (p.offset_ns, p.rtt_ns) == (-2000, 104000)  # the vector's comment


def test_unknown_schema_is_raw():
    assert vrlog.decode("my.Thing/1", b"", b"anything") is None
