package codec

import "errors"

// ErrNoStamp: the schema carries no per-sample seq / t_ns (clock probes).
var ErrNoStamp = errors.New("codec: schema has no sample stamp")

// Codec is what the tools need of a schema. header is the transport's
// side buffer (the iceoryx2 user header), payload the sample bytes; a schema
// that uses only one of them ignores the other.
type Codec interface {
	// Schema is the name stored in a log's channel table, e.g. "vrsdk.State/1".
	Schema() string
	// Stamp returns the sample's seq and capture t_ns after validating it,
	// without decoding the rest (record time, the analyzer's metadata path).
	Stamp(header, payload []byte) (seq uint64, tNs int64, err error)
	// Decode returns the decoded sample (State, Frame, ClockProbe,
	// TimeReply), Elapsed derived from epochNs.
	Decode(header, payload []byte, epochNs int64) (any, error)
	// Restamp adds delta to every time stamp in place, leaving seq alone
	// (replay --restamp). Validates first; on error nothing is changed.
	Restamp(header, payload []byte, delta int64) error
}

// Lookup returns the codec for a schema name; ok is false for a schema vrlog
// does not know, whose channel is then carried raw.
func Lookup(schema string) (c Codec, ok bool) {
	c, ok = builtin[schema]
	return c, ok
}

// Schemas lists the schema names Lookup knows.
func Schemas() []string {
	return []string{SchemaState, SchemaFrame, SchemaTimeReply, SchemaClockProbe, SchemaReplayClock, SchemaPause}
}

var builtin = map[string]Codec{
	SchemaState:       stateCodec{},
	SchemaFrame:       frameCodec{},
	SchemaTimeReply:   timeReplyCodec{},
	SchemaClockProbe:  clockProbeCodec{},
	SchemaReplayClock: replayClockCodec{},
	SchemaPause:       pauseCodec{},
}

type stateCodec struct{}

func (stateCodec) Schema() string                               { return SchemaState }
func (stateCodec) Stamp(_, p []byte) (uint64, int64, error)     { return StateStamp(p) }
func (stateCodec) Decode(_, p []byte, epoch int64) (any, error) { return DecodeState(p, epoch) }
func (stateCodec) Restamp(_, p []byte, delta int64) error       { return ShiftState(p, delta) }

type frameCodec struct{}

func (frameCodec) Schema() string                               { return SchemaFrame }
func (frameCodec) Stamp(h, _ []byte) (uint64, int64, error)     { return FrameStamp(h) }
func (frameCodec) Decode(h, p []byte, epoch int64) (any, error) { return DecodeFrame(h, p, epoch) }
func (frameCodec) Restamp(h, _ []byte, delta int64) error       { return ShiftFrameHeader(h, delta) }

type timeReplyCodec struct{}

func (timeReplyCodec) Schema() string                           { return SchemaTimeReply }
func (timeReplyCodec) Stamp(_, _ []byte) (uint64, int64, error) { return 0, 0, ErrNoStamp }
func (timeReplyCodec) Decode(_, p []byte, _ int64) (any, error) { return DecodeTimeReply(p) }
func (timeReplyCodec) Restamp(_, p []byte, delta int64) error {
	if _, err := DecodeTimeReply(p); err != nil {
		return err
	}
	shift(p[8:], delta)
	shift(p[16:], delta)
	return nil
}

type clockProbeCodec struct{}

func (clockProbeCodec) Schema() string                           { return SchemaClockProbe }
func (clockProbeCodec) Stamp(_, _ []byte) (uint64, int64, error) { return 0, 0, ErrNoStamp }
func (clockProbeCodec) Decode(_, p []byte, _ int64) (any, error) { return DecodeClockProbe(p) }

// Restamp leaves a probe alone: its stamps describe two clocks' relation at
// recording time, which a replay does not change.
func (clockProbeCodec) Restamp(_, p []byte, _ int64) error {
	_, err := DecodeClockProbe(p)
	return err
}

type replayClockCodec struct{}

func (replayClockCodec) Schema() string                           { return SchemaReplayClock }
func (replayClockCodec) Stamp(_, _ []byte) (uint64, int64, error) { return 0, 0, ErrNoStamp }
func (replayClockCodec) Decode(_, p []byte, _ int64) (any, error) { return DecodeReplayClock(p) }

// Restamp shifts the log time (a recorded clock replayed with --restamp).
func (replayClockCodec) Restamp(_, p []byte, delta int64) error {
	if _, err := DecodeReplayClock(p); err != nil {
		return err
	}
	shift(p[8:], delta)
	return nil
}

type pauseCodec struct{}

func (pauseCodec) Schema() string                           { return SchemaPause }
func (pauseCodec) Stamp(_, _ []byte) (uint64, int64, error) { return 0, 0, ErrNoStamp }
func (pauseCodec) Decode(_, p []byte, _ int64) (any, error) { return DecodePause(p) }

// Restamp leaves a pause alone: its stamps are the recorder's clocks.
func (pauseCodec) Restamp(_, p []byte, _ int64) error {
	_, err := DecodePause(p)
	return err
}

// ErrResize: the restamped sample would not fit in its bytes (a protobuf
// varint or a JSON number that grows); Resizer.RestampResized gives it.
var ErrResize = errors.New("codec: restamped sample changes size")

// Resizer is a Codec whose restamped samples may change size: replay
// publishes what RestampResized returns (payload itself when it fits).
type Resizer interface {
	RestampResized(header, payload []byte, delta int64) ([]byte, error)
}

// FrameHeaderTypeName is the iceoryx2 user-header type name of vrsdk
// frames: a service that declares it carries SchemaFrame.
const FrameHeaderTypeName = "vrsdk::FrameHeader"

// DetectSchema names the schema of a channel from one of its records, as
// the recorder does for a new channel: a state if the payload decodes as
// one, a frame if the header does, else "" (raw bytes).
func DetectSchema(header, payload []byte) string {
	if _, _, err := StateStamp(payload); err == nil {
		return SchemaState
	}
	if _, _, err := FrameStamp(header); err == nil {
		return SchemaFrame
	}
	return ""
}
