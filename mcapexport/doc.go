// Package mcapexport converts vrlog records into formats other tools open:
// MCAP (Foxglove Studio, the mcap CLI, PlotJuggler) and CSV tables (timing,
// and decoded states, lossless in pandas).
//
// MCAP mapping (docs/log-tools.md has the full table and the reasons):
//
//   - Each vrlog channel becomes one MCAP channel whose topic is the vrlog
//     channel name; its metadata carries the transport, the transport topic
//     (zenoh key expression or iceoryx2 service), the vrlog schema and the
//     channel's transport meta, each key prefixed "vrlog.".
//   - Known schemas are decoded (codec.Lookup) and written as JSON messages
//     (message_encoding "json") with a JSON Schema (schema encoding
//     "jsonschema"): vrsdk.State/1, vrsdk.TimeReply/1, vrlog.ClockProbe/1
//     under their vrlog names, vrsdk.Frame/1 as "foxglove.RawImage" so
//     Foxglove's Image and 3D panels show it.
//   - log_time is the recorder's receive wall stamp, publish_time the
//     simulator's capture t_ns (the receive stamp when a record has none),
//     sequence the low 32 bits of seq (MCAP's sequence is a uint32; the full
//     seq is in the JSON message).
//   - Channels with an unknown schema are exported as their payload bytes,
//     without schema and with an empty message_encoding (MCAP's "no
//     encoding"); a record's transport header (iceoryx2 user header), if it
//     has one, goes to a companion channel "<topic>:header" with the same
//     stamps.
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
// The package is pure Go (CGO_ENABLED=0) and uses the reference MCAP
// writer, github.com/foxglove/mcap/go/mcap.
package mcapexport
