#!/usr/bin/env python3
"""Check an MCAP file written by `vrlog export --format mcap` with an
independent reader: the `mcap` package from PyPI (and `jsonschema`).

    check.py FILE.mcap EXPECTED.json

EXPECTED.json, written by the Go test, holds
    {"compression": "zstd",
     "messages": [{"topic": ..., "log_time": ..., "publish_time": ...,
                   "sequence": ..., "schema": ..., "encoding": ...}, ...]}

Checks, each failure printed on its own line:
  * the file opens with mcap.reader.make_reader and has a summary section
    with chunk indexes, statistics, and chunks of the expected compression;
  * every expected message is present exactly once with the same topic,
    log_time, publish_time and sequence, and nothing else is (read twice:
    through the index with CRC validation, and by a linear, non-seeking pass);
  * every schema with encoding "jsonschema" is valid JSON Schema, every
    "json" message parses and validates against its channel's schema, and a
    foxglove.RawImage's base64 data has step * height bytes.

Exit status: 0 all checks passed, 1 a check failed, 2 usage or missing
dependency. The last line of output is a JSON summary.
"""
import base64
import collections
import json
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        from mcap.reader import NonSeekingReader, make_reader
        import jsonschema
    except ImportError as e:  # pragma: no cover
        print(f"mcapcheck: missing dependency: {e} (pip install -r tools/mcapcheck/requirements.txt)", file=sys.stderr)
        return 2
    path, exp_path = argv[1], argv[2]
    with open(exp_path) as f:
        expected = json.load(f)
    problems = []

    def fail(msg):
        if len(problems) < 50:
            print("FAIL: " + msg)
        problems.append(msg)

    def key(topic, log_time, publish_time, sequence):
        return (topic, int(log_time), int(publish_time), int(sequence))

    want = collections.Counter(
        key(m["topic"], m["log_time"], m["publish_time"], m["sequence"]) for m in expected["messages"])
    want_schema = {m["topic"]: (m.get("schema", ""), m.get("encoding", "")) for m in expected["messages"]}

    with open(path, "rb") as f:
        reader = make_reader(f, validate_crcs=True)
        summary = reader.get_summary()
        if summary is None:
            fail("no summary section")
            return report(problems, 0)
        if not summary.chunk_indexes:
            fail("no chunk indexes")
        comp = expected.get("compression")
        if comp is not None:
            for ci in summary.chunk_indexes:
                if ci.compression != comp:
                    fail(f"chunk at {ci.chunk_start_offset}: compression {ci.compression!r}, want {comp!r}")
                    break
        if summary.statistics is None:
            fail("no statistics record")
        elif summary.statistics.message_count != len(expected["messages"]):
            fail(f"statistics: message_count {summary.statistics.message_count}, want {len(expected['messages'])}")

        validators = {}
        for sid, s in summary.schemas.items():
            if s.encoding != "jsonschema":
                fail(f"schema {s.name!r}: encoding {s.encoding!r}, want 'jsonschema'")
                continue
            try:
                doc = json.loads(s.data)
                cls = jsonschema.validators.validator_for(doc)
                cls.check_schema(doc)
                validators[sid] = cls(doc)
            except Exception as e:  # noqa: BLE001 - report any failure
                fail(f"schema {s.name!r}: not a valid JSON Schema: {e}")

        got = collections.Counter()
        n = 0
        for schema, channel, msg in reader.iter_messages(log_time_order=False):
            n += 1
            got[key(channel.topic, msg.log_time, msg.publish_time, msg.sequence)] += 1
            sname = schema.name if schema is not None else ""
            ws = want_schema.get(channel.topic)
            if ws is not None and (sname, channel.message_encoding) != tuple(ws):
                fail(f"topic {channel.topic!r}: schema/encoding {(sname, channel.message_encoding)}, want {tuple(ws)}")
                want_schema.pop(channel.topic)
            if channel.message_encoding == "json":
                try:
                    doc = json.loads(msg.data)
                except ValueError as e:
                    fail(f"topic {channel.topic!r} log_time {msg.log_time}: not JSON: {e}")
                    continue
                v = validators.get(channel.schema_id)
                if v is None:
                    fail(f"topic {channel.topic!r}: json message without a usable schema")
                    continue
                errs = list(v.iter_errors(doc))
                if errs:
                    fail(f"topic {channel.topic!r} log_time {msg.log_time}: does not validate: {errs[0].message}")
                if sname == "foxglove.RawImage":
                    data = base64.b64decode(doc["data"], validate=True)
                    if len(data) != doc["step"] * doc["height"]:
                        fail(f"topic {channel.topic!r} log_time {msg.log_time}: {len(data)} bytes, step*height = {doc['step'] * doc['height']}")
        compare("indexed read", want, got, fail)

    with open(path, "rb") as f:
        got2 = collections.Counter()
        for schema, channel, msg in NonSeekingReader(f, validate_crcs=True).iter_messages():
            got2[key(channel.topic, msg.log_time, msg.publish_time, msg.sequence)] += 1
        compare("linear read", want, got2, fail)
    return report(problems, n)


def compare(what, want, got, fail):
    if want == got:
        return
    missing = want - got
    extra = got - want
    for k in list(missing)[:5]:
        fail(f"{what}: missing message topic={k[0]!r} log_time={k[1]} publish_time={k[2]} sequence={k[3]}")
    for k in list(extra)[:5]:
        fail(f"{what}: unexpected message topic={k[0]!r} log_time={k[1]} publish_time={k[2]} sequence={k[3]}")
    fail(f"{what}: {sum(missing.values())} missing, {sum(extra.values())} unexpected")


def report(problems, n):
    print(json.dumps({"ok": not problems, "messages": n, "problems": len(problems)}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
