#!/usr/bin/env python3
"""Publish a team's own messages over zenoh, as a robotics team's nodes would.

Two streams under --prefix: PREFIX/pose (a state: every slot) and
PREFIX/cam (every --frame-every slot, stamped --lag-ms after its state),
in one encoding, serialized by the library made for it:

  protobuf  team.Pose (ownmsg/team.proto, compiled here by grpcio-tools,
            serialized by the protobuf wheel); stamp header.stamp
            (google.protobuf.Timestamp), seq header.seq
  json      {"header": {"stamp_ns", "seq", "frame_id"}, "x", "y"}
  ros2      team_msgs/msg/Odom (ownmsg/team_msgs/msg/Odom.msg) in CDR by
            rosbags; stamp header.stamp; no seq in the message: each put
            carries zenoh source info (its sequence number) and, as
            rmw_zenoh attaches it, the attachment with sequence_number,
            source_timestamp (the send time) and source_gid
  cstruct   a packed little-endian C struct: uint64 seq, int64 t_ns,
            double x, double y, uint32 flags (36 bytes)

Injected, as the truth file says: --skip seqs not published from
--skip-at on (their time passes), and at --restart-at the publisher
restarts: its seqs (and source info) start again at 0 after a
--restart-gap of silence. --raw publishes PREFIX/raw too: 8 opaque bytes
per slot with a zenoh timestamp and source info, the same skip and
restart. Every message sent is a JSON line in --log: key, seq, t_ns, x,
the zenoh source sn if any.
"""

import argparse
import json
import os
import struct
import sys
import tempfile
import time

import zenoh

from common import zenoh_config

HERE = os.path.dirname(os.path.abspath(__file__))


def protobuf_encoder():
    from grpc_tools import protoc

    out = tempfile.mkdtemp(prefix="ownmsg-pb-")
    inc = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    src = os.path.join(HERE, "ownmsg")
    if protoc.main(["protoc", f"-I{src}", f"-I{inc}", f"--python_out={out}", os.path.join(src, "team.proto")]) != 0:
        sys.exit("protoc failed")
    sys.path.insert(0, out)
    import team_pb2

    def encode(seq, t_ns, x, y):
        m = team_pb2.Pose(x=x, y=y, cov=[0.5, 0.25])
        m.header.stamp.seconds, m.header.stamp.nanos = divmod(t_ns, 1_000_000_000)
        m.header.seq = seq
        m.header.frame_id = "map"
        return m.SerializeToString()

    return encode


def ros2_encoder():
    import numpy as np
    from rosbags.typesys import Stores, get_typestore, get_types_from_msg

    ts = get_typestore(Stores.ROS2_HUMBLE)
    with open(os.path.join(HERE, "ownmsg", "team_msgs", "msg", "Odom.msg")) as f:
        ts.register(get_types_from_msg(f.read(), "team_msgs/msg/Odom"))
    T = ts.types
    odom, header, stamp = T["team_msgs/msg/Odom"], T["std_msgs/msg/Header"], T["builtin_interfaces/msg/Time"]
    pose, point, quat = T["geometry_msgs/msg/Pose"], T["geometry_msgs/msg/Point"], T["geometry_msgs/msg/Quaternion"]

    def encode(seq, t_ns, x, y):
        sec, nsec = divmod(t_ns, 1_000_000_000)
        m = odom(header=header(stamp=stamp(sec=sec, nanosec=nsec), frame_id="map"),
                 pose=pose(position=point(x=x, y=y, z=0.0), orientation=quat(x=0.0, y=0.0, z=0.0, w=1.0)),
                 covariance=np.array([0.5, 0.25], dtype=np.float64))
        return bytes(ts.serialize_cdr(m, "team_msgs/msg/Odom"))

    return encode


def json_encoder():
    def encode(seq, t_ns, x, y):
        return json.dumps({"header": {"stamp_ns": t_ns, "seq": seq, "frame_id": "map"}, "x": x, "y": y}).encode()

    return encode


