"""Spark reads an `analyze --dataset` dataset and answers as DuckDB did.

usage: check_spark.py DATASET GROUPBY.json

One local[2] Spark session reads the runs, channels and events tables
(Hive partitions by date) and runs check_dataset.py's group-by over runs;
its rows must equal DuckDB's (GROUPBY.json, written by check_dataset.py),
and every table's row count DuckDB's.
"""

import json
import os
import sys
import time

from pyspark.sql import SparkSession


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    ds, expected = sys.argv[1], sys.argv[2]
    with open(expected) as f:
        want = json.load(f)
    t0 = time.time()
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # loopback only, never the host's interfaces
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("vrlog-dataset-check")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    started = time.time() - t0
    try:
        for t in ("runs", "channels", "events"):
            spark.read.parquet(f"{ds}/{t}").createOrReplaceTempView(t)
        counts = {t: spark.sql(f"select count(*) as n from {t}").collect()[0]["n"] for t in ("runs", "channels", "events")}
        for t, n in want["counts"].items():
            if counts[t] != n:
                fail(f"{t}: Spark reads {counts[t]} rows, DuckDB {n}")
        got = [r.asDict() for r in spark.sql(want["sql"]).collect()]
        if len(got) != len(want["rows"]):
            fail(f"group-by: Spark {len(got)} rows, DuckDB {len(want['rows'])}")
        for i, (g, w) in enumerate(zip(got, want["rows"])):
            for k, v in w.items():
                if g[k] != v or type(v) is float and repr(g[k]) != repr(v):
                    fail(f"group-by row {i} {k}: Spark {g[k]!r}, DuckDB {v!r}")
        schema = dict(spark.table("runs").dtypes)
        if schema.get("labels") != "map<string,string>" or schema.get("date") != "date":
            fail(f"runs schema in Spark: {schema}")
    finally:
        spark.stop()
    print(f"ok: Spark (local[2], session up in {started:.1f} s) reads {counts} rows and answers the group-by as DuckDB ({len(got)} rows), in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
