package codec

import (
	"encoding/binary"
	"math"
	"strconv"
)

var le = binary.LittleEndian

// Schema names of the built-in codecs, as stored in a log's channel table.
const (
	SchemaState      = "vrsdk.State/1"
	SchemaFrame      = "vrsdk.Frame/1"
	SchemaTimeReply  = "vrsdk.TimeReply/1"
	SchemaClockProbe = "vrlog.ClockProbe/1"
	// SchemaHeartbeat: the recorder's empty marks of its own span
	// (recorder.HeartbeatChannel).
	SchemaHeartbeat = "vrlog.Heartbeat/1"
)

const (
	stateMagic = "VRST"
	// StateFixedSize is the size of a State without sensors.
	StateFixedSize = 136
	// StateSensorSize is the size of one sensor entry.
	StateSensorSize = 16
	// MaxSensors is the most sensors a State can carry (sensor_count is a u16).
	MaxSensors = math.MaxUint16
)

// Vec3 is a 3-vector of float64.
type Vec3 struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
}

// Quat is a unit quaternion.
type Quat struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
	W float64 `json:"w"`
}

// Sensor is one device's last-reading stamp.
type Sensor struct {
	ID  uint32 `json:"id"`
	TNs int64  `json:"t_ns"`
}

// State is one robot state snapshot: four clocks (TNs, each sensor's TNs,
// EstimateTNs) and one counter (Seq). Elapsed is derived at decode time from
// the epoch the caller passes; it is not on the wire.
type State struct {
	Seq             uint64   `json:"seq"`
	TNs             int64    `json:"t_ns"`
	Elapsed         float64  `json:"elapsed"`
	EstimateTNs     int64    `json:"estimate_t_ns"`
	Position        Vec3     `json:"position"`
	Orientation     Quat     `json:"orientation"`
	LinearVelocity  Vec3     `json:"linear_velocity"`
	AngularVelocity Vec3     `json:"angular_velocity"`
	Sensors         []Sensor `json:"sensors"`
}

// StateSize is the encoded size of s.
func StateSize(nSensors int) int { return StateFixedSize + StateSensorSize*nSensors }

// DecodeState decodes a State and derives Elapsed = (t_ns - epochNs) / 1e9.
// Pass epochNs 0 to get absolute unix seconds.
func DecodeState(b []byte, epochNs int64) (State, error) {
	var s State
	err := DecodeStateInto(&s, b, epochNs)
	return s, err
}

// DecodeStateInto decodes into s, reusing s.Sensors' capacity so a loop over
// many states does not allocate. On error s is unspecified.
func DecodeStateInto(s *State, b []byte, epochNs int64) error {
	n, err := checkState(b)
	if err != nil {
		return err
	}
	s.Seq = le.Uint64(b[8:])
	s.TNs = int64(le.Uint64(b[16:]))
	s.EstimateTNs = int64(le.Uint64(b[24:]))
	s.Position = Vec3{f64(b[32:]), f64(b[40:]), f64(b[48:])}
	s.Orientation = Quat{f64(b[56:]), f64(b[64:]), f64(b[72:]), f64(b[80:])}
	s.LinearVelocity = Vec3{f64(b[88:]), f64(b[96:]), f64(b[104:])}
	s.AngularVelocity = Vec3{f64(b[112:]), f64(b[120:]), f64(b[128:])}
	if s.Sensors != nil && cap(s.Sensors) >= n {
		s.Sensors = s.Sensors[:n]
	} else { // never nil: zero sensors are [] in JSON, not null
		s.Sensors = make([]Sensor, n) // bounded: checkState proved the buffer holds n entries
	}
	for i := range n {
		e := b[StateFixedSize+i*StateSensorSize:]
		s.Sensors[i] = Sensor{ID: le.Uint32(e), TNs: int64(le.Uint64(e[8:]))}
	}
	s.Elapsed = Elapsed(s.TNs, epochNs)
	return nil
}

// StateStamp reads only seq and t_ns, after the same validation as the full
// decode: the record-time and metadata-path decode.
func StateStamp(b []byte) (seq uint64, tNs int64, err error) {
	if _, err := checkState(b); err != nil {
		return 0, 0, err
	}
	return le.Uint64(b[8:]), int64(le.Uint64(b[16:])), nil
}

