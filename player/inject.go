package player

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vrlog/vrlog/codec"
)

// ErrBadInject means an --inject specification does not parse.
var ErrBadInject = errors.New("player: bad fault specification")

// Outage is a window of log time, relative to Options.Origin, in which
// nothing is published.
type Outage struct {
	At, For time.Duration
}

// Faults are the faults injected into the replayed streams. Times are log
// time relative to Options.Origin (offsets into the replay window), so
// they do not depend on the rate.
type Faults struct {
	// Drop is the probability that a record is not published (each
	// record draws once from the seeded generator, in stream order).
	Drop float64
	// Outages: nothing is published while the log time is inside one.
	Outages []Outage
	// RestartAt > 0: from this offset on, every stamped record whose
	// schema the codec knows gets seq - seq0, seq0 being its channel's
	// first seq at or after the offset, and every record with source info
	// gets SourceSN - sn0 likewise: the publisher looks restarted (seq back
	// to 0). Each counter of a channel that goes back later by itself (a
	// restart in the log) is left alone from then on.
	RestartAt time.Duration
	// Jitter is the standard deviation of a normal delay added to every
	// deadline, clamped to ±4 sigma and so that a channel's records keep
	// their order.
	Jitter time.Duration
	// Lag delays frame channels (Channel.Frame) relative to the others
	// (negative: the other way round).
	Lag time.Duration
}

// Active reports whether any fault is set.
func (f *Faults) Active() bool {
	return f.Drop > 0 || len(f.Outages) > 0 || f.RestartAt > 0 || f.Jitter > 0 || f.Lag != 0
}

// Within says which fault starts at or after length, the log time a pass
// of the replay window lasts: it would inject nothing (nil when none does).
func (f *Faults) Within(length time.Duration) error {
	for _, o := range f.Outages {
		if o.At > length || (o.At == length && length > 0) { // a zero-length window (one record) still has its instant
			return fmt.Errorf("%w: outage at %v: the replayed window lasts %v (faults are log time from its start)", ErrBadInject, o.At, length)
		}
	}
	if f.RestartAt > 0 && f.RestartAt >= length { // 0: no restart asked for
		return fmt.Errorf("%w: restart at %v: the replayed window lasts %v (faults are log time from its start)", ErrBadInject, f.RestartAt, length)
	}
	return nil
}

// ParseInject adds one "kind=value" specification to f: drop=P (0..1),
// outage=AT:FOR, restart=AT, jitter=SIGMA, lag=D. Durations are seconds
// ("2.5") or Go durations ("2.5s", "300ms").
func (f *Faults) ParseInject(spec string) error {
	k, v, ok := strings.Cut(spec, "=")
	if !ok {
		return fmt.Errorf("%w: %q: want kind=value (drop=P, outage=AT:FOR, restart=AT, jitter=SIGMA, lag=D)", ErrBadInject, spec)
	}
	bad := func(why string) error { return fmt.Errorf("%w: %q: %s", ErrBadInject, spec, why) }
	switch strings.TrimSpace(k) {
	case "drop":
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || !(p >= 0 && p <= 1) { // NaN too
			return bad("drop wants a probability in [0, 1]")
		}
		f.Drop = p
	case "outage":
		a, b, ok := strings.Cut(v, ":")
		if !ok {
			return bad("outage wants AT:FOR")
		}
		at, err1 := ParseDuration(a)
		d, err2 := ParseDuration(b)
		if err1 != nil || err2 != nil || at < 0 || d <= 0 {
			return bad("outage wants AT:FOR, AT >= 0, FOR > 0 (seconds or Go durations)")
		}
		f.Outages = append(f.Outages, Outage{At: at, For: d})
	case "restart":
		at, err := ParseDuration(v)
		if err != nil || at <= 0 {
			return bad("restart wants AT > 0")
		}
		f.RestartAt = at
	case "jitter":
		d, err := ParseDuration(v)
		if err != nil || d < 0 {
			return bad("jitter wants SIGMA >= 0")
		}
		f.Jitter = d
	case "lag":
		d, err := ParseDuration(v)
		if err != nil {
			return bad("lag wants a duration")
		}
		f.Lag = d
	default:
		return bad("unknown kind (drop, outage, restart, jitter, lag)")
	}
	return nil
}

// ParseDuration parses seconds ("1.5", exact to the nanosecond) or a Go
// duration ("1.5s", "300ms").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if ns, err := codec.ParseSeconds(s); err == nil {
		return time.Duration(ns), nil
	}
	return time.ParseDuration(s)
}

// setSeq rewrites the seq of an encoded sample of a known schema through the
// codec: decode, change seq, encode into the same bytes. It refuses (false)
// when the encoding would not reproduce the original bytes otherwise.
func setSeq(schema string, header, payload []byte, seq uint64, st *codec.State, tmp *[]byte) bool {
	switch schema {
	case codec.SchemaState:
		if err := codec.DecodeStateInto(st, payload, 0); err != nil {
			return false
		}
		*tmp = codec.AppendState((*tmp)[:0], st)
		if string(*tmp) != string(payload) {
			return false
		}
		st.Seq = seq
		*tmp = codec.AppendState((*tmp)[:0], st)
		copy(payload, *tmp)
		return true
	case codec.SchemaFrame:
		h, err := codec.DecodeFrameHeader(header, 0)
		if err != nil {
			return false
		}
		*tmp = codec.AppendFrameHeader((*tmp)[:0], &h)
		if string(*tmp) != string(header) {
			return false
		}
		h.Seq = seq
		*tmp = codec.AppendFrameHeader((*tmp)[:0], &h)
		copy(header, *tmp)
		return true
	}
	return false
}
