package mcapexport

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/schema"
)

// CSVOptions configures a CSV table.
type CSVOptions struct {
	// TimeFormat formats the "t" (capture) and "recv_wall" columns; the
	// *_ns columns are always integer nanoseconds.
	TimeFormat codec.TimeFormat
	// EpochNs is the epoch of TimeElapsed.
	EpochNs int64
	// ChannelColumn adds a leading "channel" column (one table holding
	// several channels).
	ChannelColumn bool
	// StateColumns appends the decoded vrsdk.State/1 fields (StateColumns)
	// with Sensors sensor slots; rows of a state channel must then carry
	// their payload (see Records).
	StateColumns bool
	Sensors      int
	// Fields appends the decoded fields of channels with a declared
	// schema (schema.Flatten's paths, DeclaredFields) as columns named
	// FieldPrefix+path, after the others; a row whose message lacks one
	// (another channel's row, an undecodable payload) leaves it empty.
	// Rows of such channels must carry their payload (see Records).
	Fields []string
}

// CSVColumns are the timing table's columns, in order (after "channel"
// when CSVOptions.ChannelColumn is set). Every integer column is filled in
// every row, so that pandas reads it as int64 and nanoseconds stay exact
// (t, a time, is empty without a stamp: NaN in pandas):
//
//	index         record number within its channel, from 0
//	has_stamp     1 when the record carries a capture stamp (seq, t_ns), else 0
//	seq           simulator seq (0 without a stamp)
//	t             capture t_ns in the chosen time format (empty without a stamp)
//	t_ns          capture t_ns, unix ns (0 without a stamp)
//	recv_wall     receive wall stamp in the chosen time format
//	recv_wall_ns  receive wall stamp, unix ns
//	recv_mono_ns  receive monotonic stamp, ns
//	dt_ns         t_ns minus the previous stamped record's t_ns on the channel (0 for the first)
//	recv_dt_ns    recv_mono_ns minus the previous record's (0 for the first)
//	latency_ns    recv_wall_ns minus t_ns (capture-to-receive, across clocks; 0 without a stamp)
//	skipped       seq - (previous seq + 1) when positive, else 0
//	restart       1 when seq went back (a publisher restart), else 0
//	header_bytes  transport header size (iceoryx2 user header)
//	payload_bytes payload size
var CSVColumns = []string{"index", "has_stamp", "seq", "t", "t_ns", "recv_wall", "recv_wall_ns", "recv_mono_ns",
	"dt_ns", "recv_dt_ns", "latency_ns", "skipped", "restart", "header_bytes", "payload_bytes"}

// StateColumns are the decoded vrsdk.State/1 columns that follow
// CSVColumns when CSVOptions.StateColumns is set, then sensor_count and, per
// sensor slot i, sensors.i.id and sensors.i.t_ns. decoded is 1 when the row
// is a state that decoded; otherwise the float columns are empty (NaN in
// pandas) and the integer ones 0. Slots past a state's sensor_count are 0.
var StateColumns = []string{"decoded", "estimate_t_ns",
	"position.x", "position.y", "position.z",
	"orientation.x", "orientation.y", "orientation.z", "orientation.w",
	"linear_velocity.x", "linear_velocity.y", "linear_velocity.z",
	"angular_velocity.x", "angular_velocity.y", "angular_velocity.z"}

// FieldPrefix begins the column of every decoded field of a declared
// schema (CSVOptions.Fields), whatever its encoding: a message's own seq
// or t_ns (a C struct's, docs/schemas.md) is msg.seq, msg.t_ns, never a
// second column of a name CSVColumns or StateColumns hold.
const FieldPrefix = "msg."

type csvChan struct {
	n        uint64
	prevMono int64
	prevCap  int64
	prevSeq  uint64
	hasCap   bool
}

// CSVWriter writes a timing table, plus decoded states when asked.
type CSVWriter struct {
	w      *csv.Writer
	opts   CSVOptions
	chans  map[uint16]*csvChan
	row    []string
	state  codec.State
	field  map[string]int // Fields' columns by path
	cells  []string       // one row's decoded fields
	json   []byte
	decode map[uint16]*schema.Codec
}

