"""Write the FileDescriptorSets of foxglove.RawImage and foxglove.PoseInFrame
that package foxglove embeds (see README.md beside this file).

    gen.py OUTDIR
"""
import hashlib
import pathlib
import sys

from foxglove_schemas_protobuf.PoseInFrame_pb2 import PoseInFrame
from foxglove_schemas_protobuf.RawImage_pb2 import RawImage
from mcap_protobuf.schema import build_file_descriptor_set

out = pathlib.Path(sys.argv[1])
for msg, name in ((RawImage, "RawImage.fds"), (PoseInFrame, "PoseInFrame.fds")):
    data = build_file_descriptor_set(msg).SerializeToString(deterministic=True)
    (out / name).write_bytes(data)
    print(name, len(data), hashlib.sha256(data).hexdigest())
