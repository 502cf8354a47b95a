package foxglove

import (
	"bytes"
	"encoding/base64"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/vrlog/vrlog/codec"
)

// Hand-written JSON appenders: exact int64/uint64 digits, NaN/Inf as null
// (encoding/json refuses them), base64 straight into the reused buffer.

func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.AppendFloat(dst, f, 'g', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64) // as encoding/json: no exponent in the usual range
}

func appendTimestamp(dst []byte, ns int64) []byte {
	// foxglove time is unsigned; a stamp before 1970 is clamped to 0.
	if ns < 0 {
		ns = 0
	}
	dst = append(dst, `{"sec":`...)
	dst = strconv.AppendInt(dst, ns/1e9, 10)
	dst = append(dst, `,"nsec":`...)
	dst = strconv.AppendInt(dst, ns%1e9, 10)
	return append(dst, '}')
}

func appendKey(dst []byte, k string) []byte {
	dst = append(dst, '"')
	dst = append(dst, k...)
	return append(dst, '"', ':')
}

func appendInt(dst []byte, k string, v int64) []byte {
	return strconv.AppendInt(appendKey(dst, k), v, 10)
}

func appendUint(dst []byte, k string, v uint64) []byte {
	return strconv.AppendUint(appendKey(dst, k), v, 10)
}

func appendVec3(dst []byte, k string, v codec.Vec3) []byte {
	dst = append(appendKey(dst, k), `{"x":`...)
	dst = appendFloat(dst, v.X)
	dst = append(dst, `,"y":`...)
	dst = appendFloat(dst, v.Y)
	dst = append(dst, `,"z":`...)
	dst = appendFloat(dst, v.Z)
	return append(dst, '}')
}

func appendBase64(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	n := base64.StdEncoding.EncodedLen(len(b))
	dst = growLen(dst, n)
	base64.StdEncoding.Encode(dst[len(dst)-n:], b)
	return append(dst, '"')
}

// growLen extends dst by n bytes (contents unspecified).
func growLen(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		nd := make([]byte, len(dst), 2*cap(dst)+n)
		copy(nd, dst)
		dst = nd
	}
	return dst[:len(dst)+n]
}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// AppendStateJSON appends s as a vrsdk.State/1 JSON message (stateSchema).
func AppendStateJSON(dst []byte, s *codec.State) []byte {
	dst = append(dst, `{"timestamp":`...)
	dst = appendTimestamp(dst, s.TNs)
	dst = append(dst, ',')
	dst = appendUint(dst, "seq", s.Seq)
	dst = append(dst, ',')
	dst = appendInt(dst, "t_ns", s.TNs)
	dst = appendKey(append(dst, ','), "elapsed")
	dst = appendFloat(dst, s.Elapsed)
	dst = append(dst, ',')
	dst = appendInt(dst, "estimate_t_ns", s.EstimateTNs)
	dst = appendVec3(append(dst, ','), "position", s.Position)
	dst = append(appendKey(append(dst, ','), "orientation"), `{"x":`...)
	dst = appendFloat(dst, s.Orientation.X)
	dst = append(dst, `,"y":`...)
	dst = appendFloat(dst, s.Orientation.Y)
	dst = append(dst, `,"z":`...)
	dst = appendFloat(dst, s.Orientation.Z)
	dst = append(dst, `,"w":`...)
	dst = appendFloat(dst, s.Orientation.W)
	dst = append(dst, '}')
	dst = appendVec3(append(dst, ','), "linear_velocity", s.LinearVelocity)
	dst = appendVec3(append(dst, ','), "angular_velocity", s.AngularVelocity)
	dst = append(appendKey(append(dst, ','), "sensors"), '[')
	for i, sn := range s.Sensors {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		dst = appendUint(dst, "id", uint64(sn.ID))
		dst = append(dst, ',')
		dst = appendInt(dst, "t_ns", sn.TNs)
		dst = append(dst, '}')
	}
	return append(dst, ']', '}')
}

func appendTimeReplyJSON(dst []byte, r *codec.TimeReply) []byte {
	dst = append(dst, '{')
	dst = appendInt(dst, "t2_ns", r.T2Ns)
	dst = append(dst, ',')
	dst = appendInt(dst, "t3_ns", r.T3Ns)
	return append(dst, '}')
}

