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
t0 = time.perf_counter()
rows = duckdb.connect().sql(QUERY).fetchall()
print(f"{time.perf_counter() - t0:.3f} s, {len(rows)} rows")
