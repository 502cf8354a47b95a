"""The simulator's wire format (docs/wire-format.md): State, Frame and the
clock-sync messages, decoded strictly, with the schema, field and byte
offset of the first problem in every error.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .errors import DecodeError

SCHEMA_STATE = "vrsdk.State/1"
SCHEMA_FRAME = "vrsdk.Frame/1"
SCHEMA_TIME_REPLY = "vrsdk.TimeReply/1"
SCHEMA_CLOCK_PROBE = "vrlog.ClockProbe/1"
SCHEMA_REPLAY_CLOCK = "vrlog.ReplayClock/1"

STATE_FIXED_SIZE = 136
STATE_SENSOR_SIZE = 16
FRAME_HEADER_SIZE = 48


def elapsed(t_ns: int, epoch_ns: int = 0) -> float:
    """(t_ns - epoch_ns) / 1e9 in seconds; epoch 0 gives unix seconds."""
    return float(t_ns - epoch_ns) / 1e9  # as Go: the difference rounded to a double, then divided


@dataclass
class Vec3:
    x: float
    y: float
    z: float


@dataclass
class Quat:
    x: float
    y: float
    z: float
    w: float


@dataclass
class Sensor:
    id: int
    t_ns: int


@dataclass
class State:
    """One robot state snapshot (vrsdk.State/1)."""

    seq: int
    t_ns: int
    elapsed: float
    estimate_t_ns: int
    position: Vec3
    orientation: Quat
    linear_velocity: Vec3
    angular_velocity: Vec3
    sensors: list[Sensor] = field(default_factory=list)


# encoding value -> (name, bytes per pixel, channels, numpy dtype)
ENCODINGS = {
    1: ("rgb8", 3, 3, "u1"),
    2: ("bgr8", 3, 3, "u1"),
    3: ("rgba8", 4, 4, "u1"),
    4: ("bgra8", 4, 4, "u1"),
    5: ("mono8", 1, 1, "u1"),
    6: ("mono16", 2, 1, "<u2"),
}


@dataclass
class FrameHeader:
    """A camera frame's header (the iceoryx2 user header of vrsdk.Frame/1)."""

    seq: int
    t_ns: int
    elapsed: float
    camera_id: int
    width: int
    height: int
    stride: int
    encoding: str
    data_size: int


@dataclass
class Frame:
    """A camera frame: its header and its pixel bytes (rows of stride bytes):
    data is the payload as given, not copied (from Log: a read-only
    memoryview, of the memory map where the chunk is uncompressed)."""

    header: FrameHeader
    data: bytes | memoryview

    @property
    def elapsed(self) -> float:
        """The frame's capture time in seconds since the epoch it was
        decoded with (the session epoch unless told otherwise): its
        header's elapsed."""
        return self.header.elapsed

    @property
    def t_ns(self) -> int:
        """The frame's capture stamp, unix ns: its header's t_ns."""
        return self.header.t_ns

    def pixels(self):
        """The pixels as a numpy array without row padding, sharing the
        frame's bytes: shape (height, width, channels) for rgb8, bgr8, rgba8
        and bgra8, (height, width) for mono8 and mono16 (little-endian uint16).
        Needs numpy."""
        import numpy as np

        h = self.header
        code = next(k for k, v in ENCODINGS.items() if v[0] == h.encoding)
        _, bpp, ch, dt = ENCODINGS[code]
        dtype = np.dtype(dt)
        buf = self.data if len(self.data) else bytes(max(1, h.stride))
        if ch == 1:
            return np.ndarray((h.height, h.width), dtype, buffer=buf, strides=(h.stride, bpp))
        return np.ndarray((h.height, h.width, ch), dtype, buffer=buf, strides=(h.stride, bpp, 1))


@dataclass
class TimeReply:
    t2_ns: int
    t3_ns: int


@dataclass
class ClockProbe:
    """One clock-sync exchange: T1 and T4 on the recorder's clock, T2 and T3
    on the simulator's."""

    t1_ns: int
    t2_ns: int
    t3_ns: int
    t4_ns: int

    @property
    def offset_ns(self) -> int:
        """Simulator clock minus recorder clock: ((T2-T1)+(T3-T4))/2 (Go's
        integer division, truncating toward zero)."""
        return _div2((self.t2_ns - self.t1_ns) + (self.t3_ns - self.t4_ns))

    @property
    def rtt_ns(self) -> int:
        return (self.t4_ns - self.t1_ns) - (self.t3_ns - self.t2_ns)


@dataclass
class ReplayClock:
    """A replay's position on the log's clock (replay --clock-key,
    docs/wire-format.md "Replay clock")."""

    log_time_ns: int
    position_ns: int
    seq: int
    rate: float
    pass_: int
    capture: bool
    restamped: bool
    running: bool
    record: bool