func appendClockProbeJSON(dst []byte, p *codec.ClockProbe) []byte {
	dst = append(dst, '{')
	dst = appendInt(dst, "t1_ns", p.T1Ns)
	dst = appendInt(append(dst, ','), "t2_ns", p.T2Ns)
	dst = appendInt(append(dst, ','), "t3_ns", p.T3Ns)
	dst = appendInt(append(dst, ','), "t4_ns", p.T4Ns)
	dst = appendInt(append(dst, ','), "offset_ns", p.Offset())
	dst = appendInt(append(dst, ','), "rtt_ns", p.RTT())
	return append(dst, '}')
}

func appendUndecodableJSON(dst []byte, schema string, err error, header, payload []byte) []byte {
	dst = appendKey(append(dst, '{'), "schema")
	dst = appendString(dst, schema)
	dst = appendKey(append(dst, ','), "error")
	dst = appendString(dst, err.Error())
	dst = appendKey(append(dst, ','), "header")
	dst = appendBase64(dst, header)
	dst = appendKey(append(dst, ','), "payload")
	dst = appendBase64(dst, payload)
	return append(dst, '}')
}

func appendReplayClockJSON(dst []byte, c *codec.ReplayClock) []byte {
	dst = append(dst, `{"timestamp":`...)
	dst = appendTimestamp(dst, c.LogTimeNs)
	dst = appendInt(append(dst, ','), "log_time_ns", c.LogTimeNs)
	dst = appendInt(append(dst, ','), "position_ns", c.PositionNs)
	dst = appendUint(append(dst, ','), "seq", c.Seq)
	dst = appendKey(append(dst, ','), "rate")
	dst = appendFloat(dst, c.Rate)
	dst = appendUint(append(dst, ','), "pass", uint64(c.Pass))
	for _, f := range []struct {
		k string
		v bool
	}{{"capture", c.Capture}, {"restamped", c.Restamped}, {"running", c.Running}, {"record", c.Record}} {
		dst = strconv.AppendBool(appendKey(append(dst, ','), f.k), f.v)
	}
	return append(dst, '}')
}

// appendHeartbeatJSON appends a recorder heartbeat: only its receive stamp.
func appendHeartbeatJSON(dst []byte, recvWallNs int64) []byte {
	dst = append(dst, `{"timestamp":`...)
	dst = appendTimestamp(dst, recvWallNs)
	dst = appendInt(append(dst, ','), "recv_wall_ns", recvWallNs)
	return append(dst, '}')
}

// appendPauseJSON appends a pause record's message, stamped at its end.
func appendPauseJSON(dst []byte, p *codec.Pause) []byte {
	dst = append(dst, `{"timestamp":`...)
	dst = appendTimestamp(dst, p.ToWallNs)
	dst = appendInt(append(dst, ','), "from_wall_ns", p.FromWallNs)
	dst = appendInt(append(dst, ','), "from_mono_ns", p.FromMonoNs)
	dst = appendInt(append(dst, ','), "to_wall_ns", p.ToWallNs)
	dst = appendInt(append(dst, ','), "to_mono_ns", p.ToMonoNs)
	dst = appendKey(append(dst, ','), "unwritten")
	dst = append(dst, '{')
	for i, name := range slices.Sorted(maps.Keys(p.Unwritten)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendString(dst, name), ':') // a channel's name: escaped
		dst = strconv.AppendUint(dst, p.Unwritten[name], 10)
	}
	return append(dst, "}}"...)
}

// appendOpaqueJSON appends a record of a schema vrlog does not know: its
// transport header and payload, verbatim in base64.
func appendOpaqueJSON(dst []byte, schema string, header, payload []byte) []byte {
	dst = appendKey(append(dst, '{'), "schema")
	dst = appendString(dst, schema)
	dst = appendKey(append(dst, ','), "header")
	dst = appendBase64(dst, header)
	dst = appendKey(append(dst, ','), "payload")
	dst = appendBase64(dst, payload)
	return append(dst, '}')
}

// appendStamped appends msg, a JSON object, with a "timestamp" of ns first
// (stampedSchema); a message that is no object, or that has a
// "timestamp" anywhere already, goes as it is.
func appendStamped(dst, msg []byte, ns int64) []byte {
	if len(msg) < 2 || msg[0] != '{' || bytes.Contains(msg, []byte(`"timestamp"`)) {
		return append(dst, msg...)
	}
	dst = append(dst, `{"timestamp":`...)
	dst = appendTimestamp(dst, ns)
	if rest := bytes.TrimLeft(msg[1:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
		dst = append(dst, ',')
	}
	return append(dst, msg[1:]...)
}
