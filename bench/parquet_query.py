"""Time docs/analytics.md's trend query over a dataset in DuckDB.

usage: parquet_query.py DATASET

A fresh DuckDB connection each time (nothing cached), the query of lag
p99 per frame channel over runs in start order; prints the seconds and
the rows.
"""

import sys
import time

import duckdb

ds = sys.argv[1]
QUERY = f"""
select r.start, r.labels['commit'] as commit, c.name as channel, c.lag_latest_ms_p99
from read_parquet('{ds}/runs/*/*.parquet', hive_partitioning = true) r
join read_parquet('{ds}/channels/*/*.parquet', hive_partitioning = true) c on c.run_id = r.run_id
where c.kind = 'frame' and r.status <> 'error'
order by r.start, r.run_id
"""
t0, c0 = time.perf_counter(), time.process_time()
con = duckdb.connect()
rows = con.sql(QUERY).fetchall()
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
threads = con.sql("select current_setting('threads')").fetchall()[0][0]
print(f"{wall:.3f} s ({cpu:.3f} s of CPU, {threads} threads), {len(rows)} rows")
