"""vrlog: read vrlog logs (*.vrlog) from Python.

    import vrlog
    with vrlog.open("run.vrlog") as log:
        print(log.channels, log.metadata)
        for rec in log.records("vr/r1/state"):
            state = log.decode(rec)
        df = log.to_pandas("states")

An independent implementation of docs/log-format.md and docs/wire-format.md
(pure Python plus zstandard; numpy makes it fast, pandas gives DataFrames).
"""

from ._crc import crc32c
from ._format import ChannelStats, Channel, ChunkChannel, ChunkInfo, Header
from .errors import CorruptionError, DecodeError, NotRegularError, NotVrlogError, UnsupportedVersionError, VrlogError
from .reader import TIMING_COLUMNS, Log, Record, open
from .wire import (ClockProbe, Frame, FrameHeader, Quat, ReplayClock, Sensor, State, TimeReply, Vec3, decode,
                   decode_clock_probe, decode_frame, decode_frame_header, decode_replay_clock, decode_state,
                   decode_time_reply, elapsed)

__version__ = "0.1.0"

__all__ = [
    "open", "Log", "Record", "TIMING_COLUMNS", "Channel", "ChannelStats", "ChunkChannel", "ChunkInfo", "Header",
    "VrlogError", "NotVrlogError", "NotRegularError", "UnsupportedVersionError", "CorruptionError", "DecodeError",
    "State", "Frame", "FrameHeader", "Vec3", "Quat", "Sensor", "TimeReply", "ClockProbe", "ReplayClock",
    "decode", "decode_state", "decode_frame", "decode_frame_header", "decode_time_reply", "decode_clock_probe",
    "decode_replay_clock",
    "elapsed", "crc32c",
]
