"""Read rates of the Python reader on one log, medians of 5 runs each:

    bench.py FILE

Prints one line per way of reading: records/s and the median seconds.
Run by BenchmarkPythonReader (python/bench_test.go), which makes the log.
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import vrlog  # noqa: E402


def rate(name, fn, runs=5):
    times, n = [], 0
    for _ in range(runs):
        t = time.perf_counter()
        n = fn()
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    print(f"{name} {n / med:.0f} {med:.3f}")


def main(path):
    def meta(use_numpy=True):
        with vrlog.open(path, use_numpy=use_numpy) as log:
            return sum(1 for _ in log.records(payloads=False))

    def batches():
        with vrlog.open(path) as log:
            return sum(len(b["recv_mono_ns"]) for b in log.iter_batches())

    def states():
        with vrlog.open(path) as log:
            return sum(1 for _ in log.states())

    def payloads():
        with vrlog.open(path) as log:
            return sum(1 for _ in log.records())

    rate("batches_numpy", batches)
    rate("records_meta_numpy", meta)
    rate("records_meta_pure", lambda: meta(False), runs=3)
    rate("records_payloads", payloads, runs=3)
    rate("states_decoded", states, runs=3)


if __name__ == "__main__":
    main(sys.argv[1])