// NewCSV writes the header row to out and returns the table writer.
func NewCSV(out io.Writer, opts CSVOptions) (*CSVWriter, error) {
	c := &CSVWriter{w: csv.NewWriter(out), opts: opts, chans: map[uint16]*csvChan{}}
	var hdr []string
	if opts.ChannelColumn {
		hdr = append(hdr, "channel")
	}
	hdr = append(hdr, CSVColumns...)
	if opts.StateColumns {
		hdr = append(hdr, StateColumns...)
		hdr = append(hdr, "sensor_count")
		for i := range opts.Sensors {
			p := "sensors." + strconv.Itoa(i) + "."
			hdr = append(hdr, p+"id", p+"t_ns")
		}
	}
	c.field, c.decode = map[string]int{}, map[uint16]*schema.Codec{}
	for i, f := range opts.Fields {
		c.field[f] = i
	}
	for _, f := range opts.Fields {
		hdr = append(hdr, FieldPrefix+f)
	}
	c.cells = make([]string, len(opts.Fields))
	if err := c.w.Write(hdr); err != nil {
		return nil, fmt.Errorf("mcapexport: csv: %w", err)
	}
	return c, nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Write appends the row of record r of channel ch.
func (c *CSVWriter) Write(ch *logfmt.Channel, r *logfmt.Record) error {
	st := c.chans[r.Channel]
	if st == nil {
		st = &csvChan{}
		c.chans[r.Channel] = st
	}
	row := c.row[:0]
	if c.opts.ChannelColumn {
		row = append(row, ch.Name)
	}
	var capture int64
	var seq uint64
	if r.HasStamp {
		capture, seq = r.CaptureNs, r.Seq
	}
	t := "" // no capture time: empty (NaN in pandas), not t_ns 0 formatted
	if r.HasStamp {
		t = c.opts.TimeFormat.Format(capture, c.opts.EpochNs)
	}
	row = append(row, strconv.FormatUint(st.n, 10), bit(r.HasStamp), strconv.FormatUint(seq, 10), t, itoa(capture),
		c.opts.TimeFormat.Format(r.RecvWallNs, c.opts.EpochNs), itoa(r.RecvWallNs), itoa(r.RecvMonoNs))
	var dt, rdt, lat int64
	var skipped uint64
	restart := false
	if st.n > 0 {
		rdt = r.RecvMonoNs - st.prevMono
	}
	if r.HasStamp {
		lat = r.RecvWallNs - r.CaptureNs
		if st.hasCap {
			dt = r.CaptureNs - st.prevCap
			var step codec.SeqStep
			step, skipped = codec.Step(st.prevSeq, r.Seq)
			restart = step == codec.SeqBack
		}
		st.hasCap, st.prevCap, st.prevSeq = true, r.CaptureNs, r.Seq
	}
	row = append(row, itoa(dt), itoa(rdt), itoa(lat), strconv.FormatUint(skipped, 10), bit(restart),
		strconv.Itoa(headerLen(r)), strconv.Itoa(payloadLen(r)))
	if c.opts.StateColumns {
		var err error
		if row, err = c.appendState(row, ch, r); err != nil {
			return err
		}
	}
	if len(c.opts.Fields) > 0 {
		var err error
		if row, err = c.appendFields(row, ch, r); err != nil {
			return err
		}
	}
	st.n++
	st.prevMono = r.RecvMonoNs
	c.row = row
	if err := c.w.Write(row); err != nil {
		return fmt.Errorf("mcapexport: csv: %w", err)
	}
	return nil
}

// appendState appends the state columns: the decoded state for a state
// record, the empty/zero fill for others.
func (c *CSVWriter) appendState(row []string, ch *logfmt.Channel, r *logfmt.Record) ([]string, error) {
	s := &c.state
	ok := false
	if ch.Schema == codec.SchemaState {
		if r.Payload == nil && r.PayloadLen > 0 {
			return row, fmt.Errorf("mcapexport: csv: %s: state payload not read (iterate with Records)", ch.Name)
		}
		ok = codec.DecodeStateInto(s, r.Payload, 0) == nil
	}
	if !ok {
		row = append(row, "0", "0")
		for range len(StateColumns) - 2 {
			row = append(row, "")
		}
		row = append(row, "0")
		for range c.opts.Sensors {
			row = append(row, "0", "0")
		}
		return row, nil
	}
	if len(s.Sensors) > c.opts.Sensors {
		return row, fmt.Errorf("mcapexport: csv: %s: a state with %d sensors in a table with %d sensor slots", ch.Name, len(s.Sensors), c.opts.Sensors)
	}
	row = append(row, "1", itoa(s.EstimateTNs))
	for _, f := range [...]float64{s.Position.X, s.Position.Y, s.Position.Z,
		s.Orientation.X, s.Orientation.Y, s.Orientation.Z, s.Orientation.W,
		s.LinearVelocity.X, s.LinearVelocity.Y, s.LinearVelocity.Z,
		s.AngularVelocity.X, s.AngularVelocity.Y, s.AngularVelocity.Z} {
		row = append(row, csvFloat(f))
	}
	row = append(row, strconv.Itoa(len(s.Sensors)))
	for i := range c.opts.Sensors {
		if i < len(s.Sensors) {
			row = append(row, strconv.FormatUint(uint64(s.Sensors[i].ID), 10), itoa(s.Sensors[i].TNs))
		} else {
			row = append(row, "0", "0")
		}
	}
	return row, nil
}

// csvFloat prints the shortest decimal that parses back to f exactly;
// NaN and infinities as pandas spells them.
func csvFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Flush writes buffered rows and returns the first write error.
func (c *CSVWriter) Flush() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("mcapexport: csv: %w", err)
	}
	return nil
}

