#!/usr/bin/env python3
"""Interop publisher peer: states over zenoh, frames over iceoryx2.

Encodes with peers/vrwire.py (written from docs/wire-format.md) and writes one
JSON line per sent sample (channel, seq, t_ns, sha256 of header and payload)
to --log, so a test can compare with what the other side received.

Prints "ready" on stderr once its publishers exist, then waits (up to
--wait-subscribers seconds) for a matching subscriber on each transport
before sending.

The iceoryx2 service keeps iceoryx2's default for every setting not given
except subscriber_max_buffer_size, 8 unless --buffer says otherwise
(--buffer 0: iceoryx2's default, 2). --publishers N
sends every frame slot from N publishers at once (camera_id 1..N, each with
its own seq); --fixed-payload sends a fixed-size Pose (no user header)
instead of frames; --pre-frames sends that many frames before waiting for a
subscriber (what a history keeps for a late one); --hold-subscriber takes a
subscriber slot itself.
"""

import argparse
import ctypes
import glob
import json
import os
import sys
import time

import iceoryx2 as iox2
import zenoh

import common
import vrwire


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--connect", action="append", default=[], help="zenoh endpoint to connect to (repeatable)")
    p.add_argument("--listen", action="append", default=[], help="zenoh endpoint to listen on (repeatable)")
    p.add_argument("--mode", default="peer", choices=["peer", "client"])
    p.add_argument("--zenoh-config", help="zenoh JSON5 config file")
    p.add_argument("--state-key", help="zenoh key for states, e.g. vr/r1/state")
    p.add_argument("--states", type=int, default=0, help="number of states to send")
    p.add_argument("--state-hz", type=float, default=1000.0)
    p.add_argument("--seq-start", type=int, default=0)
    p.add_argument("--encoding", default="application/octet-stream", help="zenoh encoding of states")
    p.add_argument("--liveliness", action="store_true", help="declare a liveliness token on the state key")
    p.add_argument("--service", help="iceoryx2 service for frames, e.g. vr/r1/camera/front")
    p.add_argument("--frames", type=int, default=0)
    p.add_argument("--frame-hz", type=float, default=30.0)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--height", type=int, default=48)
    p.add_argument("--pixel-encoding", default="rgb8", choices=sorted(vrwire.ENCODING_BY_NAME))
    p.add_argument("--buffer", type=int, default=8, help="subscriber_max_buffer_size when creating the service (default 8; 0: iceoryx2's default, 2)")
    p.add_argument("--max-publishers", type=int, default=0, help="max_publishers (0: iceoryx2's default)")
    p.add_argument("--max-subscribers", type=int, default=0, help="max_subscribers (0: iceoryx2's default)")
    p.add_argument("--history", type=int, default=0, help="history_size (0: iceoryx2's default, none)")
    p.add_argument("--publishers", type=int, default=1, help="iceoryx2 publishers on the service, all sending each frame slot")
    p.add_argument("--fixed-payload", action="store_true", help="a fixed-size Pose payload without user header instead of frames")
    p.add_argument("--pre-frames", type=int, default=0, help="frames sent before waiting for a subscriber")
    p.add_argument("--hold-subscriber", action="store_true", help="create a subscriber of our own (takes a max_subscribers slot)")
    p.add_argument("--vectors", help="send the codec test vectors of this directory instead of generated samples")
    p.add_argument("--wait-subscribers", type=float, default=10.0)
    p.add_argument("--linger", type=float, default=0.2, help="seconds to stay up after the last send")
    p.add_argument("--log", default="-", help="JSON lines of sent samples ('-' = stdout)")
    return p.parse_args()


def state_value(seq, t_ns):
    return {
        "seq": seq, "t_ns": t_ns, "estimate_t_ns": t_ns - 2_000_000,
        "position": {"x": seq * 0.001, "y": 0.5, "z": -1.0},
        "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0},
        "linear_velocity": {"x": 0.1, "y": 0.0, "z": 0.0},
        "angular_velocity": {"x": 0.0, "y": 0.0, "z": 0.01},
        "sensors": [{"id": 100 + i, "t_ns": t_ns - 1_000_000 * (i + 1)} for i in range(4)],
    }


def load_vectors(d):
    """Valid vectors as (kind, header bytes, payload bytes, json), encoded from the JSON values."""
    out = []
    for path in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(path) as f:
            v = json.load(f)
        if "error" in v:
            continue
        if v["schema"] == "vrsdk.State/1":
            out.append(("state", b"", vrwire.encode_state(v["value"]), v))
        elif v["schema"] == "vrsdk.Frame/1":
            with open(os.path.join(d, v["payload_file"]), "rb") as f:
                payload = f.read()
            out.append(("frame", vrwire.encode_frame_header(v["value"]), payload, v))
    return out


