"""vrsdk wire format v1, written from docs/wire-format.md (not from the Go code).

Little-endian, natural alignment. State travels over zenoh; a frame travels
over iceoryx2 as a 48-byte user header (FrameHeader below) plus a u8 slice of
pixels.
"""

import ctypes
import struct

STATE_MAGIC = b"VRST"
FRAME_MAGIC = b"VRFM"
TIME_REPLY_MAGIC = b"VRTR"
CLOCK_PROBE_MAGIC = b"VRCP"
REPLAY_CLOCK_MAGIC = b"VRRC"
VERSION = 1

STATE_FIXED = 136
SENSOR_SIZE = 16
FRAME_HEADER_SIZE = 48

# value, name, bytes per pixel
ENCODINGS = {1: ("rgb8", 3), 2: ("bgr8", 3), 3: ("rgba8", 4), 4: ("bgra8", 4), 5: ("mono8", 1), 6: ("mono16", 2)}
ENCODING_BY_NAME = {name: (value, bpp) for value, (name, bpp) in ENCODINGS.items()}

# iceoryx2 type names of a frame service (what the static service config
# records; every publisher and subscriber of the service must agree on them).
FRAME_HEADER_TYPE_NAME = "vrsdk::FrameHeader"
FRAME_PAYLOAD_TYPE_NAME = "u8"


class WireError(ValueError):
    def __init__(self, schema, field, offset, kind):
        super().__init__(f"{schema}: {field} at byte {offset}: {kind}")
        self.schema, self.field, self.offset, self.kind = schema, field, offset, kind


def _vec(d, names):
    return [float(d[n]) for n in names]


def encode_state(v):
    """Encodes a state given as the test-vector JSON 'value' dict."""
    sensors = v.get("sensors") or []
    out = bytearray()
    out += struct.pack("<4sHHQqq", STATE_MAGIC, VERSION, len(sensors), v["seq"], v["t_ns"], v["estimate_t_ns"])
    out += struct.pack("<3d", *_vec(v["position"], "xyz"))
    out += struct.pack("<4d", *_vec(v["orientation"], "xyzw"))
    out += struct.pack("<3d", *_vec(v["linear_velocity"], "xyz"))
    out += struct.pack("<3d", *_vec(v["angular_velocity"], "xyz"))
    assert len(out) == STATE_FIXED
    for s in sensors:
        out += struct.pack("<IIq", s["id"], 0, s["t_ns"])
    return bytes(out)


def decode_state(b):
    schema = "vrsdk.State/1"
    if len(b) < 8:
        raise WireError(schema, "magic" if len(b) < 4 else "sensor_count", 0 if len(b) < 4 else 6, "truncated")
    magic, version, n = struct.unpack_from("<4sHH", b, 0)
    if magic != STATE_MAGIC:
        raise WireError(schema, "magic", 0, "bad magic")
    if version != VERSION:
        raise WireError(schema, "version", 4, "unsupported version")
    want = STATE_FIXED + SENSOR_SIZE * n
    if len(b) != want:
        raise WireError(schema, "length", len(b), f"need {want} bytes, have {len(b)}")
    seq, t_ns, est = struct.unpack_from("<Qqq", b, 8)
    f = struct.unpack_from("<13d", b, 32)
    sensors = []
    for i in range(n):
        sid, res, st = struct.unpack_from("<IIq", b, STATE_FIXED + SENSOR_SIZE * i)
        if res != 0:
            raise WireError(schema, f"sensor[{i}].reserved", STATE_FIXED + SENSOR_SIZE * i + 4, "reserved not zero")
        sensors.append({"id": sid, "t_ns": st})
    xyz = lambda a: {"x": a[0], "y": a[1], "z": a[2]}
    return {
        "seq": seq, "t_ns": t_ns, "estimate_t_ns": est,
        "position": xyz(f[0:3]),
        "orientation": {"x": f[3], "y": f[4], "z": f[5], "w": f[6]},
        "linear_velocity": xyz(f[7:10]), "angular_velocity": xyz(f[10:13]),
        "sensors": sensors,
    }


class FrameHeader(ctypes.Structure):
    """The frame header as the iceoryx2 user header (48 bytes, alignment 8)."""

    _fields_ = [
        ("magic", ctypes.c_char * 4),
        ("version", ctypes.c_uint16),
        ("encoding", ctypes.c_uint16),
        ("seq", ctypes.c_uint64),
        ("t_ns", ctypes.c_int64),
        ("camera_id", ctypes.c_uint32),
        ("width", ctypes.c_uint32),
        ("height", ctypes.c_uint32),
        ("stride", ctypes.c_uint32),
        ("data_size", ctypes.c_uint64),
    ]

    @staticmethod
    def type_name():
        return FRAME_HEADER_TYPE_NAME


