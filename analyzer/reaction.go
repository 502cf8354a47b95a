package analyzer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
	"github.com/vrlog/vrlog/textfit"
)

// The reaction of a controller under test, from a response log (replay
// --capture): the records the replay released to the controller are on
// channels marked logfmt.MetaTrigger, stamped when released; the log's
// other data channels are the controller's responses, stamped by the
// recorder as they arrived, on the same monotonic clock. A trigger's
// reaction is its first response: the first response record received at
// or after its release and before the next record of its trigger channel
// was released. A trigger without one is unanswered. When the responses
// name the trigger they answer (codec.AnswerTag, as lockstep controllers
// do), the reaction is the first response naming it at or after its
// release, however late: a late answer is paired with its own trigger,
// never with the next.

// ReactionReport is one trigger channel's reaction.
type ReactionReport struct {
	Trigger   string   `json:"trigger"`
	Responses []string `json:"responses"`
	Count     uint64   `json:"count"`
	Answered  uint64   `json:"answered"`
	Missing   uint64   `json:"missing"`
	LatencyMs Dist     `json:"latency_ms"`
	// UnansweredSeq lists the first MaxEvents unanswered triggers by seq
	// (their capture seq, or their index on the channel when unstamped).
	UnansweredSeq []uint64 `json:"unanswered_seq"`
	// MissedSteps and LateAnswers are the lockstep counts of the outcome
	// records of the response logs holding this trigger channel (a
	// replay's counts over all its trigger channels): triggers the replay
	// released unanswered after its lockstep timeout, and answers that
	// came after it (the replay dropped them; paired here with their own
	// trigger when they name it).
	MissedSteps uint64 `json:"missed_steps"`
	LateAnswers uint64 `json:"late_answers"`
	// Cut counts the trigger (at most one) whose answer the replay's end
	// cut off: the last one released, unanswered, by a replay that did not
	// finish (stopped, interrupted, killed mid-step), its answer maybe
	// published after the log ended. Neither answered nor missing: a
	// gate on what the log holds (--partial-replay) leaves it out.
	Cut    uint64  `json:"cut"`
	CutSeq *uint64 `json:"cut_seq"`
}

// reactChannel collects one channel's stamps for the reaction.
type reactChannel struct {
	trigger bool
	mono    []int64
	seq     []uint64
	// tagged: a response channel's records that name the trigger they
	// answer (codec.AnswerTag in their attachment), by trigger seq: their
	// receive stamps, in order
	tagged map[uint64][]int64
	// outcomes: the outcome records of the response logs holding a
	// trigger channel
	outcomes []*logfmt.ReplayOutcome
	// unfinished: a response log holding this trigger channel is of a
	// replay that did not finish (its outcome says so, or it has none)
	unfinished bool
}

// noteUnfinished marks the trigger channels of a response log whose
// replay did not finish (ids, by channel id): their last trigger may have
// been cut (ReactionReport.Cut).
func noteUnfinished(ids []*channel) {
	for _, ch := range ids {
		if ch != nil && ch.react != nil && ch.react.trigger {
			ch.react.unfinished = true
		}
	}
}

// noteOutcome gives a response log's trigger channels (ids, by channel id)
// the log's outcome record.
func noteOutcome(ids []*channel, o *logfmt.ReplayOutcome) {
	for _, ch := range ids {
		if ch != nil && ch.react != nil && ch.react.trigger && !slices.Contains(ch.react.outcomes, o) {
			ch.react.outcomes = append(ch.react.outcomes, o)
		}
	}
}

