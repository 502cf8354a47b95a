"""Run every SQL block of docs/analytics.md in DuckDB.

usage: check_doc_queries.py DATASET RECORDS_DIR [DOC.md]

The doc's queries name the dataset 'timing/' and an export 'records/';
each ```sql block runs with DATASET and RECORDS_DIR in their place (the
first block's views first) and must return rows.
"""

import os
import re
import sys

import duckdb

ds, records = sys.argv[1], sys.argv[2]
doc = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "..", "..", "docs", "analytics.md")
blocks = re.findall(r"```sql\n(.*?)```", open(doc).read(), re.S)
con = duckdb.connect()
n = 0
for b in blocks:
    sql = b.replace("'timing/", f"'{ds}/").replace("'records/", f"'{records}/")
    for stmt in [s for s in sql.split(";") if s.strip()]:
        rel = con.sql(stmt)
        if stmt.strip().lower().startswith("create"):
            continue
        rows = rel.fetchall()
        if not rows:
            sys.exit(f"FAIL: no rows from:\n{stmt}")
        n += 1
print(f"ok: {n} queries of {doc} answer in DuckDB")
