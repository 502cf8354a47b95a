#!/usr/bin/env python3
"""Interop client peer of a replay's test fixture (docs/replay.md), written
from the docs: it decodes the replay's clock (vrlog.ReplayClock/1,
docs/wire-format.md) with peers/vrwire.py and sends control commands as
plain zenoh queries, with the command as the payload or, for "step=N" and
the like, as the selector's parameters.

Writes one JSON line per clock message ({"clock": {...}}) and per command
({"command": ..., "status": {...}} or {"command": ..., "error": ...}) to
--log. Prints "ready" on stderr once subscribed to the clock, waits for the
first clock message, sends the commands one after the other (each once the
previous was answered, --gap apart), waits --after seconds for more clock messages and
exits 0 (2 when no clock message came within --timeout).
"""

import argparse
import json
import sys
import time

import zenoh

import common
import vrwire


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--connect", action="append", default=[])
    p.add_argument("--listen", action="append", default=[])
    p.add_argument("--control", required=True, help="the replay's control name (its --control)")
    p.add_argument("--clock-key", required=True)
    p.add_argument("--command", action="append", default=[], help='a command, e.g. "step 3", or "?step=3" for parameters')
    p.add_argument("--gap", type=float, default=0.2, help="seconds between commands (clock messages in between)")
    p.add_argument("--after", type=float, default=1.0)
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--log", default="-")
    a = p.parse_args()

    out = common.Lines(a.log)
    session = zenoh.open(common.zenoh_config(a.connect, a.listen))
    got = []

    def on_clock(s):
        c = vrwire.decode_replay_clock(s.payload.to_bytes())
        got.append(c)
        out.write({"clock": c})

    sub = session.declare_subscriber(a.clock_key, on_clock)
    common.status("ready")
    end = time.monotonic() + a.timeout
    while not got and time.monotonic() < end:
        time.sleep(0.01)
    if not got:
        common.status("no clock message")
        out.close()
        return 2
    key = f"vrlog/replay/{a.control}/control"
    for cmd in a.command:
        line = {"command": cmd}
        if cmd.startswith("?"):
            replies = session.get(key + cmd, timeout=10.0)
        else:
            replies = session.get(key, payload=cmd.encode(), timeout=10.0)
        for r in replies:
            if r.ok is not None:
                line["status"] = json.loads(r.ok.payload.to_bytes())
            else:
                line["error"] = r.err.payload.to_bytes().decode()
        if "status" not in line and "error" not in line:
            line["error"] = "no reply"
        out.write(line)
        time.sleep(a.gap)
    time.sleep(a.after)
    sub.undeclare()
    session.close()
    common.status(f"done clocks={len(got)}")
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
