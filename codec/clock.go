package codec

const (
	timeReplyMagic  = "VRTR"
	clockProbeMagic = "VRCP"
	// TimeReplySize is the size of a vrsdk.TimeReply/1.
	TimeReplySize = 24
	// ClockProbeSize is the size of a vrlog.ClockProbe/1.
	ClockProbeSize = 40
)

// TimeReply is the simulator time service's answer to a clock-sync query:
// when it received the query (T2) and when it sent the reply (T3), on the
// simulator's clock.
type TimeReply struct {
	T2Ns int64 `json:"t2_ns"`
	T3Ns int64 `json:"t3_ns"`
}

// ClockProbe is one complete clock-sync exchange as the recorder stores it:
// T1/T4 on the recorder's wall clock, T2/T3 on the simulator's.
type ClockProbe struct {
	T1Ns int64 `json:"t1_ns"`
	T2Ns int64 `json:"t2_ns"`
	T3Ns int64 `json:"t3_ns"`
	T4Ns int64 `json:"t4_ns"`
}

// Offset is the simulator clock minus the recorder clock, NTP style:
// ((T2-T1)+(T3-T4))/2.
func (p ClockProbe) Offset() int64 { return ((p.T2Ns - p.T1Ns) + (p.T3Ns - p.T4Ns)) / 2 }

// RTT is the round trip without the simulator's processing time:
// (T4-T1)-(T3-T2).
func (p ClockProbe) RTT() int64 { return (p.T4Ns - p.T1Ns) - (p.T3Ns - p.T2Ns) }

var stampPairLayout = layout{{"magic", 0}, {"version", 4}, {"reserved", 6}, {"t2_ns", 8}, {"t3_ns", 16}}
var probeLayout = layout{{"magic", 0}, {"version", 4}, {"reserved", 6}, {"t1_ns", 8}, {"t2_ns", 16}, {"t3_ns", 24}, {"t4_ns", 32}}

// AppendTimeReply appends the encoding of r.
func AppendTimeReply(dst []byte, r TimeReply) []byte {
	dst = append(dst, timeReplyMagic...)
	dst = le.AppendUint16(dst, 1)
	dst = le.AppendUint16(dst, 0)
	dst = le.AppendUint64(dst, uint64(r.T2Ns))
	return le.AppendUint64(dst, uint64(r.T3Ns))
}

// DecodeTimeReply decodes a vrsdk.TimeReply/1.
func DecodeTimeReply(b []byte) (TimeReply, error) {
	if err := checkFixed(SchemaTimeReply, b, timeReplyMagic, TimeReplySize, stampPairLayout); err != nil {
		return TimeReply{}, err
	}
	return TimeReply{T2Ns: int64(le.Uint64(b[8:])), T3Ns: int64(le.Uint64(b[16:]))}, nil
}

// AppendClockProbe appends the encoding of p.
func AppendClockProbe(dst []byte, p ClockProbe) []byte {
	dst = append(dst, clockProbeMagic...)
	dst = le.AppendUint16(dst, 1)
	dst = le.AppendUint16(dst, 0)
	for _, v := range [...]int64{p.T1Ns, p.T2Ns, p.T3Ns, p.T4Ns} {
		dst = le.AppendUint64(dst, uint64(v))
	}
	return dst
}

// DecodeClockProbe decodes a vrlog.ClockProbe/1.
func DecodeClockProbe(b []byte) (ClockProbe, error) {
	if err := checkFixed(SchemaClockProbe, b, clockProbeMagic, ClockProbeSize, probeLayout); err != nil {
		return ClockProbe{}, err
	}
	return ClockProbe{
		T1Ns: int64(le.Uint64(b[8:])), T2Ns: int64(le.Uint64(b[16:])),
		T3Ns: int64(le.Uint64(b[24:])), T4Ns: int64(le.Uint64(b[32:])),
	}, nil
}

// checkFixed validates a fixed-size message: prefix, size, reserved u16 at 6.
func checkFixed(schema string, b []byte, magic string, size int, l layout) error {
	if err := checkPrefix(schema, b, magic, size); err != nil {
		return err
	}
	if len(b) < size {
		f, off := l.fieldAt(len(b))
		return decodeErr(schema, f, off, ErrTruncated, "need %d bytes, have %d", size, len(b))
	}
	if len(b) > size {
		return decodeErr(schema, "end", size, ErrTrailingBytes, "message is %d bytes, have %d", size, len(b))
	}
	if r := le.Uint16(b[6:]); r != 0 {
		return decodeErr(schema, "reserved", 6, ErrInvalid, "must be 0, is %d", r)
	}
	return nil
}