// readAnswerTags reads the attachments of a response log's response
// channels (the metadata-only pass has none) for the answers that name
// their trigger. Response logs are small: the controller's outputs.
func readAnswerTags(r *logfmt.Reader, ids []*channel) error {
	var resp []uint16
	for id, ch := range ids {
		if ch != nil && ch.react != nil && !ch.react.trigger && ch.kind != KindProbe {
			resp = append(resp, uint16(id))
		}
	}
	if len(resp) == 0 {
		return nil
	}
	it := r.Records(logfmt.Filter{Channels: resp})
	for it.Next() {
		rec := it.Record()
		seq, ok := codec.ParseAnswerTag(rec.Header)
		if !ok {
			continue
		}
		rc := ids[rec.Channel].react
		if rc.tagged == nil {
			rc.tagged = map[uint64][]int64{}
		}
		rc.tagged[seq] = append(rc.tagged[seq], rec.RecvMonoNs)
	}
	return it.Err()
}

func (rc *reactChannel) add(r *logfmt.Record) {
	seq := uint64(len(rc.mono))
	if r.HasStamp {
		seq = r.Seq
	}
	rc.mono, rc.seq = append(rc.mono, r.RecvMonoNs), append(rc.seq, seq)
}

// markReaction gives the data channels of a response log (one with a
// trigger channel) their part in the reaction.
func markReaction(ch *channel, c logfmt.Channel, responseLog bool) {
	if !responseLog || ch.kind == KindProbe || ch.react != nil {
		return
	}
	ch.react = &reactChannel{trigger: c.Meta[logfmt.MetaTrigger] == "1"}
}

// isResponseLog reports whether a log's channels hold a trigger channel.
func isResponseLog(cs []logfmt.Channel) bool {
	for _, c := range cs {
		if c.Meta[logfmt.MetaTrigger] == "1" {
			return true
		}
	}
	return false
}

// reaction computes every trigger channel's reaction; each response
// channel belongs to the trigger channel whose name shares the longest
// prefix with it (vr/r1/cmd → vr/r1/state).
func (a *Analysis) reaction() []ReactionReport {
	var trigs, resps []*channel
	for _, ch := range a.order {
		switch {
		case ch.react == nil:
		case ch.react.trigger:
			trigs = append(trigs, ch)
		default:
			resps = append(resps, ch)
		}
	}
	out := []ReactionReport{}
	for _, t := range trigs {
		rep := ReactionReport{Trigger: t.rep.Name, Responses: []string{}, UnansweredSeq: []uint64{}}
		for _, o := range t.react.outcomes {
			rep.MissedSteps += o.Missed
			rep.LateAnswers += o.Late
		}
		var at []int64
		tagged := map[uint64][]int64{}
		for _, r := range resps {
			if pairState(r, trigs) == t {
				rep.Responses = append(rep.Responses, r.rep.Name)
				at = append(at, r.react.mono...)
				for seq, ms := range r.react.tagged {
					tagged[seq] = append(tagged[seq], ms...)
				}
			}
		}
		slices.Sort(at)
		for _, ms := range tagged {
			slices.Sort(ms)
		}
		idx := make([]int, len(t.react.mono)) // triggers in release order
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(t.react.mono[i], t.react.mono[j]) })
		var h sampler.Histogram
		for k, i := range idx {
			rel := t.react.mono[i]
			next := int64(1<<63 - 1)
			if k+1 < len(idx) {
				next = t.react.mono[idx[k+1]]
			}
			rep.Count++
			if len(tagged) > 0 { // paired by the trigger they name
				ms := tagged[t.react.seq[i]]
				if j, _ := slices.BinarySearch(ms, rel); j < len(ms) {
					rep.Answered++
					h.Add(ms[j] - rel)
					continue
				}
			} else if j, _ := slices.BinarySearch(at, rel); j < len(at) && at[j] < next {
				rep.Answered++
				h.Add(at[j] - rel)
				continue
			}
			if k == len(idx)-1 && t.react.unfinished { // the replay ended while it waited
				seq := t.react.seq[i]
				rep.Cut, rep.CutSeq = 1, &seq
				continue
			}
			rep.Missing++
			if len(rep.UnansweredSeq) < a.opts.MaxEvents {
				rep.UnansweredSeq = append(rep.UnansweredSeq, t.react.seq[i])
			}
		}
		rep.LatencyMs = distMs(&h)
		out = append(out, rep)
	}
	return out
}

