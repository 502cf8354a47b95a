package analyzer

import (
	"bufio"
	"io"
	"strconv"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/sampler"
)

// timeline writes the per-sample CSV (--csv): one row per sample in arrival
// order. Columns: channel, seq, t_ns, time (in the chosen format; elapsed
// counts from the session epoch as known at that row), recv_wall_ns,
// recv_mono_ns, dt_ms, latency_ms, event.
type timeline struct {
	w   *bufio.Writer
	f   codec.TimeFormat
	buf []byte
}

// TimelineHeader is the CSV header row.
const TimelineHeader = "channel,seq,t_ns,time,recv_wall_ns,recv_mono_ns,dt_ms,latency_ms,event\n"

func newTimeline(w io.Writer, f codec.TimeFormat) *timeline {
	t := &timeline{w: bufio.NewWriterSize(w, 1<<16), f: f}
	t.w.WriteString(TimelineHeader)
	return t
}

func (t *timeline) row(name string, s *sampler.Sample, ev sampler.Event, epoch int64) {
	b := t.buf[:0]
	b = appendCSVField(b, name)
	b = append(b, ',')
	b = strconv.AppendUint(b, s.Seq, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, s.TNs, 10)
	b = append(b, ',')
	b = append(b, t.f.Format(s.TNs, epoch)...)
	b = append(b, ',')
	b = strconv.AppendInt(b, s.RecvWallNs, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, s.RecvMonoNs, 10)
	b = append(b, ',')
	if ev.Kind != sampler.First && ev.Kind != sampler.Duplicate && ev.Kind != sampler.Reorder {
		b = strconv.AppendFloat(b, float64(ev.DtNs)/1e6, 'f', 3, 64)
	}
	b = append(b, ',')
	if s.RecvWallNs != 0 {
		b = strconv.AppendFloat(b, float64(s.RecvWallNs-s.TNs)/1e6, 'f', 3, 64)
	}
	b = append(b, ',')
	b = append(b, ev.Kind.String()...)
	if ev.Outage {
		b = append(b, "+outage"...)
	}
	b = append(b, '\n')
	t.w.Write(b)
	t.buf = b
}

func (t *timeline) flush() { t.w.Flush() }

// appendCSVField quotes a field when it needs it (RFC 4180).
func appendCSVField(b []byte, s string) []byte {
	need := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			need = true
			break
		}
	}
	if !need {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
