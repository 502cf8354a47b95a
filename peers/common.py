"""Shared set-up for the interop peers: zenoh config, iceoryx2 frame services, JSON lines."""

import ctypes
import hashlib
import json
import sys
import time

import iceoryx2 as iox2
import zenoh

from vrwire import FrameHeader


def zenoh_config(connect=(), listen=(), mode="peer", config_file=None):
    cfg = zenoh.Config.from_file(config_file) if config_file else zenoh.Config()
    cfg.insert_json5("mode", json.dumps(mode))
    # Loopback only: no multicast scouting; endpoints are given explicitly.
    cfg.insert_json5("scouting/multicast/enabled", "false")
    if connect:
        cfg.insert_json5("connect/endpoints", json.dumps(list(connect)))
    if listen:
        cfg.insert_json5("listen/endpoints", json.dumps(list(listen)))
    return cfg


def iox_node():
    iox2.set_log_level_from_env_or(iox2.LogLevel.Error)
    return iox2.NodeBuilder.new().signal_handling_mode(iox2.SignalHandlingMode.Disabled).create(iox2.ServiceType.Ipc)


class Pose(ctypes.Structure):
    """A fixed-size payload (40 bytes, no user header) for services that are not frames."""

    _fields_ = [("seq", ctypes.c_uint64), ("t_ns", ctypes.c_int64), ("x", ctypes.c_double), ("y", ctypes.c_double), ("z", ctypes.c_double)]

    @staticmethod
    def type_name():
        return "vrtest::Pose"


def frame_service(node, name, buffer_size=None, max_publishers=None, history=None, max_subscribers=None, fixed_payload=False):
    """Opens or creates a frame service (FrameHeader user header + u8 slice
    payload), or with fixed_payload a Pose service without user header.
    Settings left at None (or 0) keep iceoryx2's defaults."""
    b = node.service_builder(iox2.ServiceName.new(name))
    if fixed_payload:
        b = b.publish_subscribe(Pose)
    else:
        b = b.publish_subscribe(iox2.Slice[ctypes.c_uint8]).user_header(FrameHeader)
    if buffer_size:
        b = b.subscriber_max_buffer_size(buffer_size)
    if max_publishers:
        b = b.max_publishers(max_publishers)
    if max_subscribers:
        b = b.max_subscribers(max_subscribers)
    if history:
        b = b.history_size(history)
    return b.open_or_create()


def sha256(b):
    return hashlib.sha256(b).hexdigest()


def record(channel, seq, t_ns, header, payload):
    return {
        "channel": channel,
        "seq": seq,
        "t_ns": t_ns,
        "header_sha256": sha256(header),
        "payload_sha256": sha256(payload),
        "size": len(payload),
    }


class Lines:
    """JSON lines to a file (or stdout), flushed per line so a reader sees them at once."""

    def __init__(self, path):
        self.f = open(path, "w") if path and path != "-" else sys.stdout

    def write(self, obj):
        self.f.write(json.dumps(obj, separators=(",", ":")) + "\n")
        self.f.flush()

    def close(self):
        if self.f is not sys.stdout:
            self.f.close()


def status(msg):
    """Status lines go to stderr so stdout can carry data."""
    print(msg, file=sys.stderr, flush=True)


def wait_until(pred, timeout, step=0.005):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()