// reactionSubjects are --max-reaction's subjects: each trigger channel's
// largest reaction.
func (r *Report) reactionSubjects(topics map[string]string) []subject {
	var out []subject
	for _, x := range r.Reaction {
		out = append(out, subject{name: x.Trigger, topic: topics[x.Trigger], value: x.LatencyMs.Max})
	}
	return out
}

// failsAnyway says why check fails on channel whatever its limit: an
// unanswered trigger is a reaction too late for any limit.
func (r *Report) failsAnyway(check, channel string) string {
	if check != "max-reaction" {
		return ""
	}
	if len(r.ReplayIncomplete) > 0 && !r.partialReplay {
		return strings.Join(r.ReplayIncomplete, "; ") + " (a partial-replay gate judges it on what it holds)"
	}
	for _, x := range r.Reaction {
		if x.Trigger == channel && x.Missing > 0 {
			return fmt.Sprintf("%d of %d triggers got no response", x.Missing, x.Count)
		}
		if x.Trigger == channel && x.MissedSteps > 0 && !r.partialReplay {
			return fmt.Sprintf("%s missed: the controller did not answer within the lockstep timeout (a partial-replay gate judges the answers the log holds)",
				steps(x.MissedSteps))
		}
	}
	return ""
}

// steps is "1 lockstep step" or "N lockstep steps".
func steps(n uint64) string {
	if n == 1 {
		return "1 lockstep step"
	}
	return fmt.Sprintf("%d lockstep steps", n)
}

// noReaction reports whether check is max-reaction and trigger channel
// got no response at all (its reaction has no value).
func (r *Report) noReaction(check, channel string) bool {
	if check != "max-reaction" {
		return false
	}
	for _, x := range r.Reaction {
		if x.Trigger == channel {
			return x.Answered == 0
		}
	}
	return false
}

// isOutcome reports whether c is a response log's outcome channel (never
// a data channel of the report).
func isOutcome(c logfmt.Channel) bool {
	return c.Transport == logfmt.TransportInternal && c.Schema == logfmt.OutcomeSchema
}

