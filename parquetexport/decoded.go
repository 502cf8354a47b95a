package parquetexport

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// Decoded gives the decoded columns of one message schema: the one place
// a schema's fields become named, typed columns. The built-in schemas'
// are registered here by name (Register adds one); DecodedFor, which the
// writer asks per channel, is where a channel's own declared schema
// (schema.Lookup, issue 42: today exported without decoded columns) gets
// its columns.
type Decoded interface {
	// Fields are the decoded columns, after the record columns
	// (RecordColumns); each must be nullable (a record that does not
	// decode leaves them null).
	Fields() []arrow.Field
	// Append decodes r (its header and payload) into bs, one builder per
	// field in order, and reports whether it decoded; when it did not,
	// it appends nothing (the caller appends the nulls).
	Append(bs []array.Builder, r *logfmt.Record) bool
	// Payload says whether decoding reads the record's header or payload
	// (the record is then read in full, not from its metadata alone).
	Payload() bool
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Decoded{
		codec.SchemaState:      stateColumns{},
		codec.SchemaFrame:      frameColumns{},
		codec.SchemaClockProbe: clockProbeColumns{},
		codec.SchemaTimeReply:  timeReplyColumns{},
	}
)

// Register makes d the decoded columns of schema, replacing any before.
func Register(schema string, d Decoded) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[schema] = d
}

// DecodedFor returns the decoded columns of ch's schema; ok is false for
// a schema without any (its records get the record columns only).
func DecodedFor(ch *logfmt.Channel) (d Decoded, ok bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok = registry[ch.Schema]
	return d, ok
}

func nullable(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

var (
	i64 = arrow.PrimitiveTypes.Int64
	u32 = arrow.PrimitiveTypes.Uint32
	u64 = arrow.PrimitiveTypes.Uint64
	f64 = arrow.PrimitiveTypes.Float64
)

// stateColumns: vrsdk.State/1, each field of codec.State a column (the
// vectors flattened: position_x...), the sensors a list of {id, t_ns}.
// seq, t_ns and elapsed are the record columns.
type stateColumns struct{}

var sensorType = arrow.StructOf(arrow.Field{Name: "id", Type: u32}, arrow.Field{Name: "t_ns", Type: i64})

var stateFields = func() []arrow.Field {
	fs := []arrow.Field{nullable("estimate_t_ns", i64)}
	for _, n := range []string{"position_x", "position_y", "position_z", "orientation_x", "orientation_y", "orientation_z", "orientation_w",
		"linear_velocity_x", "linear_velocity_y", "linear_velocity_z", "angular_velocity_x", "angular_velocity_y", "angular_velocity_z"} {
		fs = append(fs, nullable(n, f64))
	}
	return append(fs, nullable("sensors", arrow.ListOf(sensorType)))
}()

func (stateColumns) Fields() []arrow.Field { return stateFields }
func (stateColumns) Payload() bool         { return true }

func (stateColumns) Append(bs []array.Builder, r *logfmt.Record) bool {
	var s codec.State
	var sensors [8]codec.Sensor
	s.Sensors = sensors[:0]
	if codec.DecodeStateInto(&s, r.Payload, 0) != nil {
		return false
	}
	bs[0].(*array.Int64Builder).Append(s.EstimateTNs)
	for i, v := range [...]float64{s.Position.X, s.Position.Y, s.Position.Z,
		s.Orientation.X, s.Orientation.Y, s.Orientation.Z, s.Orientation.W,
		s.LinearVelocity.X, s.LinearVelocity.Y, s.LinearVelocity.Z,
		s.AngularVelocity.X, s.AngularVelocity.Y, s.AngularVelocity.Z} {
		bs[1+i].(*array.Float64Builder).Append(v)
	}
	lb := bs[14].(*array.ListBuilder)
	lb.Append(true)
	sb := lb.ValueBuilder().(*array.StructBuilder)
	ids, ts := sb.FieldBuilder(0).(*array.Uint32Builder), sb.FieldBuilder(1).(*array.Int64Builder)
	for _, x := range s.Sensors {
		sb.Append(true)
		ids.Append(x.ID)
		ts.Append(x.TNs)
	}
	return true
}

// frameColumns: vrsdk.Frame/1's header (the pixels are the payload
// column, with Options.Payloads).
type frameColumns struct{}

var frameFields = []arrow.Field{nullable("camera_id", u32), nullable("width", u32), nullable("height", u32), nullable("stride", u32),
	nullable("encoding", arrow.BinaryTypes.String), nullable("data_size", u64)}

func (frameColumns) Fields() []arrow.Field { return frameFields }
func (frameColumns) Payload() bool         { return true }

func (frameColumns) Append(bs []array.Builder, r *logfmt.Record) bool {
	h, err := codec.DecodeFrameHeader(r.Header, 0)
	if err != nil {
		return false
	}
	for i, v := range [...]uint32{h.CameraID, h.Width, h.Height, h.Stride} {
		bs[i].(*array.Uint32Builder).Append(v)
	}
	bs[4].(*array.StringBuilder).Append(h.Encoding.String())
	bs[5].(*array.Uint64Builder).Append(h.DataSize)
	return true
}

// clockProbeColumns: vrlog.ClockProbe/1, the four stamps of a clock-sync
// exchange.
type clockProbeColumns struct{}

var clockProbeFields = []arrow.Field{nullable("t1_ns", i64), nullable("t2_ns", i64), nullable("t3_ns", i64), nullable("t4_ns", i64)}

func (clockProbeColumns) Fields() []arrow.Field { return clockProbeFields }
func (clockProbeColumns) Payload() bool         { return true }

func (clockProbeColumns) Append(bs []array.Builder, r *logfmt.Record) bool {
	p, err := codec.DecodeClockProbe(r.Payload)
	if err != nil {
		return false
	}
	for i, v := range [...]int64{p.T1Ns, p.T2Ns, p.T3Ns, p.T4Ns} {
		bs[i].(*array.Int64Builder).Append(v)
	}
	return true
}

// timeReplyColumns: vrsdk.TimeReply/1.
type timeReplyColumns struct{}

var timeReplyFields = []arrow.Field{nullable("t2_ns", i64), nullable("t3_ns", i64)}

func (timeReplyColumns) Fields() []arrow.Field { return timeReplyFields }
func (timeReplyColumns) Payload() bool         { return true }

func (timeReplyColumns) Append(bs []array.Builder, r *logfmt.Record) bool {
	p, err := codec.DecodeTimeReply(r.Payload)
	if err != nil {
		return false
	}
	bs[0].(*array.Int64Builder).Append(p.T2Ns)
	bs[1].(*array.Int64Builder).Append(p.T3Ns)
	return true
}
