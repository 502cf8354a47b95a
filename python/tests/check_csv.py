"""Check CSV exports of a log with pandas' defaults, against the reader:

    check_csv.py LOG EXPORT_DIR COMBINED.csv ANALYZE.csv

EXPORT_DIR and COMBINED.csv come from `vrlog export LOG --format csv`,
ANALYZE.csv from `vrlog analyze --csv`. Every integer column must load as
int64 (seq: int64 or uint64), never float; every *_ns value must equal the
reader's exactly; the state columns must hold the decoded states (floats
bit for bit). Used by python/csv_test.go.
"""

import math
import os
import re
import struct
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import vrlog  # noqa: E402
from vrlog import frames  # noqa: E402

TIMING_INTS = ["index", "has_stamp", "seq", "t_ns", "recv_wall_ns", "recv_mono_ns", "dt_ns", "recv_dt_ns", "latency_ns",
               "skipped", "restart", "header_bytes", "payload_bytes"]
FLOATS = [f"{v}.{a}" for v, axes in frames._VEC.items() for a in axes]
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def ulps(a: float, b: float) -> int:
    ia, ib = (struct.unpack("<q", struct.pack("<d", x))[0] for x in (a, b))
    return abs(ia - ib)


def int_columns(df, cols, name):
    for c in cols:
        check(c in df.columns, f"{name}: no column {c}")
        if c in df.columns:
            check(df[c].dtype in (np.int64, np.uint64), f"{name}: column {c} loads as {df[c].dtype}, not an integer")


def check_table(name, path, log, recs, chan_name):
    df = pd.read_csv(path)
    int_columns(df, TIMING_INTS, name)
    check(len(df) == len(recs), f"{name}: {len(df)} rows for {len(recs)} records")
    if problems:
        return
    check(df["recv_wall_ns"].tolist() == [r.recv_wall_ns for r in recs], f"{name}: recv_wall_ns differ")
    check(df["recv_mono_ns"].tolist() == [r.recv_mono_ns for r in recs], f"{name}: recv_mono_ns differ")
    check(df["t_ns"].tolist() == [r.capture_ns or 0 for r in recs], f"{name}: t_ns differ")
    check(df["has_stamp"].tolist() == [int(r.has_stamp) for r in recs], f"{name}: has_stamp differ")
    check(df["t"].isna().tolist() == [not r.has_stamp for r in recs], f"{name}: t is not empty exactly where a record has no stamp")
    check(df["seq"].tolist() == [r.seq or 0 for r in recs], f"{name}: seq differ")
    check(df["payload_bytes"].tolist() == [r.payload_len for r in recs], f"{name}: payload_bytes differ")
    if "channel" in df.columns:
        check(df["channel"].tolist() == [chan_name[r.channel] for r in recs], f"{name}: channel names differ")
    if "decoded" not in df.columns:
        return
    nsens = max((int(c.split(".")[1]) + 1 for c in df.columns if c.startswith("sensors.")), default=0)
    int_columns(df, ["decoded", "estimate_t_ns", "sensor_count"] + [f"sensors.{i}.{k}" for i in range(nsens) for k in ("id", "t_ns")], name)
    worst = 0
    for i, r in enumerate(recs):
        s = None
        if log.channel(r.channel).schema == vrlog.wire.SCHEMA_STATE:
            try:
                s = vrlog.decode_state(r.payload)
            except vrlog.DecodeError:
                pass
        check(df["decoded"].iat[i] == (s is not None), f"{name}: row {i}: decoded {df['decoded'].iat[i]}")
        if s is None:
            check(all(math.isnan(df[c].iat[i]) for c in FLOATS), f"{name}: row {i}: floats of a row without a state")
            check(df["estimate_t_ns"].iat[i] == 0 and df["sensor_count"].iat[i] == 0, f"{name}: row {i}: integers of a row without a state")
            continue
        want = [getattr(getattr(s, c.split(".")[0]), c.split(".")[1]) for c in FLOATS]
        for c, w in zip(FLOATS, want):
            d = float(df[c].iat[i])
            if not (math.isnan(d) and math.isnan(w)):
                worst = max(worst, ulps(d, w))
        check(df["estimate_t_ns"].iat[i] == s.estimate_t_ns, f"{name}: row {i}: estimate_t_ns")
        check(df["sensor_count"].iat[i] == len(s.sensors), f"{name}: row {i}: sensor_count")
        for k in range(nsens):
            w = (s.sensors[k].id, s.sensors[k].t_ns) if k < len(s.sensors) else (0, 0)
            check((df[f"sensors.{k}.id"].iat[i], df[f"sensors.{k}.t_ns"].iat[i]) == w, f"{name}: row {i}: sensor {k}")
    check(worst == 0, f"{name}: state floats read back up to {worst} ulps off")
    print(f"{name}: {len(df)} rows, state floats bit for bit")


def main(log_path, export_dir, combined, analyze_csv):
    with vrlog.open(log_path) as log:
        chan_name = {c.id: c.name for c in log.channels}
        allrecs = list(log.records())
        for c in log.channels:
            recs = [r for r in allrecs if r.channel == c.id]
            fname = re.sub(r"[^A-Za-z0-9._-]", "_", c.name) + ".csv"
            check_table(fname, os.path.join(export_dir, fname), log, recs, chan_name)
        check_table(os.path.basename(combined), combined, log, allrecs, chan_name)

        # analyze --csv: every analyzed sample (data channels, stamped or raw).
        df = pd.read_csv(analyze_csv)
        int_columns(df, ["seq", "t_ns", "recv_wall_ns", "recv_mono_ns", "dt_ns", "latency_ns", "skipped"], "analyze.csv")
        if not problems:
            by_mono = {(chan_name[r.channel], r.recv_mono_ns): r for r in allrecs}
            for i, row in enumerate(df.itertuples(index=False)):
                r = by_mono.get((row.channel, row.recv_mono_ns))
                check(r is not None and r.recv_wall_ns == row.recv_wall_ns, f"analyze.csv: row {i} is no record")
                if r is not None and r.capture_ns is not None:
                    check(row.t_ns == r.capture_ns and row.latency_ns == r.recv_wall_ns - r.capture_ns, f"analyze.csv: row {i}: stamps")
            print(f"analyze.csv: {len(df)} rows")
    for p in problems[:30]:
        print("PROBLEM", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
