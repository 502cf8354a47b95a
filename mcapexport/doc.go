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
//   - Each record becomes the message package foxglove encodes it as (the
//     one copy of the mapping, shared with the viewer): camera frames
//     (vrsdk.Frame/1) as protobuf foxglove.RawImage, with Foxglove's
//     FileDescriptorSet as the schema; the other known schemas decoded
//     into JSON messages with a JSON Schema; each state channel also gets
//     "<topic>:pose", protobuf foxglove.PoseInFrame in frame "world", for
//     Foxglove's 3D panel (MCAPOptions.NoPoses leaves it out); a declared
//     schema's channel in its own encoding (protobuf, ros2msg + cdr, or
//     JSON with a JSON Schema); unknown schemas as vrlog.Opaque JSON; a record that does not decode on
//     "<topic>:undecodable". Pixels that stay valid until Close
//     (MCAPOptions.Stable: a mapped log's raw blocks) are not copied at
//     all into an uncompressed chunk: it is written with one vectored
//     write from the log's pages; other bytes are copied once, into the
//     chunk's buffer or its compressor.
//   - log_time is the recorder's receive wall stamp, publish_time the
//     simulator's capture t_ns (the receive stamp when a record has none),
//     sequence the low 32 bits of seq (MCAP's sequence is a uint32; the full
//     seq is in a state's JSON message).
//
// The package is pure Go (CGO_ENABLED=0). It writes MCAP itself
// (writer.go: records, chunks with their message indexes, chunk indexes,
// statistics, summary, every CRC as the reference Go writer writes them)
// and reads it back with the reference reader,
// github.com/foxglove/mcap/go/mcap (Check).
package mcapexport
