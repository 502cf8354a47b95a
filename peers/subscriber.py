#!/usr/bin/env python3
"""Interop subscriber peer: writes what it receives as JSON lines.

One line per sample: channel, seq and t_ns (decoded with peers/vrwire.py,
null when the bytes do not decode), sha256 of the header and payload bytes,
payload size. Prints "ready" on stderr once subscribed; exits 0 after
--states states and --frames frames, or 2 on --timeout.
"""

import argparse
import ctypes
import sys
import time

import zenoh

import common
import vrwire


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--connect", action="append", default=[])
    p.add_argument("--listen", action="append", default=[])
    p.add_argument("--mode", default="peer", choices=["peer", "client"])
    p.add_argument("--state-key")
    p.add_argument("--states", type=int, default=0)
    p.add_argument("--service")
    p.add_argument("--frames", type=int, default=0)
    p.add_argument("--buffer", type=int, default=8, help="subscriber_max_buffer_size if the service is created here")
    p.add_argument("--hold", type=float, default=0.0, help="seconds to wait after each frame (a slow subscriber)")
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--out", default="-")
    a = p.parse_args()

    out = common.Lines(a.out)
    got = {"state": 0, "frame": 0}
    session = node = sub = None

    if a.state_key:
        session = zenoh.open(common.zenoh_config(a.connect, a.listen, a.mode))

        def on_sample(s):
            payload = s.payload.to_bytes()
            seq, t_ns = vrwire.seq_t_ns("state", b"", payload)
            out.write(common.record("state:" + str(s.key_expr), seq, t_ns, b"", payload))
            if seq is not None:  # only valid states count towards --states (not probes)
                got["state"] += 1

        zsub = session.declare_subscriber(a.state_key, on_sample)

    if a.service:
        node = common.iox_node()
        service = common.frame_service(node, a.service, buffer_size=a.buffer)
        sub = service.subscriber_builder().create()

    common.status("ready")
    end = time.monotonic() + a.timeout
    while time.monotonic() < end:
        if got["state"] >= a.states and got["frame"] >= a.frames:
            break
        busy = False
        if sub is not None:
            while True:
                s = sub.receive()
                if s is None:
                    break
                busy = True
                header = ctypes.string_at(s.user_header_ptr, ctypes.sizeof(vrwire.FrameHeader))
                p = s.payload()
                n = p.len()
                payload = ctypes.string_at(p.as_ptr(), n) if n else b""
                del s  # release the shared-memory sample
                seq, t_ns = vrwire.seq_t_ns("frame", header, payload)
                out.write(common.record("frame:" + a.service, seq, t_ns, header, payload))
                got["frame"] += 1
                if a.hold:
                    time.sleep(a.hold)
        if not busy:
            time.sleep(0.0005)
    ok = got["state"] >= a.states and got["frame"] >= a.frames
    common.status(f"done states={got['state']} frames={got['frame']}")
    out.close()
    if session is not None:
        session.close()
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
