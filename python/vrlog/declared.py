"""Decode the payloads of channels with a declared schema (docs/schemas.md).

A channel whose meta has ``vrlog.schema.encoding`` was given a declaration
when it was recorded; the meta holds the schema itself, so nothing else is
needed. Each payload decodes to a dict (a list or a value for JSON) equal
to what ``vrlog cat --json`` prints as ``decoded``:

- ``protobuf``: the FileDescriptorSet (base64 in ``vrlog.schema.data``)
  and the message name (the channel's schema), decoded by the ``protobuf``
  package, as the proto3 JSON mapping with the .proto's field names and
  every field (int64 as strings);
- ``ros2msg``: ROS 2 CDR from the ``.msg`` text (MCAP's ros2msg: the
  type's definition, then each one it uses after a line of ``=``), decoded
  by the ``rosbags`` package;
- ``json``: the payload itself;
- ``cstruct``: the fields of the declared C struct layout.

protobuf and rosbags are needed only for their encodings
(``pip install vrlog[schemas]``).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import struct
from functools import lru_cache

from .errors import DecodeError

META_ENCODING = "vrlog.schema.encoding"
META_DATA = "vrlog.schema.data"
META_ENDIAN = "vrlog.schema.endian"


def declared(meta: dict) -> bool:
    """True for a channel recorded with a declared schema."""
    return meta.get(META_ENCODING, "") not in ("", "none")


def decode(name: str, meta: dict, header: bytes, payload: bytes):
    """Decode a payload of a channel with a declared schema (name: the
    channel's schema field). Raises DecodeError when it does not parse."""
    enc = meta.get(META_ENCODING, "")
    data = meta.get(META_DATA, "")
    payload = bytes(payload)
    try:
        if enc == "protobuf":
            return _protobuf(name, data)(payload)
        if enc == "ros2msg":
            return _ros2(name, data)(payload)
        if enc == "json":
            return json.loads(payload)
        if enc == "cstruct":
            return _cstruct(data, meta.get(META_ENDIAN, ""))(payload)
    except DecodeError:
        raise
    except Exception as e:  # the libraries' own errors: the payload is not of the schema
        raise DecodeError(name, enc, 0, "invalid value", str(e)) from e
    raise DecodeError(name, "encoding", 0, "invalid value", f"unknown encoding {enc!r}")


@lru_cache(maxsize=64)
def _protobuf(name: str, data: str):
    from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

    fds = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(data))
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(name))

    def dec(payload):
        m = cls.FromString(bytes(payload))
        return json_format.MessageToDict(m, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)

    return dec


_SEPARATOR = "=" * 80


@lru_cache(maxsize=64)
def _ros2(name: str, text: str):
    from rosbags.typesys import Stores, get_typestore, get_types_from_msg

    ts = get_typestore(Stores.EMPTY)
    sections = text.split(_SEPARATOR)
    types = {}
    types.update(get_types_from_msg(sections[0], name))
    for s in sections[1:]:
        head, _, body = s.lstrip("\n").partition("\n")
        dep = head.strip().removeprefix("MSG: ")
        if dep.count("/") == 1:
            dep = dep.replace("/", "/msg/")
        types.update(get_types_from_msg(body, dep))
    ts.register(types)

    def dec(payload):
        if len(payload) < 4 or payload[0] != 0 or payload[1] not in (0, 1):
            raise DecodeError(name, "encapsulation", 0, "invalid value", f"not CDR: {bytes(payload[:4]).hex()}")
        return _plain(ts, ts.deserialize_cdr(bytes(payload), name))

    return dec


def _plain(ts, v):
    """A rosbags message as dicts (its fields, not its constants), lists and numbers."""
    if dataclasses.is_dataclass(v):
        return {f: _plain(ts, getattr(v, f)) for f, _ in ts.fielddefs[v.__msgtype__][1]}
    if hasattr(v, "tolist"):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(ts, x) for x in v]
    return v


_CTYPES = {
    "int8_t": "b", "uint8_t": "B", "int16_t": "h", "uint16_t": "H", "int32_t": "i", "uint32_t": "I",
    "int64_t": "q", "uint64_t": "Q", "float": "f", "double": "d", "bool": "B", "char": "b",
    "i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I", "i64": "q", "u64": "Q", "f32": "f", "f64": "d",
}


@lru_cache(maxsize=64)
def _cstruct(layout: str, endian: str):
    """The C struct grammar of docs/schemas.md: "TYPE NAME[N] [@OFFSET]; ...",
    packed unless it starts with "align natural"."""
    order = ">" if endian == "big" else "<"
    natural, fields, off, size, biggest = False, [], 0, 0, 1
    for i, decl in enumerate(x.strip() for x in layout.split(";")):
        if not decl:
            continue
        if i == 0 and decl.startswith("align "):
            natural = decl.split()[1] == "natural"
            continue
        words = decl.split()
        at = None
        if len(words) == 3 and words[2].startswith("@"):
            at, words = int(words[2][1:]), words[:2]
        code = _CTYPES[words[0]]
        m = re.fullmatch(r"([^\[]+)(?:\[(\d+)\])?", words[1])
        fname, n = m.group(1), int(m.group(2) or 1)
        width = struct.calcsize(code)
        if at is not None:
            off = at
        elif natural and off % width:
            off += width - off % width
        biggest = max(biggest, width)
        fields.append((fname, order + code * n, off, n, words[0] == "bool"))
        off += width * n
        size = max(size, off)
    if natural and size % biggest:
        size += biggest - size % biggest

    def dec(payload):
        if len(payload) != size:
            raise DecodeError("cstruct", "struct", min(len(payload), size), "truncated" if len(payload) < size else "trailing bytes",
                              f"the struct is {size} bytes, the payload {len(payload)}")
        out = {}
        for fname, fmt, at, n, _ in fields:
            v = struct.unpack_from(fmt, payload, at)
            out[fname] = [_num(x) for x in v] if n > 1 else _num(v[0])
        return out

    return dec


def _num(x):
    """NaN and infinities as None, as vrlog's JSON writes them (null)."""
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return None
    return x
