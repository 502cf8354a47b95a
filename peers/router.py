#!/usr/bin/env python3
"""A zenoh router on the official eclipse-zenoh wheel.

Opens a session in router mode: the same routing runtime as zenohd at the
same version (zenohd is this runtime plus plugin loading and a command line),
installed in seconds with pip instead of compiled. Reads an optional zenoh
JSON5 configuration (--config, e.g. deploy/router.json5); --listen replaces
its listen endpoints and --id sets its zenoh id (as zenohd's --id does).
Once listening it writes its zenoh id as a JSON line {"zid": "..."} to --log
(if given), prints "ready" on stderr, and runs until SIGINT or SIGTERM.
Needs only the eclipse-zenoh wheel.
"""

import argparse
import json
import signal
import sys
import threading

import zenoh


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", help="zenoh JSON5 configuration file")
    p.add_argument("--listen", action="append", default=[], help="endpoint to listen on, e.g. tcp/0.0.0.0:7447 (repeatable)")
    p.add_argument("--id", help="zenoh id in hex (default: random)")
    p.add_argument("--log", help="file to write the router's zenoh id to, as a JSON line")
    a = p.parse_args()

    try:
        cfg = zenoh.Config.from_file(a.config) if a.config else zenoh.Config()
        cfg.insert_json5("mode", '"router"')
        if a.listen:
            cfg.insert_json5("listen/endpoints", json.dumps(a.listen))
        if a.id:
            cfg.insert_json5("id", json.dumps(a.id))
        session = zenoh.open(cfg)
    except zenoh.ZError as e:
        print(f"router: {e}", file=sys.stderr, flush=True)
        return 3

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if a.log:
        with open(a.log, "w") as f:
            f.write(json.dumps({"zid": str(session.zid())}) + "\n")
    print("ready", file=sys.stderr, flush=True)
    while not stop.wait(0.5):  # a timed wait lets the signal handlers run
        pass
    session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
