"""Check an `analyze --dataset` dataset against the runs' `analyze --json` reports.

usage: check_dataset.py DATASET REPORTS_DIR GROUPBY_OUT.json

Each run was analyzed with --label case=NAME and its report saved as
REPORTS_DIR/NAME.json (a run whose analysis failed: REPORTS_DIR/NAME.error).
DuckDB reads the three tables (Hive partitions) and, per run, every column
of every channels row must equal the report's figure it is named after
(dt_ms_p99 is channels[].dt_ms.p99; lag_* the lag[] entry of the frame
channel, reaction_* the reaction[] entry of the trigger channel), float
for float; the events rows must be the report's skips, restarts, outages,
lag across outages and checks; the runs row its verdict and labels. A
failed analysis has a runs row of status error and no other rows. pandas
and polars read the same tables. The answer of GROUPBY (a group-by over
runs) is written to GROUPBY_OUT.json for check_spark.py.
"""

import glob
import json
import os
import sys

import duckdb
import pandas as pd
import polars as pl

# The group-by that Spark must answer the same: per robot (a label) and
# channel, over the runs that were analyzed.
GROUPBY = """
select r.labels['robot'] as robot, c.name as channel, count(*) as runs,
       sum(c.skipped) as skipped, sum(c.restart_count) as restarts,
       sum(c.outage_count) as outages, max(c.lag_latest_ms_p99) as worst_lag_p99,
       min(c.rate_hz) as min_rate_hz, sum(case when r.pass then 1 else 0 end) as passed
from runs r join channels c on r.run_id = c.run_id
where r.status <> 'error'
group by r.labels['robot'], c.name
order by robot, channel
"""

KEYS = ("run_id", "schema_version", "date")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def same(want, got, where):
    if want != got or type(want) is float and str(want) != str(got):
        fail(f"{where}: want {want!r}, got {got!r}")


def resolve(obj, name):
    """The report figure a flattened column name stands for: nested keys
    joined by "_" (a key may hold "_" itself); None below a null object."""
    if obj is None:
        return None
    if name in obj:
        return obj[name]
    for k, v in obj.items():
        if name.startswith(k + "_") and (v is None or isinstance(v, dict)):
            return resolve(v, name[len(k) + 1:])
    raise KeyError(name)


def connect(ds):
    con = duckdb.connect()
    for t in ("runs", "channels", "events"):
        con.sql(f"create view {t} as select * from read_parquet('{ds}/{t}/*/*.parquet', hive_partitioning=true)")
    return con


def rows(con, sql, *params):
    rel = con.execute(sql, params)
    cols = [d[0] for d in rel.description]
    return [dict(zip(cols, r)) for r in rel.fetchall()]


def check_channels(con, run_id, rep, case):
    got = {r["name"]: r for r in rows(con, "select * from channels where run_id = ?", run_id)}
    same(sorted(c["name"] for c in rep["channels"]), sorted(got), f"{case}: channels")
    for ch in rep["channels"]:
        row = got[ch["name"]]
        lag = next((l for l in rep["lag"] if l["frames"] == ch["name"]), None)
        react = next((x for x in rep["reaction"] if x["trigger"] == ch["name"]), None)
        src = dict(ch, lag=lag, reaction=react, outage_count=len(ch["outages"]))
        for col, v in row.items():
            if col in KEYS:
                continue
            try:
                want = resolve(src, col)
            except KeyError:
                fail(f"{case} {ch['name']}: column {col} is no figure of the report")
            if isinstance(want, list) and want and isinstance(want[0], dict):
                fail(f"{case}: column {col} holds a list of objects")
            same(want, v, f"{case} {ch['name']} {col}")
    return len(got)


def check_events(con, run_id, rep, case):
    got = rows(con, "select * from events where run_id = ? order by kind, channel, from_ns, name", run_id)
    want = []
    for ch in rep["channels"]:
        for s in ch["skips"]:
            want.append(("skip", ch["name"], s["t_ns"], s["t_ns"], s["skipped"], s["seq"]))
        for r in ch["restarts"]:
            want.append(("restart", ch["name"], r["before_ns"], r["after_ns"], None, r["seq"]))
        for o in ch["outages"]:
            want.append(("outage", ch["name"], o["from_ns"], o["to_ns"], None, None))
    for l in rep["lag"]:
        for o in l["across_outages"]:
            want.append(("lag_across_outage", l["frames"], o["from_ns"], o["to_ns"], o["frames"], None))
    for c in rep["checks"]:
        want.append(("check", c["channel"], None, None, None, None))
    have = [(e["kind"], e["channel"], e["from_ns"], e["to_ns"], e["count"], e["seq"]) for e in got]
    key = lambda t: tuple("" if x is None else str(x) for x in t)
    same(sorted(want, key=key), sorted(have, key=key), f"{case}: events")
    checks = {(c["name"], c["channel"]): c for c in rep["checks"]}
    for e in got:
        if e["kind"] == "check":
            c = checks[(e["name"], e["channel"])]
            for k, col in (("value", "value"), ("limit", "threshold"), ("unit", "unit"), ("pass", "pass"), ("message", "message")):
                same(c[k], e[col], f"{case} check {c['name']} {k}")
    return len(got)


def main():
    ds, reports, out = sys.argv[1], sys.argv[2], sys.argv[3]
    con = connect(ds)
    runs = {r["labels"]["case"]: r for r in rows(con, "select * from runs")}
    cases = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(reports + "/*"))
    same(cases, sorted(runs), "runs: one per analysis")
    nchan = nev = 0
    for case in cases:
        run = runs[case]
        same(1, run["schema_version"], f"{case}: schema_version")
        err = os.path.join(reports, case + ".error")
        if os.path.exists(err):
            same("error", run["status"], f"{case}: status")
            if not run["error"]:
                fail(f"{case}: a failed run without its error")
            n = rows(con, "select (select count(*) from channels where run_id = $1) + (select count(*) from events where run_id = $1) as n", run["run_id"])
            same(0, n[0]["n"], f"{case}: rows of a failed run")
            continue
        with open(os.path.join(reports, case + ".json")) as f:
            rep = json.load(f)
        same("pass" if rep["pass"] else "fail", run["status"], f"{case}: status")
        same(rep["pass"], run["pass"], f"{case}: pass")
        same(rep["start_ns"], run["start_ns"], f"{case}: start_ns")
        same(rep["duration_s"], run["duration_s"], f"{case}: duration_s")
        same(len(rep["checks"]), run["checks"], f"{case}: checks")
        nchan += check_channels(con, run["run_id"], rep, case)
        nev += check_events(con, run["run_id"], rep, case)
    # pandas and polars read the same tables (Hive partitions: date).
    for t, n in (("runs", len(runs)), ("channels", nchan), ("events", nev)):
        df = pd.read_parquet(os.path.join(ds, t))
        same(n, len(df), f"pandas {t} rows")
        same(n, pl.read_parquet(os.path.join(ds, t, "*", "*.parquet"), hive_partitioning=True).height, f"polars {t} rows")
    answer = rows(con, GROUPBY)
    with open(out, "w") as f:
        counts = {t: rows(con, f"select count(*) as n from {t}")[0]["n"] for t in ("runs", "channels", "events")}
        json.dump({"sql": GROUPBY, "rows": answer, "counts": counts}, f, indent=1)
    print(f"ok: {len(runs)} runs, {nchan} channels rows and {nev} events rows equal the reports (DuckDB); pandas and polars read them; group-by: {len(answer)} rows")


if __name__ == "__main__":
    main()
