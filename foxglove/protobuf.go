package foxglove

import (
	_ "embed"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/vrlog/vrlog/codec"
)

// Protobuf messages of Foxglove's schemas, encoded by hand: the wire format
// of these messages is a handful of tagged fields, and writing it directly
// keeps a frame's pixels to one copy (into the reused message buffer) with
// no reflection or intermediate message.
//
// The schemas are embedded as the binary FileDescriptorSet MCAP's
// "protobuf" schema encoding requires (the schema name is the fully
// qualified message name); descriptors/README.md says where the bytes come
// from and under which license.

const (
	// SchemaPoseInFrame is Foxglove's name for a timestamped pose in a
	// coordinate frame, which its 3D panel draws.
	SchemaPoseInFrame = "foxglove.PoseInFrame"
	// PoseFrameID is the coordinate frame of the poses derived from states:
	// a vrsdk.State/1 position and orientation are the robot's in the
	// simulator's fixed frame (docs/wire-format.md), which vrlog names
	// "world".
	PoseFrameID = "world"
)

var (
	//go:embed descriptors/RawImage.fds
	rawImageDescriptor []byte
	//go:embed descriptors/PoseInFrame.fds
	poseInFrameDescriptor []byte
)

// Wire types (protobuf encoding).
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireI32    = 5
)

func appendTag(dst []byte, field, wire int) []byte {
	return binary.AppendUvarint(dst, uint64(field)<<3|uint64(wire))
}

func appendFixed32Field(dst []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(appendTag(dst, field, wireI32), v)
}

func appendDoubleField(dst []byte, field int, v float64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(dst, field, wireI64), math.Float64bits(v))
}

// appendLenPrefix starts a length-delimited field of n bytes; the caller
// appends the n bytes.
func appendLenPrefix(dst []byte, field, n int) []byte {
	return binary.AppendUvarint(appendTag(dst, field, wireLen), uint64(n))
}

// appendTimestampField appends a google.protobuf.Timestamp (seconds = 1,
// nanos = 2) as field; a stamp before 1970 is clamped to 0, as in JSON.
func appendTimestampField(dst []byte, field int, ns int64) []byte {
	ns = max(ns, 0)
	sec, nsec := uint64(ns/1e9), uint64(ns%1e9)
	var body [2 + 2*binary.MaxVarintLen64]byte
	b := body[:0]
	if sec != 0 {
		b = binary.AppendUvarint(appendTag(b, 1, wireVarint), sec)
	}
	if nsec != 0 {
		b = binary.AppendUvarint(appendTag(b, 2, wireVarint), nsec)
	}
	return append(appendLenPrefix(dst, field, len(b)), b...)
}

// cameraFrameID is a frame's frame_id, "camera_<camera_id>".
func appendCameraFrameID(dst []byte, id uint32) []byte {
	return strconv.AppendUint(append(dst, "camera_"...), uint64(id), 10)
}

// AppendRawImageProto appends f as a foxglove.RawImage protobuf message:
// timestamp = 1, width = 2, height = 3, encoding = 4, step = 5, data = 6,
// frame_id = 7 (the field numbers of Foxglove's RawImage.proto). The
// pixels are copied once, at the end.
func AppendRawImageProto(dst []byte, f *codec.Frame) []byte {
	return append(AppendRawImageProtoHead(dst, f), f.Pixels...)
}

// AppendRawImageProtoHead appends the message AppendRawImageProto does
// but for the pixels themselves: every field, then the data field's tag
// and length, so that the message is the result followed by f.Pixels.
func AppendRawImageProtoHead(dst []byte, f *codec.Frame) []byte {
	dst = appendTimestampField(dst, 1, f.TNs)
	dst = appendFixed32Field(dst, 2, f.Width)
	dst = appendFixed32Field(dst, 3, f.Height)
	enc := f.Encoding.String()
	dst = append(appendLenPrefix(dst, 4, len(enc)), enc...)
	dst = appendFixed32Field(dst, 5, f.Stride)
	var id [24]byte
	idb := appendCameraFrameID(id[:0], f.CameraID)
	dst = append(appendLenPrefix(dst, 7, len(idb)), idb...)
	return appendLenPrefix(dst, 6, len(f.Pixels))
}

// AppendPoseInFrameProto appends the pose of s as a foxglove.PoseInFrame
// message: timestamp = 1 (the state's t_ns), frame_id = 2 (PoseFrameID),
// pose = 3 {position = 1 {x, y, z}, orientation = 2 {x, y, z, w}}.
func AppendPoseInFrameProto(dst []byte, s *codec.State) []byte {
	dst = appendTimestampField(dst, 1, s.TNs)
	dst = append(appendLenPrefix(dst, 2, len(PoseFrameID)), PoseFrameID...)
	const vec3Len, quatLen = 3 * 9, 4 * 9 // tag byte + 8-byte double each
	const poseLen = 2 + vec3Len + 2 + quatLen
	dst = appendLenPrefix(dst, 3, poseLen)
	dst = appendLenPrefix(dst, 1, vec3Len)
	dst = appendDoubleField(dst, 1, s.Position.X)
	dst = appendDoubleField(dst, 2, s.Position.Y)
	dst = appendDoubleField(dst, 3, s.Position.Z)
	dst = appendLenPrefix(dst, 2, quatLen)
	dst = appendDoubleField(dst, 1, s.Orientation.X)
	dst = appendDoubleField(dst, 2, s.Orientation.Y)
	dst = appendDoubleField(dst, 3, s.Orientation.Z)
	return appendDoubleField(dst, 4, s.Orientation.W)
}
