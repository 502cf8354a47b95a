#!/usr/bin/env python3
"""Ask a running `vrlog fleet` recording to stop, over zenoh.

Sends a query on vrlog/fleet/NAME/stop (payload {"reason": ...}) and prints
the fleet's answer, a JSON object (schema vrlog.fleet.stop/1) sent once its
recorders have answered their stop: each recorder's role and the file it
finished. Exit 0 when the fleet stopped, 1 when it refused the request, 3
when no fleet answered within --timeout (not running, not reachable, or a
router's access control that lets only the controller's identity ask).
Needs only the eclipse-zenoh wheel; any zenoh client can do the same.

    python peers/fleet_stop.py --config deploy/controller.json5 \\
        --connect tcp/ROUTER:7447 run1 --reason "tests done"
"""

import argparse
import json
import sys

import zenoh


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
    payload = json.dumps({"reason": a.reason} if a.reason else {})
    with zenoh.open(cfg) as session:
        for reply in session.get(f"vrlog/fleet/{a.name}/stop", payload=payload.encode(), timeout=a.timeout):
            if reply.ok is None:
                print(f"fleet_stop: zenoh: {reply.err.payload.to_string()}", file=sys.stderr)
                continue
            answer = json.loads(reply.ok.payload.to_string())
            print(json.dumps(answer, indent=2))
            return 0 if answer.get("ok") else 1
    print(f"fleet_stop: no fleet recording answered vrlog/fleet/{a.name}/stop within {a.timeout:g} s", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
