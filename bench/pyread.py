"""One timed read of a log in Python, for bench/downstream.sh (which
interleaves the modes and takes medians):

    pyread.py MODE FILE     # MODE: blocks, payloads, frames

blocks: the file read in 1 MiB blocks (readinto, unbuffered): the floor.
payloads: every record with its payload (vrlog.Log.records()), touching
each payload's bytes through the buffer protocol (len of a memoryview).
frames: every frame as a numpy array (Log.frames(), Frame.pixels()).

Prints "MODE SECONDS BYTES".
"""
import os
import sys
import time

import vrlog


def blocks(path):
    buf = bytearray(1 << 20)
    n = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            k = f.readinto(buf)
            if not k:
                return n
            n += k


def payloads(path):
    n = 0
    with vrlog.open(path) as log:
        for r in log.records():
            n += len(r.header) + len(r.payload)
    return n


def frames(path):
    n = 0
    with vrlog.open(path) as log:
        for _, f in log.frames():
            n += f.pixels().nbytes
    return n


def main(mode, path):
    fn = {"blocks": blocks, "payloads": payloads, "frames": frames}[mode]
    t = time.perf_counter()
    n = fn(path)
    print(f"{mode} {time.perf_counter() - t:.4f} {n}")


if __name__ == "__main__":
    main(sys.argv[1], os.fspath(sys.argv[2]))
