package foxglove

import (
	"fmt"
	"strconv"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/schema"
)

// Companion channels' topics: "<topic>" + the suffix; their channel
// metadata has "vrlog.part" set to the part's name.
const (
	PoseSuffix        = ":pose"
	UndecodableSuffix = ":undecodable"
	PartPose          = "pose"
	PartUndecodable   = "undecodable"
)

// ChannelMeta is the Foxglove channel metadata of a vrlog channel: its
// id, transport, transport topic (zenoh key expression or iceoryx2
// service), vrlog schema and transport meta, each key prefixed "vrlog."
// (a declared schema's data left out: the channel's schema holds it).
func ChannelMeta(c *logfmt.Channel) map[string]string {
	md := map[string]string{
		"vrlog.channel_id": strconv.Itoa(int(c.ID)),
		"vrlog.transport":  c.Transport.String(),
		"vrlog.topic":      c.Topic,
		"vrlog.schema":     c.Schema,
	}
	for k, v := range c.Meta {
		if k == schema.MetaData {
			continue
		}
		md["vrlog.meta."+k] = v
	}
	return md
}

// PartMeta is ChannelMeta of c for its companion channel part (PartPose,
// PartUndecodable).
func PartMeta(c *logfmt.Channel, part string) map[string]string {
	md := ChannelMeta(c)
	md["vrlog.part"] = part
	return md
}

// Encoder turns the records of one vrlog channel into Foxglove messages.
// It keeps the last state it decoded (for its pose); one Encoder per
// channel, used by one goroutine.
type Encoder struct {
	schema  string // the channel's vrlog schema
	sch     Schema
	kind    Kind
	codec   codec.Codec   // KindJSON
	decl    *schema.Codec // KindNative, KindDeclared
	stamped bool          // KindDeclared: its messages get a "timestamp" (stampedSchema)
	epochNs int64
	state   codec.State // states: the last decoded, reused
	scratch []byte      // a declared message before its timestamp goes in
}

// NewEncoder returns the encoder of channel c: its declared schema's
// (docs/schemas.md) if it has one that compiles, else its vrlog schema's;
// epochNs is the epoch of decoded messages' "elapsed" field (0 makes
// elapsed the unix time in seconds).
func NewEncoder(c *logfmt.Channel, epochNs int64) *Encoder {
	e := &Encoder{schema: c.Schema, epochNs: epochNs}
	e.sch, e.kind = builtinSchema(c.Schema)
	if cd, ok := schema.Lookup(c); ok {
		if sc, declared := cd.(*schema.Codec); declared {
			e.decl = sc
			e.sch, e.kind = declaredSchema(sc, c.Name)
			if e.kind == KindDeclared {
				e.sch.Data, e.stamped = stampedSchema(e.sch.Data)
			}
		}
	}
	if e.kind == KindJSON {
		e.codec, _ = codec.Lookup(c.Schema)
	}
	return e
}

// Schema is the schema of the channel's messages.
func (e *Encoder) Schema() Schema { return e.sch }

// Kind says how the channel's records become messages.
func (e *Encoder) Kind() Kind { return e.kind }

// HasPose tells whether the channel's records have a pose (states).
func (e *Encoder) HasPose() bool { return e.kind == KindJSON && e.schema == codec.SchemaState }

// Encode appends the message of r to dst and returns it as head then tail:
// a frame as protobuf (head: its fields; tail: its pixels, r.Payload's
// bytes, not copied), a declared protobuf or ROS 2 CDR message as it is
// (tail only: r.Payload once checked), the rest as JSON (head only). err
// is a record of a known schema that does not decode (AppendUndecodable
// keeps it).
func (e *Encoder) Encode(dst []byte, r *logfmt.Record) (head, tail []byte, err error) {
	switch e.kind {
	case KindNative:
		if err := e.decl.Check(r.Header, r.Payload); err != nil {
			return nil, nil, err
		}
		return dst, r.Payload, nil
	case KindDeclared:
		if !e.stamped || !r.HasStamp {
			b, err := e.decl.AppendJSON(dst, r.Header, r.Payload)
			return b, nil, err
		}
		msg, err := e.decl.AppendJSON(e.scratch[:0], r.Header, r.Payload)
		if err != nil {
			return nil, nil, err
		}
		e.scratch = msg
		return appendStamped(dst, msg, r.CaptureNs), nil, nil
	case KindOpaque:
		return appendOpaqueJSON(dst, e.schema, r.Header, r.Payload), nil, nil
	case KindHeartbeat:
		return appendHeartbeatJSON(dst, r.RecvWallNs), nil, nil
	case KindRawImage:
		f, err := codec.DecodeFrame(r.Header, r.Payload, e.epochNs)
		if err != nil {
			return nil, nil, err
		}
		return AppendRawImageProtoHead(dst, &f), f.Pixels, nil
	}
	if e.schema == codec.SchemaState {
		if err := codec.DecodeStateInto(&e.state, r.Payload, e.epochNs); err != nil {
			return nil, nil, err
		}
		return AppendStateJSON(dst, &e.state), nil, nil
	}
	v, err := e.codec.Decode(r.Header, r.Payload, e.epochNs)
	if err != nil {
		return nil, nil, err
	}
	switch x := v.(type) {
	case codec.TimeReply:
		return appendTimeReplyJSON(dst, &x), nil, nil
	case codec.ClockProbe:
		return appendClockProbeJSON(dst, &x), nil, nil
	case codec.ReplayClock:
		return appendReplayClockJSON(dst, &x), nil, nil
	case codec.Pause:
		return appendPauseJSON(dst, &x), nil, nil
	}
	return nil, nil, fmt.Errorf("foxglove: no JSON mapping for %T", v)
}

// AppendPose appends the foxglove.PoseInFrame message of the state the
// last successful Encode decoded (HasPose channels only).
func (e *Encoder) AppendPose(dst []byte) []byte { return AppendPoseInFrameProto(dst, &e.state) }

// AppendUndecodable appends the vrlog.Undecodable message of r, which
// Encode refused with err: the error and r's bytes in base64.
func (e *Encoder) AppendUndecodable(dst []byte, r *logfmt.Record, err error) []byte {
	return appendUndecodableJSON(dst, e.schema, err, r.Header, r.Payload)
}