def main():
    a = parse()
    log = common.Lines(a.log)
    session = pub = token = None
    node = service = held = None
    ipubs = []

    if a.state_key:
        session = zenoh.open(common.zenoh_config(a.connect, a.listen, a.mode, a.zenoh_config))
        # Block, not Drop: an interop test must see every sample even on a loaded machine.
        pub = session.declare_publisher(
            a.state_key, encoding=zenoh.Encoding(a.encoding), congestion_control=zenoh.CongestionControl.BLOCK
        )
        if a.liveliness:
            token = session.liveliness().declare_token(a.state_key)

    frame_bytes = 0
    if a.service:
        _, bpp = vrwire.ENCODING_BY_NAME[a.pixel_encoding]
        frame_bytes = a.width * bpp * a.height
        node = common.iox_node()
        service = common.frame_service(node, a.service, buffer_size=a.buffer, max_publishers=a.max_publishers,
                                       history=a.history, max_subscribers=a.max_subscribers, fixed_payload=a.fixed_payload)
        for _ in range(a.publishers):
            b = service.publisher_builder()
            if not a.fixed_payload:
                b = b.initial_max_slice_len(max(frame_bytes, 1)).allocation_strategy(iox2.AllocationStrategy.PowerOfTwo)
            ipubs.append(b.create())
        if a.hold_subscriber:
            held = service.subscriber_builder().create()

    ipub = ipubs[0] if ipubs else None
    base = os.urandom(max(frame_bytes, 1))

    def send_slot(nf):
        """Sends frame slot nf from every publisher (camera_id k+1, seq seq_start+nf)."""
        seq = a.seq_start + nf
        for k, p in enumerate(ipubs):
            t_ns = time.time_ns()
            if a.fixed_payload:
                pose = common.Pose(seq, t_ns, seq * 0.5, float(k), -1.0)
                sample = p.loan_uninit()
                ctypes.memmove(sample.payload_ptr, ctypes.addressof(pose), ctypes.sizeof(pose))
                sample.assume_init().send()
                log.write(common.record("frame:" + a.service, seq, t_ns, b"", bytes(pose)))
                continue
            o = (seq * 7919 + k * 104729) % len(base)
            pixels = (base[o:] + base[:o])[:frame_bytes]
            header = vrwire.encode_frame_header({
                "seq": seq, "t_ns": t_ns, "camera_id": k + 1, "width": a.width, "height": a.height,
                "stride": a.width * vrwire.ENCODING_BY_NAME[a.pixel_encoding][1],
                "encoding": a.pixel_encoding, "data_size": frame_bytes,
            })
            send_frame(p, header, pixels, seq, t_ns)

    def send_frame(p, header, payload, seq, t_ns):
        sample = p.loan_slice_uninit(len(payload))
        ctypes.memmove(sample.user_header_ptr, header, len(header))
        if payload:
            ctypes.memmove(sample.payload_ptr, payload, len(payload))
        sample.assume_init().send()
        log.write(common.record("frame:" + a.service, seq, t_ns, header, payload))

    nf = 0
    for _ in range(a.pre_frames if ipub else 0):
        send_slot(nf)
        nf += 1
        time.sleep(1.0 / a.frame_hz)

    common.status("ready")
    if pub is not None and not common.wait_until(lambda: pub.matching_status.matching, a.wait_subscribers):
        common.status("no zenoh subscriber matched")
        return 3
    if service is not None and not common.wait_until(
        lambda: service.dynamic_config.number_of_subscribers > 0, a.wait_subscribers
    ):
        common.status("no iceoryx2 subscriber")
        return 3

    def send_state(payload, seq, t_ns):
        pub.put(payload)
        log.write(common.record("state:" + a.state_key, seq, t_ns, b"", payload))

    if a.vectors:
        for kind, header, payload, v in load_vectors(a.vectors):
            val = v["value"]
            if kind == "state" and pub is not None:
                send_state(payload, val["seq"], val["t_ns"])
            elif kind == "frame" and ipub is not None:
                send_frame(ipub, header, payload, val["seq"], val["t_ns"])
            time.sleep(0.002)
    else:
        t0 = time.monotonic()
        ns, f0 = 0, nf  # frames after the pre-frames are due from now on
        while ns < (a.states if pub else 0) or nf < (a.frames if ipub else 0):
            now = time.monotonic() - t0
            due_s = pub is not None and ns < a.states and now >= ns / a.state_hz
            due_f = ipub is not None and nf < a.frames and now >= (nf - f0) / a.frame_hz
            if due_s:
                seq, t_ns = a.seq_start + ns, time.time_ns()
                send_state(vrwire.encode_state(state_value(seq, t_ns)), seq, t_ns)
                ns += 1
            if due_f:
                send_slot(nf)
                nf += 1
            if not (due_s or due_f):
                nxt = []
                if pub is not None and ns < a.states:
                    nxt.append(ns / a.state_hz)
                if ipub is not None and nf < a.frames:
                    nxt.append((nf - f0) / a.frame_hz)
                time.sleep(max(0.0, min(nxt) - (time.monotonic() - t0)) if nxt else 0)

    time.sleep(a.linger)
    common.status("done")
    log.close()
    if token is not None:
        token.undeclare()
    if session is not None:
        session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
