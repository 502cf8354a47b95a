package foxglove

import (
	"fmt"
	"strconv"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
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
// service), vrlog schema and transport meta, each key prefixed "vrlog.".
func ChannelMeta(c *logfmt.Channel) map[string]string {
	md := map[string]string{
		"vrlog.channel_id": strconv.Itoa(int(c.ID)),
		"vrlog.transport":  c.Transport.String(),
		"vrlog.topic":      c.Topic,
		"vrlog.schema":     c.Schema,
	}
	for k, v := range c.Meta {
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
	kind    Kind
	codec   codec.Codec // KindJSON
	epochNs int64
	state   codec.State // states: the last decoded, reused
}

// NewEncoder returns the encoder of a channel whose vrlog schema is
// schema; epochNs is the epoch of decoded messages' "elapsed" field (0
// makes elapsed the unix time in seconds).
func NewEncoder(schema string, epochNs int64) *Encoder {
	_, kind := SchemaFor(schema)
	e := &Encoder{schema: schema, kind: kind, epochNs: epochNs}
	if kind == KindJSON {
		e.codec, _ = codec.Lookup(schema)
	}
	return e
}

// HasPose tells whether the channel's records have a pose (states).
func (e *Encoder) HasPose() bool { return e.schema == codec.SchemaState }

// Encode appends the message of r to dst and returns it as head then tail:
// a frame as protobuf (head: its fields; tail: its pixels, r.Payload's
// bytes, not copied), the rest as JSON (head only). err is a record of a
// known schema that does not decode (AppendUndecodable keeps it).
func (e *Encoder) Encode(dst []byte, r *logfmt.Record) (head, tail []byte, err error) {
	switch e.kind {
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
