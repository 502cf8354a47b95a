"""Plot lag p99 over runs with docs/analytics.md's own trend query.

usage: plot_trend.py DATASET OUT.png [DOC.md]

Runs the SQL block of DOC.md (default docs/analytics.md) that follows the
line "<!-- trend query -->", with DATASET in place of 'timing', in DuckDB,
and plots its lag_latest_ms_p99 per frame channel against the run's start
(matplotlib, headless). Prints the rows plotted.
"""

import os
import re
import sys

import duckdb
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ds, out = sys.argv[1], sys.argv[2]
doc = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "..", "..", "docs", "analytics.md")
text = open(doc).read()
m = re.search(r"<!-- trend query -->\s*```sql\n(.*?)```", text, re.S)
if not m:
    sys.exit(f"{doc}: no SQL block after <!-- trend query -->")
sql = m.group(1).replace("'timing/", f"'{ds}/")
rows = duckdb.connect().sql(sql).fetchall()
if not rows:
    sys.exit("the trend query returned no row")
series = {}
for start, commit, channel, p99 in rows:
    series.setdefault(channel, []).append((start, p99))
fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
for channel, pts in sorted(series.items()):
    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, linewidth=1.2, label=channel)
ax.set_ylabel("frame-to-state lag p99 (ms)")
ax.set_xlabel("run start (UTC)")
ax.set_title("lag p99 over runs (docs/analytics.md trend query)")
ax.grid(alpha=0.3)
ax.legend(fontsize=8)
fig.autofmt_xdate()
fig.tight_layout()
fig.savefig(out)
print(f"ok: {len(rows)} runs plotted into {out}")
