"""The decoders of declared schemas (vrlog.declared); e2e/schemas_test.go
checks them against vrlog cat --json on logs of real publishers."""

import base64
import struct

import pytest

from vrlog import declared
from vrlog.errors import DecodeError


def meta(enc, data="", **kw):
    m = {"vrlog.schema.encoding": enc, "vrlog.schema.data": data}
    m.update({f"vrlog.schema.{k}": v for k, v in kw.items()})
    return m


def test_cstruct_packed_natural_offsets_big_endian():
    m = meta("cstruct", "uint64_t seq; int64_t t_ns; double pos[3]; float q")
    p = struct.pack("<Qq3df", 9, 1767225600123456789, 1, 2, float("nan"), 0.5)
    assert declared.decode("s", m, b"", p) == {"seq": 9, "t_ns": 1767225600123456789, "pos": [1.0, 2.0, None], "q": 0.5}
    n = meta("cstruct", "align natural; uint8_t flag; uint64_t seq; double t")
    assert declared.decode("s", n, b"", struct.pack("<B7xQd", 1, 5, 1.5)) == {"flag": 1, "seq": 5, "t": 1.5}
    o = meta("cstruct", "uint32_t sec @4; uint32_t nsec @0; uint16_t n @8", endian="big")
    assert declared.decode("s", o, b"", struct.pack(">IIH", 7, 3, 2)) == {"sec": 3, "nsec": 7, "n": 2}
    with pytest.raises(DecodeError):
        declared.decode("s", m, b"", p[:-1])


def test_json_and_not_declared():
    assert declared.decode("j", meta("json"), b"", b'{"a": {"b": 1}}') == {"a": {"b": 1}}
    with pytest.raises(DecodeError):
        declared.decode("j", meta("json"), b"", b"{")
    assert not declared.declared({})
    assert not declared.declared(meta("none"))  # transport stamps only: raw bytes


def test_ros2_cdr():
    pytest.importorskip("rosbags")
    text = "std_msgs/Header header\nuint32 n\n" + "=" * 80 + "\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n" + \
        "=" * 80 + "\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"
    body = struct.pack("<iII", 5, 6, 4) + b"map\x00" + struct.pack("<I", 7)
    got = declared.decode("t/msg/M", meta("ros2msg", text), b"", b"\x00\x01\x00\x00" + body)
    assert got == {"header": {"stamp": {"sec": 5, "nanosec": 6}, "frame_id": "map"}, "n": 7}
    with pytest.raises(DecodeError):
        declared.decode("t/msg/M", meta("ros2msg", text), b"", b"\x00\x07\x00\x00" + body)


def test_protobuf():
    pytest.importorskip("google.protobuf")
    from google.protobuf import descriptor_pb2

    f = descriptor_pb2.FileDescriptorProto(name="m.proto", package="t", syntax="proto3")
    msg = f.message_type.add(name="M")
    msg.field.add(name="seq", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_UINT64, label=1)
    msg.field.add(name="x", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE, label=1)
    fds = descriptor_pb2.FileDescriptorSet(file=[f]).SerializeToString()
    m = meta("protobuf", base64.b64encode(fds).decode())
    assert declared.decode("t.M", m, b"", b"\x08\x2a\x11" + struct.pack("<d", 1.5)) == {"seq": "42", "x": 1.5}
    with pytest.raises(DecodeError):
        declared.decode("t.M", m, b"", b"\x08")
