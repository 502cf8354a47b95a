#!/usr/bin/env python3
"""Decode an MCAP that `vrlog export` wrote from channels with declared
schemas, with the MCAP project's own decoders (mcap-protobuf-support,
mcap-ros2-support; JSON by hand), and print one JSON line per message:
topic, the MCAP sequence and publish time, and the message decoded.

Usage: declared.py FILE.mcap [TOPIC_PREFIX]
"""

import json
import sys

from google.protobuf import json_format
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory as ProtobufDecoders
from mcap_ros2.decoder import DecoderFactory as ROS2Decoders


def plain(v):
    """A mcap_ros2 message (dynamic classes with __slots__) as dicts and lists."""
    if hasattr(v, "__slots__"):
        return {k: plain(getattr(v, k)) for k in v.__slots__}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return list(v)
    return v


def main():
    path, prefix = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[ProtobufDecoders(), ROS2Decoders()])
        for schema, channel, message in reader.iter_messages():
            if not channel.topic.startswith(prefix):
                continue
            enc = channel.message_encoding
            if enc == "json":
                decoded = json.loads(message.data)
            else:
                decoder = None
                for fac in (ProtobufDecoders(), ROS2Decoders()):
                    decoder = decoder or fac.decoder_for(enc, schema)
                obj = decoder(message.data)
                if enc == "protobuf":
                    decoded = json_format.MessageToDict(obj, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
                else:
                    decoded = plain(obj)
            print(json.dumps({"topic": channel.topic, "encoding": enc, "schema": schema.name if schema else "",
                              "schema_encoding": schema.encoding if schema else "", "sequence": message.sequence,
                              "publish_time": message.publish_time, "decoded": decoded}))


if __name__ == "__main__":
    main()