def cstruct_encoder():
    layout = struct.Struct("<QqddI")

    def encode(seq, t_ns, x, y):
        return layout.pack(seq, t_ns, x, y, 1)

    return encode


def rmw_attachment(seq, send_ns):
    """What rmw_zenoh attaches to a ROS 2 message, in zenoh-ext's serialization."""
    from zenoh.ext import Int64, z_serialize

    return z_serialize(("sequence_number", Int64(seq), "source_timestamp", Int64(send_ns), "source_gid", bytes(16)))


ENCODERS = {"protobuf": protobuf_encoder, "json": json_encoder, "ros2": ros2_encoder, "cstruct": cstruct_encoder}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--connect", action="append", default=[])
    p.add_argument("--prefix", required=True)
    p.add_argument("--encoding", required=True, choices=sorted(ENCODERS))
    p.add_argument("--states", type=int, default=200, help="state slots")
    p.add_argument("--hz", type=float, default=200.0)
    p.add_argument("--frame-every", type=int, default=8)
    p.add_argument("--lag-ms", type=float, default=2.0)
    p.add_argument("--skip-at", type=int, default=50)
    p.add_argument("--skip", type=int, default=3)
    p.add_argument("--restart-at", type=int, default=150)
    p.add_argument("--restart-gap", type=float, default=0.3)
    p.add_argument("--raw", action="store_true")
    p.add_argument("--wait", type=float, default=1.0, help="seconds to wait after opening (the recorder's subscription)")
    p.add_argument("--log", required=True)
    a = p.parse_args()

    encode = ENCODERS[a.encoding]()
    source_info = a.encoding == "ros2"
    sess = zenoh.open(zenoh_config(connect=a.connect))
    keys = {k: f"{a.prefix}/{k}" for k in ("pose", "cam", "raw")}

    def publishers():
        return {k: sess.declare_publisher(key) for k, key in keys.items()}

    pubs = publishers()
    time.sleep(a.wait)
    log = open(a.log, "w")
    period = int(1e9 / a.hz)
    t0 = time.time_ns() + 50_000_000
    shift, seq, frame_seq, restarted = 0, 0, 0, False
    for i in range(a.states):
        if i == a.restart_at:  # the publisher restarts: new entities, counters from 0, a silence
            for pub in pubs.values():
                pub.undeclare()
            time.sleep(a.restart_gap)
            pubs = publishers()
            shift += int(a.restart_gap * 1e9)
            seq, frame_seq, restarted = 0, 0, True
        t = t0 + i * period + shift
        wait = (t - time.time_ns()) / 1e9
        if wait > 0:
            time.sleep(wait)
        skipped = not restarted and a.skip_at <= seq < a.skip_at + a.skip
        if not skipped:
            x = i * 0.01
            sent = [("pose", seq, t)]
            if i % a.frame_every == 0:
                sent.append(("cam", frame_seq, t + int(a.lag_ms * 1e6)))
            for k, s, ts in sent:
                kw = {}
                if source_info:
                    kw["source_info"] = zenoh.SourceInfo(pubs[k].id, s)
                    kw["attachment"] = rmw_attachment(s, time.time_ns())
                pubs[k].put(encode(s, ts, x, -x), **kw)
                log.write(json.dumps({"key": keys[k], "seq": s, "t_ns": ts, "x": x, "source_sn": s if source_info else None}) + "\n")
            if a.raw:
                pubs["raw"].put(struct.pack("<Q", seq), timestamp=sess.new_timestamp(), source_info=zenoh.SourceInfo(pubs["raw"].id, seq))
                log.write(json.dumps({"key": keys["raw"], "seq": seq, "t_ns": None, "x": None, "source_sn": seq}) + "\n")
        if i % a.frame_every == 0 and not skipped:
            frame_seq += 1
        seq += 1
    log.close()
    time.sleep(0.3)
    sess.close()


if __name__ == "__main__":
    main()