def _div2(v: int) -> int:
    return -((-v) // 2) if v < 0 else v // 2


_STATE_FIELDS = [("magic", 0), ("version", 4), ("sensor_count", 6), ("seq", 8), ("t_ns", 16),
                 ("estimate_t_ns", 24), ("position", 32), ("orientation", 56),
                 ("linear_velocity", 88), ("angular_velocity", 112)]
_FRAME_FIELDS = [("magic", 0), ("version", 4), ("encoding", 6), ("seq", 8), ("t_ns", 16),
                 ("camera_id", 24), ("width", 28), ("height", 32), ("stride", 36), ("data_size", 40)]


def _field_at(fields, off: int):
    """The field that holds byte off, and where it starts."""
    name, start = fields[0]
    for n, s in fields:
        if s <= off:
            name, start = n, s
    return name, start


def _prefix(schema: str, b: bytes, magic: bytes, fields) -> None:
    """Magic and version; a buffer too short for them is truncated there."""
    if b[:4] != magic[:len(b[:4])]:
        raise DecodeError(schema, "magic", 0, "bad magic", f"expected {magic.decode()}, have {b[:4].hex()}")
    if len(b) < 4:
        raise DecodeError(schema, "magic", 0, "truncated", f"need {len(magic) + 2} bytes, have {len(b)}")
    if len(b) < 6:
        raise DecodeError(schema, "version", 4, "truncated", f"need 6 bytes, have {len(b)}")
    v = struct.unpack_from("<H", b, 4)[0]
    if v != 1:
        raise DecodeError(schema, "version", 4, "unsupported version", f"version {v}, this decoder knows 1")


def _exact(schema: str, b: bytes, want: int, fields) -> None:
    if len(b) < want:
        name, start = _field_at(fields, len(b))
        raise DecodeError(schema, name, start, "truncated", f"need {want} bytes, have {len(b)}")
    if len(b) > want:
        raise DecodeError(schema, "end", want, "trailing bytes", f"{want} bytes expected, have {len(b)}")


_STATE_FIXED = struct.Struct("<4sHHQqq13d")
_SENSOR = struct.Struct("<IIq")


def decode_state(b: bytes, epoch_ns: int = 0) -> State:
    """Decode a vrsdk.State/1 payload; elapsed is (t_ns - epoch_ns) / 1e9."""
    b = bytes(b)
    _prefix(SCHEMA_STATE, b, b"VRST", _STATE_FIELDS)
    if len(b) < 8:
        raise DecodeError(SCHEMA_STATE, "sensor_count", 6, "truncated", f"need {STATE_FIXED_SIZE} bytes, have {len(b)}")
    n = struct.unpack_from("<H", b, 6)[0]
    want = STATE_FIXED_SIZE + STATE_SENSOR_SIZE * n
    if len(b) < STATE_FIXED_SIZE:
        _exact(SCHEMA_STATE, b, want, _STATE_FIELDS)
    if len(b) < want:
        i = (len(b) - STATE_FIXED_SIZE) // STATE_SENSOR_SIZE
        off = STATE_FIXED_SIZE + i * STATE_SENSOR_SIZE
        name, rem = f"sensor[{i}].id", len(b) - off
        if rem >= 8:
            name, off = f"sensor[{i}].t_ns", off + 8
        elif rem >= 4:
            name, off = f"sensor[{i}].reserved", off + 4
        raise DecodeError(SCHEMA_STATE, name, off, "truncated", f"need {want} bytes for {n} sensors, have {len(b)}")
    _exact(SCHEMA_STATE, b, want, _STATE_FIELDS)
    _, _, _, seq, t, est, *f = _STATE_FIXED.unpack_from(b)
    sensors = []
    for i in range(n):
        sid, reserved, st = _SENSOR.unpack_from(b, STATE_FIXED_SIZE + i * STATE_SENSOR_SIZE)
        if reserved:
            raise DecodeError(SCHEMA_STATE, f"sensor[{i}].reserved", STATE_FIXED_SIZE + i * STATE_SENSOR_SIZE + 4,
                              "invalid value", f"must be 0, is {reserved}")
        sensors.append(Sensor(sid, st))
    return State(seq, t, elapsed(t, epoch_ns), est, Vec3(*f[0:3]), Quat(*f[3:7]), Vec3(*f[7:10]), Vec3(*f[10:13]), sensors)


_FRAME = struct.Struct("<4sHHQqIIIIQ")


def decode_frame_header(b: bytes, epoch_ns: int = 0) -> FrameHeader:
    """Decode and validate a vrsdk.Frame/1 header (48 bytes)."""
    b = bytes(b)
    _prefix(SCHEMA_FRAME, b, b"VRFM", _FRAME_FIELDS)
    _exact(SCHEMA_FRAME, b, FRAME_HEADER_SIZE, _FRAME_FIELDS)
    _, _, enc, seq, t, cam, w, h, stride, size = _FRAME.unpack(b)
    if enc not in ENCODINGS:
        raise DecodeError(SCHEMA_FRAME, "encoding", 6, "invalid value", f"unknown pixel encoding {enc}")
    name, bpp, _, _ = ENCODINGS[enc]
    if stride < w * bpp:
        raise DecodeError(SCHEMA_FRAME, "stride", 36, "invalid value", f"stride {stride} < width {w} × {bpp} bytes")
    if size != stride * h:
        raise DecodeError(SCHEMA_FRAME, "data_size", 40, "invalid value", f"data_size {size} != stride {stride} × height {h}")
    return FrameHeader(seq, t, elapsed(t, epoch_ns), cam, w, h, stride, name, size)


def decode_frame(header: bytes, payload: bytes, epoch_ns: int = 0) -> Frame:
    """Decode a frame: its header, and its payload of data_size bytes."""
    h = decode_frame_header(header, epoch_ns)
    if len(payload) != h.data_size:
        raise DecodeError(SCHEMA_FRAME, "payload", 0, "invalid value", f"payload of {len(payload)} bytes, data_size {h.data_size}")
    return Frame(h, payload)


def _stamps(schema: str, b: bytes, magic: bytes, names: list[str]) -> tuple:
    b = bytes(b)
    n = len(names)
    fields = [("magic", 0), ("version", 4), ("reserved", 6)] + [(name, 8 + 8 * i) for i, name in enumerate(names)]
    _prefix(schema, b, magic, fields)
    _exact(schema, b, 8 + 8 * n, fields)
    reserved = struct.unpack_from("<H", b, 6)[0]
    if reserved:
        raise DecodeError(schema, "reserved", 6, "invalid value", f"must be 0, is {reserved}")
    return struct.unpack_from(f"<{n}q", b, 8)


def decode_time_reply(b: bytes) -> TimeReply:
    return TimeReply(*_stamps(SCHEMA_TIME_REPLY, b, b"VRTR", ["t2_ns", "t3_ns"]))


def decode_clock_probe(b: bytes) -> ClockProbe:
    return ClockProbe(*_stamps(SCHEMA_CLOCK_PROBE, b, b"VRCP", ["t1_ns", "t2_ns", "t3_ns", "t4_ns"]))


REPLAY_CLOCK_SIZE = 48
_REPLAY_CLOCK = struct.Struct("<4sHHqqQdII")
_REPLAY_CLOCK_FIELDS = [("magic", 0), ("version", 4), ("flags", 6), ("log_time_ns", 8), ("position_ns", 16),
                        ("seq", 24), ("rate", 32), ("pass", 40), ("reserved", 44)]
_REPLAY_CLOCK_FLAGS = ["capture", "restamped", "running", "record"]  # bits 0..3


def decode_replay_clock(b: bytes) -> ReplayClock:
    b = bytes(b)
    _prefix(SCHEMA_REPLAY_CLOCK, b, b"VRRC", _REPLAY_CLOCK_FIELDS)
    _exact(SCHEMA_REPLAY_CLOCK, b, REPLAY_CLOCK_SIZE, _REPLAY_CLOCK_FIELDS)
    _, _, flags, log_time, position, seq, rate, pass_, reserved = _REPLAY_CLOCK.unpack(b)
    if flags >> len(_REPLAY_CLOCK_FLAGS):
        raise DecodeError(SCHEMA_REPLAY_CLOCK, "flags", 6, "invalid value", f"unknown flag bits 0x{flags:04x}")
    if reserved:
        raise DecodeError(SCHEMA_REPLAY_CLOCK, "reserved", 44, "invalid value", f"must be 0, is {reserved}")
    bits = [bool(flags >> i & 1) for i in range(len(_REPLAY_CLOCK_FLAGS))]
    return ReplayClock(log_time, position, seq, rate, pass_, *bits)


def decode(schema: str, header: bytes, payload: bytes, epoch_ns: int = 0):
    """Decode a record of a known schema; None for an unknown one (raw)."""
    if schema == SCHEMA_STATE:
        return decode_state(payload, epoch_ns)
    if schema == SCHEMA_FRAME:
        return decode_frame(header, payload, epoch_ns)
    if schema == SCHEMA_TIME_REPLY:
        return decode_time_reply(payload)
    if schema == SCHEMA_CLOCK_PROBE:
        return decode_clock_probe(payload)
    if schema == SCHEMA_REPLAY_CLOCK:
        return decode_replay_clock(payload)
    return None