// readOutcome reads a response log's outcome record, the last one when
// there are several; nil when it has none (or it does not decode).
func readOutcome(r *logfmt.Reader) *logfmt.ReplayOutcome {
	var ids []uint16
	for _, c := range r.Channels() {
		if isOutcome(c) {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var out *logfmt.ReplayOutcome
	it := r.Records(logfmt.Filter{Channels: ids})
	for it.Next() {
		var o logfmt.ReplayOutcome
		if json.Unmarshal(it.Record().Payload, &o) == nil && o.Schema == logfmt.OutcomeSchema {
			out = &o
		}
	}
	return out
}

// replayIncomplete says why the response logs hold less than their
// replays' windows, answered: no outcome record (the replay was killed),
// a replay that did not finish, fewer triggers than the window holds.
func (a *Analysis) replayIncomplete(reacts []ReactionReport) []string {
	out := []string{}
	var released uint64
	for _, x := range reacts {
		released += x.Count
	}
	var want uint64
	responses := 0
	for _, f := range a.files {
		if !f.response {
			continue
		}
		responses++
		o := f.ReplayOutcome
		switch {
		case o == nil:
			out = append(out, f.Path+": the response log records no outcome (the replay was killed before it finished the log)")
			continue
		case !o.Finished:
			out = append(out, fmt.Sprintf("%s: the replay did not finish (%s)", f.Path, o.Reason))
		}
		want += o.Triggers
	}
	if responses > 0 && want > released {
		out = append(out, fmt.Sprintf("the response log holds %d of the %d triggers of the replayed window", released, want))
	}
	return out
}

// writeReaction prints the reaction section of the text report: lines to
// w (wrapped), the table straight to out, fitted to width.
func (r *Report) writeReaction(w *textfit.Writer, out io.Writer, width int) {
	if len(r.Reaction) == 0 {
		return
	}
	fmt.Fprintf(w, "\nreaction (response log: the first response after each released trigger):\n")
	tb := &textfit.Table{Indent: "  ", Keep: 1, Right: true}
	tb.Row("trigger", "responses", "triggers", "answered", "missing", "p50 ms", "p99 ms", "max ms")
	for _, x := range r.Reaction {
		tb.Row(x.Trigger, strings.Join(x.Responses, ","), fmt.Sprint(x.Count), fmt.Sprint(x.Answered), fmt.Sprint(x.Missing),
			fmt.Sprintf("%.3f", x.LatencyMs.P50), fmt.Sprintf("%.3f", x.LatencyMs.P99), fmt.Sprintf("%.3f", x.LatencyMs.Max))
	}
	w.Flush()
	tb.Write(out, width)
	for _, why := range r.ReplayIncomplete {
		fmt.Fprintf(w, "         incomplete: %s\n", why)
	}
	for _, x := range r.Reaction {
		if x.MissedSteps > 0 || x.LateAnswers > 0 {
			fmt.Fprintf(w, "         %s: the replay's outcome: %s missed (released unanswered after the lockstep timeout), %d late answer(s) (after it)\n",
				x.Trigger, steps(x.MissedSteps), x.LateAnswers)
		}
		if x.CutSeq != nil {
			fmt.Fprintf(w, "         %s: trigger seq %d was cut by the replay's end (released last, unanswered when the replay stopped; its answer may have come after the log ended): neither answered nor missing\n",
				x.Trigger, *x.CutSeq)
		}
		if len(x.Responses) == 0 {
			fmt.Fprintf(w, "         %s: no response channel in the log (the controller published nothing that was captured)\n", x.Trigger)
		}
	}
}

// logClock places a response log's records stamped only on receipt (the
// controller's answers) on the log's clock, the triggers' capture time: a
// record received at wall time t is at the capture time of the trigger
// released last before it, plus its delay after that release, but not
// past the next trigger's capture time (the log's clock stood there until
// that release). So the responses share the triggers' timeline (elapsed,
// outages) whatever the replay's rate: they were printed at the receive
// clock's 42.9 s in a log of 0-11.3 s, and at --rate max the replay's own
// 20-50 ms gaps between answers were listed as the controller's outages.
type logClock struct {
	wall, capture []int64 // the triggers' releases, by release time
}

// readLogClock reads the releases of a response log's trigger channels
// (ids, by channel id): their receive and capture stamps.
func readLogClock(r *logfmt.Reader, ids []*channel) (*logClock, error) {
	var trig []uint16
	for id, ch := range ids {
		if ch != nil && ch.react != nil && ch.react.trigger {
			trig = append(trig, uint16(id))
		}
	}
	c := &logClock{}
	if len(trig) == 0 {
		return c, nil
	}
	type release struct{ wall, capture int64 }
	var rs []release
	it := r.Records(logfmt.Filter{Channels: trig, MetaOnly: true})
	for it.Next() {
		if rec := it.Record(); rec.HasStamp {
			rs = append(rs, release{rec.RecvWallNs, rec.CaptureNs})
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(rs, func(a, b release) int { return cmp.Compare(a.wall, b.wall) })
	for _, x := range rs {
		c.wall, c.capture = append(c.wall, x.wall), append(c.capture, x.capture)
	}
	return c, nil
}

// at is wall time t on the log's clock (t itself without a release).
func (c *logClock) at(t int64) int64 {
	if len(c.wall) == 0 {
		return t
	}
	i, _ := slices.BinarySearch(c.wall, t+1) // the first release after t
	if i--; i < 0 {
		return c.capture[0] - (c.wall[0] - t)
	}
	v := c.capture[i] + (t - c.wall[i])
	if i+1 < len(c.capture) && c.capture[i+1] >= c.capture[i] {
		v = min(v, c.capture[i+1])
	}
	return v
}
