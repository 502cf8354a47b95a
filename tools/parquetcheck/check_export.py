"""Check `vrlog export --format parquet` against `vrlog cat --json`, in real engines.

usage: check_export.py CAT.jsonl OUTDIR

(cat --json --raw and export --payloads: the header and payload bytes too)

DuckDB reads every channel's table (OUTDIR/<channel>/*.parquet, in file
and row order) and each row must equal the record `vrlog cat --json`
printed: every int64 stamp exactly, every float bit for bit (cat prints a
NaN as null), the decoded fields, the frame header. pandas and polars then
read each table and must agree with DuckDB on its stamps. Exit 1 with the
first difference.
"""

import glob
import json
import math
import os
import struct
import sys

import duckdb
import pandas as pd
import polars as pl
import pyarrow.parquet as pq

STATE_FLOATS = {
    "position": ("x", "y", "z"),
    "orientation": ("x", "y", "z", "w"),
    "linear_velocity": ("x", "y", "z"),
    "angular_velocity": ("x", "y", "z"),
}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def bits(v):
    return struct.pack("<d", v)


def same_float(want, got, where):
    """want: cat's JSON number (None for NaN); got: the Parquet double."""
    if want is None:
        if got is None or not math.isnan(got):
            fail(f"{where}: want NaN (cat null), got {got!r}")
        return
    if got is None or bits(float(want)) != bits(got):
        fail(f"{where}: want {want!r}, got {got!r}")


def parse_int(s):
    # cat prints a float -0.0 as -0, which would parse as the int 0
    return -0.0 if s == "-0" else int(s)


def same(want, got, where):
    if want != got:
        fail(f"{where}: want {want!r}, got {got!r}")


def tables(outdir):
    """channel name -> its directory, from each file's key-value metadata."""
    out = {}
    for d in sorted(glob.glob(os.path.join(outdir, "*"))):
        files = sorted(glob.glob(os.path.join(d, "*.parquet")))
        if not files:
            fail(f"{d}: no Parquet file")
        meta = pq.ParquetFile(files[0]).metadata.metadata
        name = meta[b"vrlog.channel"].decode()
        if meta[b"vrlog.records.schema"] != b"vrlog.records/1":
            fail(f"{d}: schema {meta[b'vrlog.records.schema']!r}")
        out[name] = d
    return out


def check_state(rec, row, where):
    dec = rec.get("decoded")
    if dec is None:
        same(False, row["decoded"], where + " decoded")
        return
    same(True, row["decoded"], where + " decoded")
    same(dec["estimate_t_ns"], row["estimate_t_ns"], where + " estimate_t_ns")
    same_float(dec["elapsed"], row["elapsed"], where + " elapsed")
    for vec, axes in STATE_FLOATS.items():
        for a in axes:
            same_float(dec[vec][a], row[f"{vec}_{a}"], f"{where} {vec}.{a}")
    got = [{"id": s["id"], "t_ns": s["t_ns"]} for s in row["sensors"]]
    same(dec["sensors"], got, where + " sensors")


def check_frame(rec, row, where):
    dec = rec.get("decoded")
    if dec is None:
        same(False, row["decoded"], where + " decoded")
        return
    same(True, row["decoded"], where + " decoded")
    for k in ("camera_id", "width", "height", "stride", "encoding", "data_size"):
        same(dec[k], row[k], f"{where} {k}")


def check_probe(rec, row, where):
    dec = rec.get("decoded")
    same(dec is not None, row["decoded"], where + " decoded")
    if dec is not None:
        for k in ("t1_ns", "t2_ns", "t3_ns", "t4_ns"):
            same(dec[k], row[k], f"{where} {k}")


def main():
    cat_path, outdir = sys.argv[1], sys.argv[2]
    by_chan = {}
    with open(cat_path) as f:
        for line in f:
            rec = json.loads(line, parse_int=parse_int)
            by_chan.setdefault(rec["channel"], []).append(rec)
    dirs = tables(outdir)
    if set(dirs) != set(by_chan) and not set(by_chan) <= set(dirs):
        fail(f"channels: cat has {sorted(by_chan)}, export has {sorted(dirs)}")
    con = duckdb.connect()
    total = 0
    for name, d in sorted(dirs.items()):
        recs = by_chan.get(name, [])
        rel = con.sql(
            f"select * from read_parquet('{d}/*.parquet', filename=true, file_row_number=true) order by filename, file_row_number"
        )
        cols = rel.columns
        rows = [dict(zip(cols, r)) for r in rel.fetchall()]
        same(len(recs), len(rows), f"{name}: rows")
        schema = pq.ParquetFile(sorted(glob.glob(d + "/*.parquet"))[0]).metadata.metadata[b"vrlog.schema"].decode()
        for i, (rec, row) in enumerate(zip(recs, rows)):
            where = f"{name} row {i}"
            for k in ("recv_wall_ns", "recv_mono_ns", "header_bytes", "payload_bytes"):
                same(rec[k], row[k], f"{where} {k}")
            for k in ("seq", "t_ns", "publisher_sn"):
                same(rec.get(k), row[k], f"{where} {k}")
            same(rec.get("publisher_id"), row["publisher_id"], where + " publisher_id")
            if "payload_hex" in rec:  # cat --raw, export --payloads
                same(rec["payload_hex"], bytes(row["payload"]).hex(), where + " payload")
                same(rec["header_hex"], bytes(row["header"] or b"").hex(), where + " header")
            if row["t_ns"] is None:
                same(None, row["elapsed"], where + " elapsed")
            if schema == "vrsdk.State/1":
                check_state(rec, row, where)
            elif schema == "vrsdk.Frame/1":
                check_frame(rec, row, where)
            elif schema == "vrlog.ClockProbe/1":
                check_probe(rec, row, where)
        total += len(rows)
        # pandas and polars read the same table: the same stamps, int64 exact.
        df = pd.read_parquet(d)
        pdl = pl.read_parquet(d + "/*.parquet")
        same(len(rows), len(df), f"{name}: pandas rows")
        same(len(rows), pdl.height, f"{name}: polars rows")
        same(str(df["recv_wall_ns"].dtype), "int64", f"{name}: pandas recv_wall_ns dtype")
        same([r["recv_wall_ns"] for r in rows], [int(v) for v in df["recv_wall_ns"]], f"{name}: pandas recv_wall_ns")
        same([r["t_ns"] for r in rows], pdl["t_ns"].to_list(), f"{name}: polars t_ns")
    print(f"ok: {total} records in {len(dirs)} tables equal cat --json (DuckDB), pandas and polars agree")


if __name__ == "__main__":
    main()
