"""Dump what the Python reader reads from logs, for python/reader_test.go to
compare with the Go reader on the same files.

Reads a JSON list of jobs on stdin, each {"file": PATH, and optionally
"tolerant", "ignore_index", "meta_only", "no_numpy" (booleans), "channels"
(ids), "start", "end" (ns), "clock" ("mono" or "wall")}, and writes a JSON
list with one object per job: the header, channels, chunks, stats, writer
stats, torn tail, warnings, skipped chunks and every record with all its
stamps and the SHA-256 of its header and payload; or the error and its
offset.
"""

import dataclasses
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # the checkout, if not installed

import vrlog  # noqa: E402


def dump(job: dict) -> dict:
    try:
        with vrlog.open(job["file"], tolerant=job.get("tolerant", False), ignore_index=job.get("ignore_index", False),
                        use_numpy=not job.get("no_numpy", False)) as log:
            recs = []
            for r in log.records(job.get("channels"), job.get("start"), job.get("end"), clock=job.get("clock", "mono"),
                                 payloads=not job.get("meta_only", False)):
                recs.append({
                    "channel": r.channel, "recv_wall_ns": r.recv_wall_ns, "recv_mono_ns": r.recv_mono_ns,
                    "capture_ns": r.capture_ns, "seq": r.seq,
                    "publisher_id": None if r.publisher_id is None else r.publisher_id.hex(),
                    "publisher_sn": r.publisher_sn, "header_len": r.header_len, "payload_len": r.payload_len,
                    "header_sha256": None if r.header is None else hashlib.sha256(r.header).hexdigest(),
                    "payload_sha256": None if r.payload is None else hashlib.sha256(r.payload).hexdigest(),
                })
            return {
                "version": list(log.version), "created_wall_ns": log.created_wall_ns, "metadata": log.metadata,
                "indexed": log.indexed, "torn_tail": log.torn_tail.offset if log.torn_tail else -1,
                "warnings": [e.offset for e in log.warnings],
                "skipped": [e.offset for e in log.skipped_chunks],
                "channels": [dataclasses.asdict(c) for c in log.channels],
                "chunks": [dataclasses.asdict(c) for c in log.chunks],
                "stats": [dataclasses.asdict(s) for s in log.stats],
                "writer": log.writer_stats, "records": recs,
            }
    except vrlog.CorruptionError as e:
        return {"error": str(e), "error_offset": e.offset}
    except vrlog.NotVrlogError as e:
        return {"error": str(e), "error_offset": 0}  # the magic, at offset 0
    except vrlog.UnsupportedVersionError as e:
        return {"error": str(e), "error_offset": 8}  # the major version, at offset 8
    except vrlog.VrlogError as e:
        return {"error": str(e), "error_offset": -1}


if __name__ == "__main__":
    json.dump([dump(j) for j in json.load(sys.stdin)], sys.stdout)