func headerLen(r *logfmt.Record) int {
	return max(len(r.Header), r.HeaderLen)
}

func payloadLen(r *logfmt.Record) int {
	return max(len(r.Payload), r.PayloadLen)
}

// appendFields appends the decoded fields of a record of a channel with a
// declared schema, empty cells for any other.
func (c *CSVWriter) appendFields(row []string, ch *logfmt.Channel, r *logfmt.Record) ([]string, error) {
	clear(c.cells)
	cd, seen := c.decode[ch.ID]
	if !seen {
		if x, ok := schema.Lookup(ch); ok {
			cd, _ = x.(*schema.Codec)
		}
		c.decode[ch.ID] = cd
	}
	if cd != nil {
		if r.Payload == nil && r.PayloadLen > 0 {
			return row, fmt.Errorf("mcapexport: csv: %s: payload not read (iterate with Records)", ch.Name)
		}
		var err error
		if c.json, err = cd.AppendJSON(c.json[:0], r.Header, r.Payload); err == nil {
			schema.Flatten(c.json, func(path, v string) {
				if i, ok := c.field[path]; ok {
					c.cells[i] = v
				}
			})
		}
	}
	return append(row, c.cells...), nil
}

// DeclaredFields lists the decoded fields of a channel with a declared
// schema (the CSV columns of CSVOptions.Fields), from its first record
// that decodes; nil for any other channel.
func DeclaredFields(r *logfmt.Reader, ch *logfmt.Channel) ([]string, error) {
	cd, ok := schema.Lookup(ch)
	sc, declared := cd.(*schema.Codec)
	if !ok || !declared {
		return nil, nil
	}
	it := r.Records(logfmt.Filter{Channels: []uint16{ch.ID}})
	defer it.Close()
	for it.Next() {
		rec := it.Record()
		b, err := sc.AppendJSON(nil, rec.Header, rec.Payload)
		if err != nil {
			continue
		}
		var fields []string
		err = schema.Flatten(b, func(path, _ string) { fields = append(fields, path) })
		return fields, err
	}
	return nil, it.Err()
}
