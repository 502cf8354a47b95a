"""Print, per record in receive order, the elapsed the reader gives it with
its defaults: decode(rec).elapsed for a state, the frame header's for a
frame (frames() agrees), null otherwise. One JSON line per record:
{"channel_id", "recv_mono_ns", "elapsed"}, after a first line
{"session_epoch_ns"}. Used by python/epoch_test.go to
compare with `vrlog cat --json`.

    elapsed.py FILE.vrlog
"""
import json
import sys

import vrlog


def main(path):
    with vrlog.open(path) as log:
        print(json.dumps({"session_epoch_ns": log.session_epoch_ns()}))
        by_frame = iter(log.frames())
        for r in log.records():
            schema = log.channel(r.channel).schema
            e = None
            try:
                d = log.decode(r)
            except vrlog.DecodeError:
                d = None
            if isinstance(d, vrlog.State):
                e = d.elapsed
            elif isinstance(d, vrlog.Frame):
                e = d.elapsed  # the same as d.header.elapsed
            if schema == "vrsdk.Frame/1":
                fr, f = next(by_frame)
                assert fr.recv_mono_ns == r.recv_mono_ns
                assert (None if f is None else f.elapsed) == e == (None if f is None else f.header.elapsed), (f, e)
            print(json.dumps({"channel_id": r.channel, "recv_mono_ns": r.recv_mono_ns, "elapsed": e}))


if __name__ == "__main__":
    main(sys.argv[1])
