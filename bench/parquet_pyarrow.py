"""pyarrow writing the columns of an exported state table from numpy.

usage: parquet_pyarrow.py EXPORTED_STATE_DIR OUT.parquet

The columns of vrlog's export (read from EXPORTED_STATE_DIR, untimed) as
numpy arrays; then, timed on one thread, pyarrow builds its arrays from
them and writes one Parquet file with the encodings vrlog uses (integers
DELTA_BINARY_PACKED, floats BYTE_STREAM_SPLIT, publisher_id dictionary,
zstd level 1). Prints "records/s records/cpu-s bytes".
"""

import glob
import os
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

pa.set_cpu_count(1)
pa.set_io_thread_count(1)

src, out = sys.argv[1], sys.argv[2]
tab = pa.concat_tables([pq.read_table(f) for f in sorted(glob.glob(src + "/*.parquet"))])
n = tab.num_rows
cols = {}
for name in tab.column_names:
    col = tab.column(name).combine_chunks()
    if name == "sensors":
        s = col.values
        cols[name] = (np.asarray(col.offsets), np.asarray(s.field("id")), np.asarray(s.field("t_ns")))
    elif name == "publisher_id":
        cols[name] = (np.zeros(n, np.int32), col.dictionary_encode().dictionary.to_pylist() if col.null_count < n else [None])
    else:
        cols[name] = np.asarray(col)
del tab

ints = [k for k, v in cols.items() if isinstance(v, np.ndarray) and v.dtype.kind in "iu"]
floats = [k for k, v in cols.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
enc = {k: "DELTA_BINARY_PACKED" for k in ints + ["sensors.list.element.id", "sensors.list.element.t_ns"]}
enc.update({k: "BYTE_STREAM_SPLIT" for k in floats})

t0, c0 = time.perf_counter(), time.process_time()
arrays = {}
for k, v in cols.items():
    if k == "sensors":
        off, ids, tns = v
        arrays[k] = pa.ListArray.from_arrays(pa.array(off), pa.StructArray.from_arrays([pa.array(ids), pa.array(tns)], names=["id", "t_ns"]))
    elif k == "publisher_id":
        arrays[k] = pa.DictionaryArray.from_arrays(pa.array(v[0]), pa.array(v[1], pa.string()))
    else:
        arrays[k] = pa.array(v)
pq.write_table(pa.table(arrays), out, compression="zstd", compression_level=1, use_dictionary=["publisher_id"],
               column_encoding=enc, row_group_size=1 << 20)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(f"{n / wall:.0f} {n / cpu:.0f} {os.path.getsize(out)}")
