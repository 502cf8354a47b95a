// Package foxws serves vrlog records to Foxglove over the Foxglove
// WebSocket protocol: both subprotocols, foxglove.sdk.v1 (the Foxglove
// SDK's servers, foxglove_bridge 3.x) and foxglove.websocket.v1 (the
// ws-protocol specification, older Foxglove and its forks), with the SDK's
// ranged playback for a log (docs/viewing.md).
//
// # Sources
//
// A source feeds the Server through Feed, a small interface: channels
// appear (AddChannel, a logfmt.Channel) and records arrive with a log time
// (Write, a logfmt.Record and absolute ns on the log's clock); Time moves
// the clock across stretches without records. The Server encodes each
// record once, with package foxglove (the encodings the MCAP export
// writes), and queues the same bytes for every subscribed client. A log
// player (a Playback as well: the clients seek, pause, play and change its
// speed), a live subscription to the transports and the recorder each
// feed one.
//
// # The two subprotocols
//
// foxglove.sdk.v1 is foxglove.websocket.v1 under a new name, plus the
// SDK's playback control. A client that offers both gets foxglove.sdk.v1.
// What a client gets differs only there:
//
//   - foxglove.sdk.v1 with a Playback: serverInfo advertises the
//     "playbackControl" capability (named "rangedPlayback" before the SDK
//     renamed it) and dataStartTime/dataEndTime; the client's binary
//     PlaybackControlRequest (opcode 3) is answered with a binary
//     PlaybackState (opcode 5) to every foxglove.sdk.v1 client, carrying
//     the request's id; the end of the data is told the same way, without
//     an id. A client connecting gets the state at once.
//   - foxglove.websocket.v1: none of that (the official ws-protocol client
//     reports opcode 5 as an error); opcode 3 is an unknown opcode there.
//     The client sees the data and the time messages as the playback goes.
//
// Both get serverInfo (capability "time"), advertise (the schema as text,
// base64 for protobuf's binary FileDescriptorSet; channel metadata
// "vrlog.*"), message data (opcode 1: subscription id, log time, the
// message), time (opcode 2, at most 60 per second of log time, before the
// record that moved the clock on) and status messages. A handshake that
// offers neither subprotocol is refused (HTTP 400, saying which to ask
// for), as the SDK refuses it.
//
// # Bad input
//
// Every client message goes through ParseText or ParseBinary (fuzzed):
// malformed JSON, a missing or unknown op, an operation of a capability
// not advertised, wrong types, numbers out of range, oversized lists and
// request ids, unknown opcodes each get an error status naming the
// problem, and the connection goes on. A subscribe to an unknown channel
// or with a subscription id in use is refused per entry. A message larger
// than Options.ReadLimit closes the connection (1009, message too big).
//
// # Slow clients and memory
//
// Each client has its own bounded queue (queue.go): Options.QueueBytes of
// data messages, frames dropped before states, every drop counted for that
// client and channel (Stats); nobody else waits. Control messages
// (advertisements, statuses, playback states) are never dropped: a client
// with Options.ControlMessages of them queued is closed with an error
// status, and so is a client whose connection took no message for
// Options.WriteTimeout (one that never reads). The server's memory is at
// most, beyond the channels' schemas:
//
//	MaxClients × (QueueBytes + the message being written + ReadLimit
//	              + ControlMessages × the largest control message)
//
// and the messages queued are shared: a frame sent to four clients is in
// memory once.
package foxws
