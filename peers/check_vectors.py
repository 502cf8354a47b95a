#!/usr/bin/env python3
"""Checks peers/vrwire.py against the codec test vectors, byte for byte.

For every valid vector it encodes the JSON value and compares with the .bin
file(s) (frames: the header; the payload's sha256 and size are checked too),
and decodes the .bin back to the same fields. Every bad_* vector must be
rejected by the decoder. Exit status 0 when all pass.
"""

import glob
import hashlib
import json
import os
import sys

import vrwire


def check(d):
    fails, n = [], 0
    for path in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(path) as f:
            v = json.load(f)
        name = os.path.basename(path)[:-5]
        schema = v["schema"]
        n += 1
        try:
            if "error" in v:
                fname = v.get("file") or v.get("header_file")
                with open(os.path.join(d, fname), "rb") as f:
                    b = f.read()
                try:
                    if schema == "vrsdk.State/1":
                        vrwire.decode_state(b)
                    elif schema == "vrsdk.Frame/1":
                        vrwire.decode_frame_header(b)
                    elif schema == "vrlog.ReplayClock/1":
                        vrwire.decode_replay_clock(b)
                    else:
                        raise AssertionError(f"no decoder for {schema}")
                except vrwire.WireError:
                    continue
                fails.append(f"{name}: decoder accepted an invalid vector")
                continue
            val = v["value"]
            if schema == "vrsdk.State/1":
                want = open(os.path.join(d, v["file"]), "rb").read()
                got = vrwire.encode_state(val)
                dec = vrwire.decode_state(want)
                if dec["seq"] != val["seq"] or dec["t_ns"] != val["t_ns"]:
                    fails.append(f"{name}: decode mismatch")
            elif schema == "vrsdk.Frame/1":
                want = open(os.path.join(d, v["header_file"]), "rb").read()
                got = vrwire.encode_frame_header(val)
                payload = open(os.path.join(d, v["payload_file"]), "rb").read()
                if hashlib.sha256(payload).hexdigest() != v["payload_sha256"] or len(payload) != val["data_size"]:
                    fails.append(f"{name}: payload sha256/size mismatch")
                dec = vrwire.decode_frame_header(want)
                if dec != {k: val[k] for k in dec}:
                    fails.append(f"{name}: decode mismatch {dec}")
            elif schema == "vrsdk.TimeReply/1":
                want = open(os.path.join(d, v["file"]), "rb").read()
                got = vrwire.encode_time_reply(val)
            elif schema == "vrlog.ClockProbe/1":
                want = open(os.path.join(d, v["file"]), "rb").read()
                got = vrwire.encode_clock_probe(val)
            elif schema == "vrlog.ReplayClock/1":
                want = open(os.path.join(d, v["file"]), "rb").read()
                got = vrwire.encode_replay_clock(val)
                if vrwire.decode_replay_clock(want) != val:
                    fails.append(f"{name}: decode mismatch {vrwire.decode_replay_clock(want)}")
            else:
                fails.append(f"{name}: unknown schema {schema}")
                continue
            if got != want:
                fails.append(f"{name}: encoded {got.hex()} want {want.hex()}")
        except Exception as e:  # a crash is a failure of that vector
            fails.append(f"{name}: {type(e).__name__}: {e}")
    for f in fails:
        print("FAIL", f)
    print(f"{n - len(fails)} passed, {len(fails)} failed")
    return 1 if fails or n == 0 else 0


if __name__ == "__main__":
    sys.exit(check(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "testdata", "codec")))
