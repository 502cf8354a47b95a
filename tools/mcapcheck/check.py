#!/usr/bin/env python3
"""Check an MCAP file written by `vrlog export --format mcap` with an
independent reader: the `mcap` package from PyPI, `mcap-protobuf-support`
(protobuf messages, decoded with the schema's embedded FileDescriptorSet)
and `jsonschema`.

    check.py FILE.mcap EXPECTED.json

EXPECTED.json, written by the Go test, holds
    {"compression": "zstd",
     "messages": [{"topic": ..., "log_time": ..., "publish_time": ...,
                   "sequence": ..., "schema": ..., "encoding": ...,
                   "fields": {"pose.position.x": 1.5, ...},    # optional
                   "data_sha256": "..."}, ...]}                 # optional

Checks, each failure printed on its own line:
  * the file opens with mcap.reader.make_reader and has a summary section
    with chunk indexes, statistics, and chunks of the expected compression;
  * every expected message is present exactly once with the same topic,
    log_time, publish_time and sequence, and nothing else is (read twice:
    through the index with CRC validation, and by a linear, non-seeking pass);
  * every channel has a message encoding ("json" or "protobuf"), every
    schema with encoding "jsonschema" is valid JSON Schema, every "json"
    message parses and validates against its channel's schema;
  * every "protobuf" channel's schema is a FileDescriptorSet holding the
    message its schema name gives, every message decodes with it (no
    unknown fields), and a foxglove.RawImage's data has step * height bytes;
  * an expected message's "fields" (dotted paths into the decoded message)
    equal the decoded values, and its "data_sha256" the sha256 of the
    message's `data` field (a RawImage's pixels).

Exit status: 0 all checks passed, 1 a check failed, 2 usage or missing
dependency. The last line of output is a JSON summary.
"""
import base64
import collections
import hashlib
import json
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        from mcap.reader import NonSeekingReader, make_reader
        from mcap_protobuf.decoder import DecoderFactory
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
    want_fields = {key(m["topic"], m["log_time"], m["publish_time"], m["sequence"]): m
                   for m in expected["messages"] if "fields" in m or "data_sha256" in m}
    proto = DecoderFactory()

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

        for cid, c in summary.channels.items():
            if c.message_encoding not in ("json", "protobuf"):
                fail(f"channel {c.topic!r}: message encoding {c.message_encoding!r}, want 'json' or 'protobuf'")
            elif c.schema_id == 0 or c.schema_id not in summary.schemas:
                fail(f"channel {c.topic!r}: no schema")
        validators = {}
        decoders = {}
        for sid, s in summary.schemas.items():
            if s.encoding == "protobuf":
                try:
                    decoders[sid] = proto.decoder_for("protobuf", s)
                except Exception as e:  # noqa: BLE001 - report any failure
                    fail(f"schema {s.name!r}: not a usable FileDescriptorSet: {e}")
                continue
            if s.encoding != "jsonschema":
                fail(f"schema {s.name!r}: encoding {s.encoding!r}, want 'jsonschema' or 'protobuf'")
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
            k = key(channel.topic, msg.log_time, msg.publish_time, msg.sequence)
            if channel.message_encoding == "protobuf":
                dec = decoders.get(channel.schema_id)
                if dec is None:
                    fail(f"topic {channel.topic!r}: protobuf message without a usable schema")
                    continue
                try:
                    pm = dec(msg.data)
                except Exception as e:  # noqa: BLE001 - report any failure
                    fail(f"topic {channel.topic!r} log_time {msg.log_time}: does not decode as {sname}: {e}")
                    continue
                if pm.DESCRIPTOR.full_name != sname:
                    fail(f"topic {channel.topic!r}: decoded as {pm.DESCRIPTOR.full_name}, schema name {sname!r}")
                if unknown_fields(pm):
                    fail(f"topic {channel.topic!r} log_time {msg.log_time}: unknown protobuf fields")
                if sname == "foxglove.RawImage" and len(pm.data) != pm.step * pm.height:
                    fail(f"topic {channel.topic!r} log_time {msg.log_time}: {len(pm.data)} bytes, step*height = {pm.step * pm.height}")
                check_fields(channel.topic, msg.log_time, pm, want_fields.get(k), fail, lambda m, f: getattr(m, f))
                continue
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
                check_fields(channel.topic, msg.log_time, doc, want_fields.get(k), fail, lambda m, f: m[f])
        compare("indexed read", want, got, fail)

    with open(path, "rb") as f:
        got2 = collections.Counter()
        for schema, channel, msg in NonSeekingReader(f, validate_crcs=True).iter_messages():
            got2[key(channel.topic, msg.log_time, msg.publish_time, msg.sequence)] += 1
        compare("linear read", want, got2, fail)
    return report(problems, n)


def unknown_fields(pm):
    """How many fields of pm (and of its sub-messages) its schema does not know."""
    from google.protobuf.unknown_fields import UnknownFieldSet
    n = len(UnknownFieldSet(pm))
    for fd, v in pm.ListFields():
        if fd.message_type is not None and not getattr(fd, "is_repeated", getattr(fd, "label", 0) == 3):
            n += unknown_fields(v)
    return n


def check_fields(topic, log_time, msg, want, fail, get):
    """Compare an expected message's fields and data digest with msg."""
    if want is None:
        return
    for path, v in want.get("fields", {}).items():
        got = msg
        try:
            for part in path.split("."):
                got = get(got, part)
        except (AttributeError, KeyError) as e:
            fail(f"topic {topic!r} log_time {log_time}: no field {path}: {e}")
            continue
        if got != v:
            fail(f"topic {topic!r} log_time {log_time}: {path} = {got!r}, want {v!r}")
    if "data_sha256" in want:
        data = get(msg, "data")
        if isinstance(data, str):
            data = base64.b64decode(data, validate=True)
        if hashlib.sha256(data).hexdigest() != want["data_sha256"]:
            fail(f"topic {topic!r} log_time {log_time}: data differs from the log's ({len(data)} bytes)")


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
