package codec

import "math"

const (
	replayClockMagic = "VRRC"
	// ReplayClockSize is the size of a vrlog.ReplayClock/1.
	ReplayClockSize = 48
	// SchemaReplayClock is the schema of the clock a replay publishes.
	SchemaReplayClock = "vrlog.ReplayClock/1"
)

// ReplayClock flag bits (the u16 at offset 6).
const (
	ClockFlagCapture   = 1 << 0 // log time is on the capture clock (t_ns), else the receive clock
	ClockFlagRestamped = 1 << 1 // log time is shifted by replay --restamp's constant
	ClockFlagRunning   = 1 << 2 // log time is advancing at Rate (not paused or held)
	ClockFlagRecord    = 1 << 3 // published with a record, just before it; else a tick
	clockFlagsKnown    = ClockFlagCapture | ClockFlagRestamped | ClockFlagRunning | ClockFlagRecord
)

// ReplayClock is the log time a replay publishes for a controller that runs
// on the log's clock (replay --clock-key; docs/wire-format.md): ROS's /clock
// for vrlog.
type ReplayClock struct {
	// LogTimeNs is the replay's position as unix ns on the log's clock: the
	// simulator's capture clock, or the recorder's receive clock (its wall
	// time when it received the record), plus the restamp constant when
	// Restamped.
	LogTimeNs int64 `json:"log_time_ns"`
	// PositionNs is the same position in ns from the replay window's start.
	PositionNs int64 `json:"position_ns"`
	// Seq counts the clock messages of one replay from 0.
	Seq uint64 `json:"seq"`
	// Rate is the replay's speed factor; 0 at rate max (no pacing).
	Rate float64 `json:"rate"`
	// Pass is the loop pass, from 0.
	Pass      uint32 `json:"pass"`
	Capture   bool   `json:"capture"`
	Restamped bool   `json:"restamped"`
	Running   bool   `json:"running"`
	Record    bool   `json:"record"`
}

var replayClockLayout = layout{{"magic", 0}, {"version", 4}, {"flags", 6}, {"log_time_ns", 8}, {"position_ns", 16},
	{"seq", 24}, {"rate", 32}, {"pass", 40}, {"reserved", 44}}

func (c *ReplayClock) flags() uint16 {
	var f uint16
	for _, b := range []struct {
		set bool
		bit uint16
	}{{c.Capture, ClockFlagCapture}, {c.Restamped, ClockFlagRestamped}, {c.Running, ClockFlagRunning}, {c.Record, ClockFlagRecord}} {
		if b.set {
			f |= b.bit
		}
	}
	return f
}

// AppendReplayClock appends the encoding of c.
func AppendReplayClock(dst []byte, c *ReplayClock) []byte {
	dst = append(dst, replayClockMagic...)
	dst = le.AppendUint16(dst, 1)
	dst = le.AppendUint16(dst, c.flags())
	dst = le.AppendUint64(dst, uint64(c.LogTimeNs))
	dst = le.AppendUint64(dst, uint64(c.PositionNs))
	dst = le.AppendUint64(dst, c.Seq)
	dst = le.AppendUint64(dst, math.Float64bits(c.Rate))
	dst = le.AppendUint32(dst, c.Pass)
	return le.AppendUint32(dst, 0)
}

// DecodeReplayClock decodes a vrlog.ReplayClock/1; unknown flag bits and a
// non-zero reserved field are errors.
func DecodeReplayClock(b []byte) (ReplayClock, error) {
	const s = SchemaReplayClock
	if err := checkPrefix(s, b, replayClockMagic, ReplayClockSize); err != nil {
		return ReplayClock{}, err
	}
	if len(b) < ReplayClockSize {
		f, off := replayClockLayout.fieldAt(len(b))
		return ReplayClock{}, decodeErr(s, f, off, ErrTruncated, "need %d bytes, have %d", ReplayClockSize, len(b))
	}
	if len(b) > ReplayClockSize {
		return ReplayClock{}, decodeErr(s, "end", ReplayClockSize, ErrTrailingBytes, "message is %d bytes, have %d", ReplayClockSize, len(b))
	}
	f := le.Uint16(b[6:])
	if f&^clockFlagsKnown != 0 {
		return ReplayClock{}, decodeErr(s, "flags", 6, ErrInvalid, "unknown bits %#x", f&^clockFlagsKnown)
	}
	if r := le.Uint32(b[44:]); r != 0 {
		return ReplayClock{}, decodeErr(s, "reserved", 44, ErrInvalid, "must be 0, is %d", r)
	}
	return ReplayClock{
		LogTimeNs: int64(le.Uint64(b[8:])), PositionNs: int64(le.Uint64(b[16:])), Seq: le.Uint64(b[24:]),
		Rate: math.Float64frombits(le.Uint64(b[32:])), Pass: le.Uint32(b[40:]),
		Capture: f&ClockFlagCapture != 0, Restamped: f&ClockFlagRestamped != 0,
		Running: f&ClockFlagRunning != 0, Record: f&ClockFlagRecord != 0,
	}, nil
}
