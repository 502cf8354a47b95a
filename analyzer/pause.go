package analyzer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

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

//
// A merged log of several recorders keeps each one's pause channel apart
// (vrlog/pause, vrlog/pause@2, ...) and says in its metadata which
// channels each pause channel's recorder recorded (MetaPauseScope): a
// pause of one recorder breaks only those, while the others were
// captured throughout.

// IsPause reports whether c is a recorder's pause channel.
func IsPause(c logfmt.Channel) bool {
	return c.Transport == logfmt.TransportInternal && c.Schema == codec.SchemaPause
}

// MetaPauseScope is the metadata key of a merged log's pause scopes: a
// JSON object from each pause channel's name to the names of the
// channels its recorder recorded.
const MetaPauseScope = "vrlog.pause_scope"

// PauseScope is the MetaPauseScope of merging rs as plan does (its pause
// channels kept apart), or "" when no input has a pause channel.
func PauseScope(rs []*logfmt.Reader, plan *logfmt.MergePlan) string {
	scope := map[string][]string{}
	for i, r := range rs {
		var pauses []string
		for _, c := range r.Channels() {
			if IsPause(c) {
				pauses = append(pauses, plan.Name(i, c.ID))
			}
		}
		for _, p := range pauses {
			for _, c := range r.Channels() {
				if name := plan.Name(i, c.ID); !IsPause(c) && !slices.Contains(scope[p], name) {
					scope[p] = append(scope[p], name)
				}
			}
		}
	}
	if len(scope) == 0 {
		return ""
	}
	b, _ := json.Marshal(scope) // strings only: never fails
	return string(b)
}

// pauseScopes reads a log's MetaPauseScope: nil when it has none (a
// recorder's own log, whose pauses are every channel's).
func pauseScopes(meta map[string]string) (map[string]map[string]bool, error) {
	s, ok := meta[MetaPauseScope]
	if !ok {
		return nil, nil
	}
	var raw map[string][]string
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("metadata %s: %w", MetaPauseScope, err)
	}
	out := map[string]map[string]bool{}
	for p, chans := range raw {
		out[p] = map[string]bool{}
		for _, c := range chans {
			out[p][c] = true
		}
	}
	return out, nil
}

// pauseMark is a pause record: its payload, its receive stamp and the
// channels it paused (nil: all).
type pauseMark struct {
	codec.Pause
	at    int64
	scope map[string]bool
}

// pauses reports whether p paused ch's recording.
func (p pauseMark) pauses(ch *channel) bool { return p.scope == nil || p.scope[ch.rep.Name] }

// pairedAcross reports whether p paused the states that frame channel
// f's lag pairs with while f itself went on being recorded (one
// recorder of a merge paused).
func (p pauseMark) pairedAcross(f *channel) bool {
	return !p.pauses(f) && f.lagOf != nil && p.pauses(f.lagOf)
}

// pausing is the start of scoped pause p: the frames recorded on after
// it pair with no state before it (sampler.LagStream.Break), as their
// states were not captured.
func (p pauseMark) pausing(order []*channel) {
	for _, ch := range order {
		if ch.lag != nil && p.pairedAcross(ch) {
			ch.lag.Break()
		}
	}
}

// pauseBound is where a pause starts or ends on the log's receive clock.
type pauseBound struct {
	at  int64
	p   pauseMark
	end bool
}

// boundsOf is where the log is read apart: at each pause's end and, for
// a pause of one recorder of a merge (scoped), at its start too, its
// length back from its record (the other recorders' records go on
// between the two); in receive order.
func boundsOf(ps []pauseMark) []pauseBound {
	var out []pauseBound
	for _, p := range ps {
		if p.scope != nil {
			out = append(out, pauseBound{at: p.at - (p.ToMonoNs - p.FromMonoNs), p: p})
		}
		out = append(out, pauseBound{at: p.at, p: p, end: true})
	}
	slices.SortStableFunc(out, func(x, y pauseBound) int { return cmp.Compare(x.at, y.at) })
	return out
}

// readPauses reads r's pause records from a.readFrom on, in order; a
// damaged one is a note, and the log is read across it.
func (a *Analysis) readPauses(path string, r *logfmt.Reader) ([]pauseMark, error) {
	var ids []uint16
	names := map[uint16]string{}
	for _, c := range r.Channels() {
		if IsPause(c) {
			ids = append(ids, c.ID)
			names[c.ID] = c.Name
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	scopes, err := pauseScopes(r.Header().Metadata)
	if err != nil {
		return nil, err
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
		m := pauseMark{Pause: p, at: rec.RecvMonoNs}
		if scopes != nil {
			m.scope = scopes[names[rec.Channel]]
			if m.scope == nil {
				m.scope = map[string]bool{} // a pause channel the merge did not scope: it paused nothing it can name
			}
		}
		out = append(out, m)
	}
	return out, it.Err()
}

// paused starts a captured span after pause p of the log at path: the
// timing of the channels it paused starts afresh, and the time from
// their last capture before the pause to their first after it is not
// captured.
func (a *Analysis) paused(path string, r *logfmt.Reader, p pauseMark, dataIDs []uint16, ids []*channel) error {
	var from int64
	for _, ch := range a.order {
		if ch.kind == KindProbe || ch.kind == KindRaw || ch.rep.Count == 0 || !p.pauses(ch) {
			continue
		}
		from = max(from, ch.stream.Summary().MaxTNs)
	}
	var pausedIDs []uint16
	for _, id := range dataIDs {
		if int(id) < len(ids) && ids[id] != nil && p.pauses(ids[id]) {
			pausedIDs = append(pausedIDs, id)
		}
	}
	to, have, err := firstCaptureAfter(r, p.at, pausedIDs, ids)
	if err != nil {
		return err
	}
	for _, ch := range a.order {
		if p.pauses(ch) {
			ch.stream.Break()
		}
		if ch.lag != nil && (p.pauses(ch) || p.pairedAcross(ch)) {
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
