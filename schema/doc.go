// Package schema lets vrlog read the stamps and counters of messages it did
// not define. A declaration (Decl) names a channel pattern, how its payload
// is encoded (protobuf, JSON, ROS 2 CDR or a fixed C struct) and where the
// capture stamp and the sequence number live in it; the recorder stores the
// declaration in the channel's meta (Decl.Meta, docs/schemas.md), so every
// reader of the log compiles the same Codec from the channel alone
// (Lookup) and needs nothing else.
//
// A Codec implements codec.Codec: Stamp reads only the declared fields
// (the recorder's record-time decode), Decode returns the whole message as
// JSON, Restamp shifts the stamp in place where the encoding allows it
// (codec.Resizer where it does not). A payload that does not parse under
// its declaration is an error (a *codec.DecodeError with the byte offset),
// never a stamp.
//
// Timing (TimingOf) says, for any channel, where analyze takes its capture
// stamp and its counter from: the payload, zenoh's timestamp and source
// info, or only the receive stamp.
//
// schema is pure Go (no cgo): analyze and its static build use it.
package schema
