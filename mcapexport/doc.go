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
//   - Camera frames (vrsdk.Frame/1) are protobuf foxglove.RawImage
//     messages (schema encoding "protobuf": Foxglove's FileDescriptorSet,
//     embedded from foxglove/), written by hand from the log's bytes;
//     Foxglove's Image panel shows them. Pixels that stay valid until
//     Close (MCAPOptions.Stable: a mapped log's raw blocks) are not copied
//     at all into an uncompressed chunk: it is written with one vectored
//     write from the log's pages; other bytes are copied once, into the
//     chunk's buffer or its compressor.
//   - The other known schemas are decoded (codec.Lookup) and written as
//     JSON messages (message_encoding "json") with a JSON Schema (schema
//     encoding "jsonschema"): vrsdk.State/1, vrsdk.TimeReply/1,
//     vrlog.ClockProbe/1, vrlog.ReplayClock/1, vrlog.Heartbeat/1 under their
//     vrlog names. Each state channel also gets "<topic>:pose", the state's
//     position and orientation as protobuf foxglove.PoseInFrame in frame
//     "world", for Foxglove's 3D panel (MCAPOptions.NoPoses leaves it out).
//   - log_time is the recorder's receive wall stamp, publish_time the
//     simulator's capture t_ns (the receive stamp when a record has none),
//     sequence the low 32 bits of seq (MCAP's sequence is a uint32; the full
//     seq is in a state's JSON message).
//   - Channels with an unknown schema are exported as vrlog.Opaque JSON
//     messages: the schema name, the transport header (iceoryx2 user
//     header) and the payload in base64. No channel has an empty encoding
//     or lacks a schema (viewers flag such a channel as unsupported).
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
// The package is pure Go (CGO_ENABLED=0). It writes MCAP itself
// (writer.go: records, chunks with their message indexes, chunk indexes,
// statistics, summary, every CRC as the reference Go writer writes them)
// and reads it back with the reference reader,
// github.com/foxglove/mcap/go/mcap (Check).
package mcapexport