// checkState validates everything but float values and returns the sensor
// count: prefix, exact size, reserved fields.
func checkState(b []byte) (int, error) {
	if err := checkPrefix(SchemaState, b, stateMagic, StateFixedSize); err != nil {
		return 0, err
	}
	if len(b) < 8 {
		return 0, decodeErr(SchemaState, "sensor_count", 6, ErrTruncated, "need %d bytes, have %d", StateFixedSize, len(b))
	}
	n := int(le.Uint16(b[6:]))
	want := StateSize(n)
	if len(b) < StateFixedSize {
		f, off := stateLayout.fieldAt(len(b))
		return 0, decodeErr(SchemaState, f, off, ErrTruncated, "need %d bytes, have %d", want, len(b))
	}
	if len(b) < want {
		i := (len(b) - StateFixedSize) / StateSensorSize
		off := StateFixedSize + i*StateSensorSize
		field := "sensor[" + itoa(i) + "].id"
		if rem := len(b) - off; rem >= 8 {
			field, off = "sensor["+itoa(i)+"].t_ns", off+8
		} else if rem >= 4 {
			field, off = "sensor["+itoa(i)+"].reserved", off+4
		}
		return 0, decodeErr(SchemaState, field, off, ErrTruncated, "need %d bytes for %d sensors, have %d", want, n, len(b))
	}
	if len(b) > want {
		return 0, decodeErr(SchemaState, "end", want, ErrTrailingBytes, "%d sensors make %d bytes, have %d", n, want, len(b))
	}
	for i := range n {
		off := StateFixedSize + i*StateSensorSize + 4
		if r := le.Uint32(b[off:]); r != 0 {
			return 0, decodeErr(SchemaState, "sensor["+itoa(i)+"].reserved", off, ErrInvalid, "must be 0, is %d", r)
		}
	}
	return n, nil
}

var stateLayout = layout{{"magic", 0}, {"version", 4}, {"sensor_count", 6}, {"seq", 8}, {"t_ns", 16},
	{"estimate_t_ns", 24}, {"position", 32}, {"orientation", 56}, {"linear_velocity", 88}, {"angular_velocity", 112}}

// AppendState appends the encoding of s to dst. It panics if s has more than
// MaxSensors sensors, a programming error.
func AppendState(dst []byte, s *State) []byte {
	if len(s.Sensors) > MaxSensors {
		panic("codec: State has more than 65535 sensors")
	}
	dst = append(dst, stateMagic...)
	dst = le.AppendUint16(dst, 1)
	dst = le.AppendUint16(dst, uint16(len(s.Sensors)))
	dst = le.AppendUint64(dst, s.Seq)
	dst = le.AppendUint64(dst, uint64(s.TNs))
	dst = le.AppendUint64(dst, uint64(s.EstimateTNs))
	for _, f := range [...]float64{
		s.Position.X, s.Position.Y, s.Position.Z,
		s.Orientation.X, s.Orientation.Y, s.Orientation.Z, s.Orientation.W,
		s.LinearVelocity.X, s.LinearVelocity.Y, s.LinearVelocity.Z,
		s.AngularVelocity.X, s.AngularVelocity.Y, s.AngularVelocity.Z,
	} {
		dst = le.AppendUint64(dst, math.Float64bits(f))
	}
	for _, x := range s.Sensors {
		dst = le.AppendUint32(dst, x.ID)
		dst = le.AppendUint32(dst, 0)
		dst = le.AppendUint64(dst, uint64(x.TNs))
	}
	return dst
}

// ShiftState adds delta to every stamp of an encoded State in place (t_ns,
// estimate_t_ns, each sensor's t_ns), leaving seq and the rest untouched:
// replay's --restamp. The buffer is validated first.
func ShiftState(b []byte, delta int64) error {
	if _, _, err := StateStamp(b); err != nil {
		return err
	}
	shift(b[16:], delta)
	shift(b[24:], delta)
	for off := StateFixedSize + 8; off < len(b); off += StateSensorSize {
		shift(b[off:], delta)
	}
	return nil
}

func shift(b []byte, delta int64) { le.PutUint64(b, uint64(int64(le.Uint64(b))+delta)) }

func f64(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }

func itoa(i int) string { return strconv.Itoa(i) }
