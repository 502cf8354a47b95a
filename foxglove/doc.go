// Package foxglove says how vrlog records become the messages Foxglove
// reads: the schema of each channel kind and the encoding of each record.
// It is the one copy of that mapping; the MCAP export (mcapexport) writes
// its messages into a file, the viewer serves them over Foxglove's
// WebSocket protocol, and both show the same thing in Foxglove.
//
// The mapping (docs/log-tools.md has the table and the reasons):
//
//   - Camera frames (vrsdk.Frame/1) are protobuf foxglove.RawImage
//     messages (schema encoding "protobuf": Foxglove's FileDescriptorSet,
//     embedded from descriptors/), written by hand from the log's bytes:
//     the message is a small head (every field, then the data field's tag
//     and length) followed by the pixels themselves, so a caller can send
//     or write the pixels from where they are without a copy.
//   - The other known schemas are decoded (codec.Lookup) and written as
//     JSON messages (message encoding "json") with a JSON Schema (schema
//     encoding "jsonschema"): vrsdk.State/1, vrsdk.TimeReply/1,
//     vrlog.ClockProbe/1, vrlog.ReplayClock/1, vrlog.Heartbeat/1 under their
//     vrlog names.
//   - Each state channel may also get a companion "<topic>:pose" channel,
//     the state's position and orientation as protobuf foxglove.PoseInFrame
//     in frame "world", for Foxglove's 3D panel.
//   - Channels with a declared schema (package schema, docs/schemas.md)
//     go in their own encoding: protobuf with its FileDescriptorSet and
//     ROS 2 CDR with its ros2msg text carry the payload as it is (checked
//     against the schema first); JSON and C structs go as JSON messages
//     with the declaration's JSON Schema (or one derived from the layout).
//     The channel metadata leaves the schema's data out: the schema holds it.
//   - Channels with an unknown schema carry vrlog.Opaque JSON messages: the
//     schema name, the transport header (iceoryx2 user header) and the
//     payload in base64. No channel has an empty encoding or lacks a schema
//     (viewers flag such a channel as unsupported).
//   - A record of a known schema that does not decode (a garbage payload)
//     is not dropped: it goes to a companion channel "<topic>:undecodable"
//     as a vrlog.Undecodable JSON message carrying the decode error and the
//     raw bytes in base64.
//
// Times and numbers in JSON: integers are written exactly (int64 t_ns as
// digits; JavaScript readers lose precision past 2^53, so every decoded
// message also carries a foxglove-style "timestamp" {sec, nsec}); NaN and
// infinite floats become null (JSON has no literal for them), which the
// schemas allow.
//
// The package is pure Go (CGO_ENABLED=0) and imports only codec, logfmt
// and schema.
package foxglove
