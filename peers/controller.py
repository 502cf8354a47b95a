#!/usr/bin/env python3
"""Example controller under test for `vrlog replay --lockstep`, on the
official zenoh wheel, written from docs/replay.md: for each state
(vrsdk.State/1, decoded with peers/vrwire.py) on --state it publishes one
command on --command (a PD force, 24 bytes: 3 little-endian f64) whose
zenoh attachment names the state it answers, "vrlog.seq=<state seq>", so
that the replay pairs each answer with its trigger even when one is late.

Misbehaviours for tests: --delay S before each answer, --stall-after N
with --stall-for S (the answer after N answers is S late), --die-after N
(after N answers it exits at once with os._exit, as a crashed controller
does), --answer-key KEY (answers on another key than --command).

Writes one JSON line per answer ({"seq": N}) to --log, prints "ready" on
stderr once subscribed, runs until --duration passes or SIGTERM.
"""

import argparse
import os
import queue
import signal
import struct
import sys
import time

import zenoh

import common
import vrwire


def answer_tag(seq):
    """The attachment that names the trigger a lockstep answer answers."""
    return f"vrlog.seq={seq}".encode()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--connect", action="append", default=[])
    p.add_argument("--listen", action="append", default=[])
    p.add_argument("--state", default="vr/r1/state")
    p.add_argument("--command", default="vr/r1/cmd")
    p.add_argument("--answer-key", help="answer here instead of --command (a controller on the wrong key)")
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--stall-after", type=int, default=-1)
    p.add_argument("--stall-for", type=float, default=0.0)
    p.add_argument("--die-after", type=int, default=-1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--log", default="-")
    a = p.parse_args()

    out = common.Lines(a.log)
    session = zenoh.open(common.zenoh_config(a.connect, a.listen))
    pub = session.declare_publisher(a.answer_key or a.command)
    states = queue.Queue()
    sub = session.declare_subscriber(a.state, lambda s: states.put(s.payload.to_bytes()))
    # last, once subscribed and ready: says "the controller is here" to
    # replay --wait-for-controller (a recorder declares none)
    token = session.liveliness().declare_token(a.answer_key or a.command)  # noqa: F841 (kept alive)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    common.status("ready")
    end = time.monotonic() + a.duration
    kp, kd, target = 2.0, 0.5, (0.0, 0.0, 0.0)
    answered = 0
    while time.monotonic() < end:
        try:
            b = states.get(timeout=0.1)
        except queue.Empty:
            continue
        st = vrwire.decode_state(b)
        seq = st["seq"]
        if answered == a.die_after:
            out.close()
            os._exit(9)
        wait = a.delay + (a.stall_for if answered == a.stall_after else 0.0)
        if wait > 0:
            time.sleep(wait)
        pos, vel = st["position"], st["linear_velocity"]
        force = [kp * (target[i] - pos[k]) - kd * vel[k] for i, k in enumerate("xyz")]
        pub.put(struct.pack("<3d", *force), attachment=answer_tag(seq))
        out.write({"seq": seq})
        answered += 1
    sub.undeclare()
    session.close()
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
