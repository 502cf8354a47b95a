#!/usr/bin/env python3
"""Ask a running `vrlog fleet` recording to stop, over zenoh.

Waits (up to --timeout) for the fleet's liveliness token vrlog/fleet/NAME,
then sends a query on vrlog/fleet/NAME/stop (payload {"reason": ...}),
asking again while it is answered by nothing (a new zenoh session's first
query can end before the routes to the fleet reach it), and prints the
fleet's answer, a JSON object (schema vrlog.fleet.stop/1) sent once its
recorders have answered their stop: each recorder's role and the file it
finished. Exit 0 when the fleet stopped, 1 when it refused the request, 3
when no fleet answered within --timeout: it says whether the fleet's token
was there (then a router's access control that lets only the controller's
identity ask, or a stalled fleet) or not (not running, not reachable).
Needs only the eclipse-zenoh wheel; any zenoh client can do the same.

    python peers/fleet_stop.py --config deploy/controller.json5 \\
        --connect tcp/ROUTER:7447 run1 --reason "tests done"
"""

import argparse
import json
import sys
import time

import zenoh

RETRY = 0.2  # seconds between a query answered by nothing and the next


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", help="the fleet recording's name (vrlog fleet --name, by default its -o directory's name)")
    p.add_argument("--config", help="zenoh JSON5 configuration file (e.g. deploy/controller.json5)")
    p.add_argument("--connect", action="append", default=[], help="endpoint of the router, e.g. tcp/10.0.0.5:7447 (repeatable)")
    p.add_argument("--reason", default="", help="a text the fleet prints as why it stopped")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the answer (the recorders finish their files first)")
    a = p.parse_args()

    cfg = zenoh.Config.from_file(a.config) if a.config else zenoh.Config()
    if a.connect:
        cfg.insert_json5("connect/endpoints", json.dumps(a.connect))
    payload = json.dumps({"reason": a.reason} if a.reason else {}).encode()
    token, stop = f"vrlog/fleet/{a.name}", f"vrlog/fleet/{a.name}/stop"
    deadline = time.monotonic() + a.timeout
    with zenoh.open(cfg) as session:
        if not wait_token(session, token, deadline):
            print(f"fleet_stop: no fleet recording {a.name} on the network: its liveliness token {token} did not appear "
                  f"within {a.timeout:g} s (not running, or not reachable)", file=sys.stderr)
            return 3
        while True:
            answer = ask(session, stop, payload, max(deadline - time.monotonic(), 0.001))
            if answer is not None:
                print(json.dumps(answer, indent=2))
                return 0 if answer.get("ok") else 1
            left = deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(RETRY, left))
    print(f"fleet_stop: the fleet recording {a.name} is on the network (its liveliness token {token} is there) "
          f"but no fleet recording answered {stop} within {a.timeout:g} s: a router's access control lets only "
          "the controller's identity ask (docs/deployment.md, \"Access control\"), or the fleet is stalled", file=sys.stderr)
    return 3


def wait_token(session, token, deadline):
    """Whether the liveliness token appears before deadline."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        for reply in session.liveliness().get(token, timeout=min(left, 1.0)):
            if reply.ok is not None:
                return True
        time.sleep(min(RETRY, max(deadline - time.monotonic(), 0)))


def ask(session, key, payload, timeout):
    """The first answer to a query on key, or None when nothing answered."""
    for reply in session.get(key, payload=payload, timeout=timeout):
        if reply.ok is None:
            print(f"fleet_stop: zenoh: {reply.err.payload.to_string()}", file=sys.stderr)
            continue
        return json.loads(reply.ok.payload.to_string())
    return None

if __name__ == "__main__":
    sys.exit(main())