assert ctypes.sizeof(FrameHeader) == FRAME_HEADER_SIZE and ctypes.alignment(FrameHeader) == 8


def frame_header(v):
    """A FrameHeader from a test-vector style dict (encoding by name or value)."""
    enc = v["encoding"]
    if isinstance(enc, str):
        enc = ENCODING_BY_NAME[enc][0]
    h = FrameHeader()
    h.magic = FRAME_MAGIC
    h.version = VERSION
    h.encoding = enc
    h.seq = v["seq"]
    h.t_ns = v["t_ns"]
    h.camera_id = v["camera_id"]
    h.width = v["width"]
    h.height = v["height"]
    h.stride = v["stride"]
    h.data_size = v["data_size"]
    return h


def encode_frame_header(v):
    return bytes(frame_header(v))


def decode_frame_header(b):
    schema = "vrsdk.Frame/1"
    if len(b) != FRAME_HEADER_SIZE:
        raise WireError(schema, "header", min(len(b), FRAME_HEADER_SIZE), f"need {FRAME_HEADER_SIZE} bytes, have {len(b)}")
    magic, version, enc, seq, t_ns, cam, w, h, stride, size = struct.unpack("<4sHHQqIIIIQ", b)
    if magic != FRAME_MAGIC:
        raise WireError(schema, "magic", 0, "bad magic")
    if version != VERSION:
        raise WireError(schema, "version", 4, "unsupported version")
    if enc not in ENCODINGS:
        raise WireError(schema, "encoding", 6, "unknown encoding")
    name, bpp = ENCODINGS[enc]
    if stride < w * bpp:
        raise WireError(schema, "stride", 36, "stride < width * bytes_per_pixel")
    if size != stride * h:
        raise WireError(schema, "data_size", 40, "data_size != stride * height")
    return {"seq": seq, "t_ns": t_ns, "camera_id": cam, "width": w, "height": h,
            "stride": stride, "encoding": name, "data_size": size}


def encode_time_reply(v):
    return struct.pack("<4sHHqq", TIME_REPLY_MAGIC, VERSION, 0, v["t2_ns"], v["t3_ns"])


def encode_clock_probe(v):
    return struct.pack("<4sHHqqqq", CLOCK_PROBE_MAGIC, VERSION, 0, v["t1_ns"], v["t2_ns"], v["t3_ns"], v["t4_ns"])


# vrlog.ReplayClock/1 (docs/wire-format.md, "Replay clock"): flag bits at offset 6.
REPLAY_CLOCK_FLAGS = (("capture", 1), ("restamped", 2), ("running", 4), ("record", 8))
REPLAY_CLOCK_FORMAT = "<4sHHqqQdII"  # 48 bytes


def encode_replay_clock(v):
    flags = sum(bit for name, bit in REPLAY_CLOCK_FLAGS if v[name])
    return struct.pack(REPLAY_CLOCK_FORMAT, REPLAY_CLOCK_MAGIC, VERSION, flags, v["log_time_ns"], v["position_ns"],
                       v["seq"], v["rate"], v["pass"], 0)


def decode_replay_clock(b):
    schema = "vrlog.ReplayClock/1"
    if b[:4] != REPLAY_CLOCK_MAGIC[:len(b[:4])]:
        raise WireError(schema, "magic", 0, "bad magic")
    if len(b) < 6:
        raise WireError(schema, "magic" if len(b) < 4 else "version", 0 if len(b) < 4 else 4, "truncated")
    (version,) = struct.unpack_from("<H", b, 4)
    if version != VERSION:
        raise WireError(schema, "version", 4, "unsupported version")
    size = struct.calcsize(REPLAY_CLOCK_FORMAT)
    if len(b) != size:
        raise WireError(schema, "end" if len(b) > size else "body", min(len(b), size), "trailing bytes" if len(b) > size else "truncated")
    _, _, flags, log_time, position, seq, rate, pass_, reserved = struct.unpack(REPLAY_CLOCK_FORMAT, b)
    known = sum(bit for _, bit in REPLAY_CLOCK_FLAGS)
    if flags & ~known:
        raise WireError(schema, "flags", 6, "invalid value")
    if reserved:
        raise WireError(schema, "reserved", 44, "invalid value")
    v = {"log_time_ns": log_time, "position_ns": position, "seq": seq, "rate": rate, "pass": pass_}
    for name, bit in REPLAY_CLOCK_FLAGS:
        v[name] = bool(flags & bit)
    return v


def seq_t_ns(channel_kind, header, payload):
    """(seq, t_ns) of a sample if it decodes, else (None, None)."""
    try:
        if channel_kind == "frame":
            d = decode_frame_header(header)
        else:
            d = decode_state(payload)
        return d["seq"], d["t_ns"]
    except (WireError, struct.error):
        return None, None
