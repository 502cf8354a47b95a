"""One timed loop over a log in Python, for bench/pyread.sh (which
interleaves the modes and takes medians):

    pyread.py MODE TOUCH FILE

MODE is what a user's loop does:
  blocks    the peer, a plain Python read of the file: open(FILE, "rb",
            buffering=0), readinto one reused 1 MiB bytearray until the end,
            each block touched;
  payloads  every record with its payload: vrlog.open(FILE).records(), each
            record's header and payload touched;
  frames    every frame as a numpy array: Log.frames(), each Frame.pixels()
            touched;
  floor     the least any reader's user loop costs: as many prebuilt
            (header, payload) pairs as the log has records (views of one
            bytes object, made before the clock starts, payload_len bytes
            each), touched as payloads touches them.
TOUCH is what the loop does with each piece of bytes:
  len       len(x): the loop itself reads none of them (the reader has read
            every stored byte for its CRC, the peer's kernel has copied every
            byte into the buffer);
  crc32     zlib.crc32(x): the loop reads every byte, on both sides.

Timed: the loop, with opening the file or the log, without the imports.
Prints "MODE TOUCH WALL_S CPU_S BYTES" (CPU: this process's user + system).
"""
import os
import sys
import time
import zlib

import vrlog

TOUCH = {"len": len, "crc32": zlib.crc32}


def blocks(path, touch):
    buf = bytearray(1 << 20)
    mv = memoryview(buf)
    n = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            k = f.readinto(buf)
            if not k:
                return n
            touch(mv[:k])
            n += k


def payloads(path, touch):
    n = 0
    with vrlog.open(path) as log:
        for r in log.records():
            touch(r.header)
            touch(r.payload)
            n += len(r.header) + len(r.payload)
    return n


def frames(path, touch):
    n = 0
    with vrlog.open(path) as log:
        for _, f in log.frames():
            px = f.pixels()
            touch(px)
            n += px.nbytes
    return n


def prebuilt(path):
    """The floor's records: one (header, payload) pair of views per record
    of the log, of the log's sizes, over one bytes object."""
    with vrlog.open(path) as log:
        sizes = [(r.header_len, r.payload_len) for r in log.records(payloads=False)]
    data = memoryview(bytes(max((h + p for h, p in sizes), default=0)))
    return [(data[:h], data[h:h + p]) for h, p in sizes]


def floor(recs, touch):
    n = 0
    for header, payload in recs:
        touch(header)
        touch(payload)
        n += len(header) + len(payload)
    return n


def main(mode, touch_name, path):
    touch = TOUCH[touch_name]
    if mode == "floor":
        recs = prebuilt(path)
        run = lambda: floor(recs, touch)  # noqa: E731
    else:
        fn = {"blocks": blocks, "payloads": payloads, "frames": frames}[mode]
        run = lambda: fn(path, touch)  # noqa: E731
    w, c = time.perf_counter(), time.process_time()
    n = run()
    print(f"{mode} {touch_name} {time.perf_counter() - w:.4f} {time.process_time() - c:.4f} {n}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], os.fspath(sys.argv[3]))
