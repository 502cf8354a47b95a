package analyzer

import (
	"fmt"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// Pauses. A recording paused and resumed (vrlog rec pause, resume) holds
// one record per pause on the recorder's pause channel (codec.SchemaPause),
// received when it went on: nothing was written between the records before
// it and those after. The log is read in segments split at those records,
// and every channel's timing starts afresh after each (sampler.Stream.Break),
// so that the pause is reported as not captured, as the time between two
// snapshots is: no skip, outage or restart counted across it.

// isPause reports whether c is the recorder's pause channel.
func isPause(c logfmt.Channel) bool {
	return c.Transport == logfmt.TransportInternal && c.Schema == codec.SchemaPause
}

// pauseMark is a pause record: its payload and its receive stamp.
type pauseMark struct {
	codec.Pause
	at int64
}

// readPauses reads r's pause records from a.readFrom on, in order; a
// damaged one is a note, and the log is read across it.
func (a *Analysis) readPauses(path string, r *logfmt.Reader) ([]pauseMark, error) {
	var ids []uint16
	for _, c := range r.Channels() {
		if isPause(c) {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var out []pauseMark
	it := r.Records(logfmt.Filter{Channels: ids, Start: a.readFrom})
	defer it.Close()
	for it.Next() {
		rec := it.Record()
		p, err := codec.DecodePause(rec.Payload)
		if err != nil {
			a.notes = append(a.notes, fmt.Sprintf("%s: a pause record at %d ns (receive clock) is not read: %v", path, rec.RecvMonoNs, err))
			continue
		}
		out = append(out, pauseMark{p, rec.RecvMonoNs})
	}
	return out, it.Err()
}

// paused starts a captured span after pause p of the log at path: the
// channels' timing starts afresh, and the time from the last capture
// before the pause to the first after it is not captured.
func (a *Analysis) paused(path string, r *logfmt.Reader, p pauseMark, dataIDs []uint16, ids []*channel) error {
	var from int64
	for _, ch := range a.order {
		if ch.kind == KindProbe || ch.kind == KindRaw || ch.rep.Count == 0 {
			continue
		}
		from = max(from, ch.stream.Summary().MaxTNs)
	}
	to, have, err := firstCaptureAfter(r, p.at, dataIDs, ids)
	if err != nil {
		return err
	}
	for _, ch := range a.order {
		ch.stream.Break()
		if ch.lag != nil {
			ch.lag.Break()
		}
	}
	var unwritten uint64
	for _, n := range p.Unwritten {
		unwritten += n
	}
	if from != 0 && have && to > from {
		a.gaps = append(a.gaps, NotCaptured{After: path, Before: path, Why: "paused", FromNs: from, ToNs: to,
			GapS: round3(float64(to-from)/1e9*1000) / 1000, Unwritten: unwritten})
	}
	return nil
}

// firstCaptureAfter is the earliest capture stamp among the first records
// of r's stamped data channels received from at on.
func firstCaptureAfter(r *logfmt.Reader, at int64, dataIDs []uint16, ids []*channel) (int64, bool, error) {
	it := r.Records(logfmt.Filter{Channels: dataIDs, Start: at, MetaOnly: true})
	defer it.Close()
	seen := map[uint16]bool{}
	var first int64
	have := false
	for n := 0; it.Next() && n < 1<<16 && len(seen) < len(dataIDs); n++ {
		rec := it.Record()
		if seen[rec.Channel] || int(rec.Channel) >= len(ids) || ids[rec.Channel] == nil || ids[rec.Channel].kind == KindProbe {
			continue
		}
		seen[rec.Channel] = true
		if rec.HasStamp && (!have || rec.CaptureNs < first) {
			first, have = rec.CaptureNs, true
		}
	}
	return first, have, it.Err()
}

// what says what a span not captured was, for people.
func (g NotCaptured) what() string {
	if g.Why == "paused" {
		return fmt.Sprintf("%.3f s while %s was paused, %d records received and not written", g.GapS, g.After, g.Unwritten)
	}
	return fmt.Sprintf("%.3f s between the snapshots %s and %s", g.GapS, g.After, g.Before)
}
