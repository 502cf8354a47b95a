#!/usr/bin/env python3
"""An independent subscriber that stamps what it receives: the "as received"
side of the pacing benchmark (bench/replay/pacing.sh).

It uses the official Python wheels (eclipse-zenoh, iceoryx2), nothing of
vrlog. States on a zenoh key are stamped in zenoh's callback; frames on an
iceoryx2 service are polled (iceoryx2 has no push delivery without an event
service, and neither replay under test notifies one), sleeping --poll-us
between empty polls. Each sample's seq (state payload bytes 8..16, frame
header bytes 8..16) and CLOCK_MONOTONIC arrival time go to --out as JSON:

    {"zenoh": [[seq, t_ns], ...], "iox2": [[seq, t_ns], ...], "polls": N}

It prints "ready" on stderr once subscribed and exits after --count samples
(of each stream asked for) or at --timeout.
"""

import argparse
import ctypes
import json
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "peers"))

import zenoh  # noqa: E402

import common  # noqa: E402
import vrwire  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--listen", action="append", default=[])
    p.add_argument("--connect", action="append", default=[])
    p.add_argument("--state-key")
    p.add_argument("--service")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--poll-us", type=float, default=50)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--out", required=True)
    a = p.parse_args()

    got = {"zenoh": [], "iox2": []}
    session = sub = None
    mono = time.monotonic_ns
    if a.state_key:
        session = zenoh.open(common.zenoh_config(a.connect, a.listen))
        zs = got["zenoh"]

        def on_sample(s):
            t = mono()
            b = s.payload.to_bytes()
            if len(b) >= 16 and b[:4] == vrwire.STATE_MAGIC:
                zs.append((struct.unpack_from("<Q", b, 8)[0], t))

        session.declare_subscriber(a.state_key, on_sample)
    if a.service:
        node = common.iox_node()
        sub = common.frame_service(node, a.service, buffer_size=64).subscriber_builder().create()
    common.status("ready")

    want_z = a.count if a.state_key else 0
    want_i = a.count if a.service else 0
    fs = got["iox2"]
    polls = 0
    pause = a.poll_us / 1e6
    end = time.monotonic() + a.timeout
    while time.monotonic() < end and (len(got["zenoh"]) < want_z or len(fs) < want_i):
        if sub is None:
            time.sleep(0.01)
            continue
        s = sub.receive()
        if s is None:
            polls += 1
            time.sleep(pause)
            continue
        while s is not None:
            t = mono()
            h = ctypes.string_at(s.user_header_ptr, 16)
            del s  # release the shared-memory sample
            fs.append((struct.unpack_from("<Q", h, 8)[0], t))
            s = sub.receive()
    with open(a.out, "w") as f:
        json.dump({"zenoh": got["zenoh"], "iox2": fs, "polls": polls}, f)
    common.status(f"done zenoh={len(got['zenoh'])} iox2={len(fs)}")
    if session is not None:
        session.close()
    return 0 if len(got["zenoh"]) >= want_z and len(fs) >= want_i else 2


if __name__ == "__main__":
    sys.exit(main())
