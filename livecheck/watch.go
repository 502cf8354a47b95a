package livecheck

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// A Trigger is one of analyze's checks watched live, as record
// --snapshot-on CHECK=[CHANNEL=]VALUE watches it: the same check, the same
// channels it applies to, the same CHANNEL pattern grammar, and a Watch
// fires it on every sample that makes the check fail on the recording
// so far. Only checks decided sample by sample can be watched.
type Trigger struct {
	Check string // max-skips, max-restarts, max-outage or max-lag
	Limit Limit
}

// liveCheck is what a Watch needs of a check.
type liveCheck struct {
	unit string
	dur  bool   // the value is a duration (compared in ms)
	what string // what the check applies to
}

var liveChecks = map[string]liveCheck{
	"max-skips":    {"", false, WhatStamped},
	"max-restarts": {"", false, WhatStamped},
	"max-outage":   {"ms", true, WhatData},
	"max-lag":      {"ms", true, WhatPaired},
}

// LiveChecks names the checks a Trigger can watch.
const LiveChecks = "max-skips, max-restarts, max-outage, max-lag"

// ParseTrigger parses CHECK=VALUE or CHECK=CHANNEL=VALUE, as analyze's
// --CHECK [CHANNEL=]VALUE.
func ParseTrigger(s string) (Trigger, error) {
	name, val, ok := strings.Cut(s, "=")
	if !ok {
		return Trigger{}, fmt.Errorf("%q: want CHECK=[CHANNEL=]VALUE, e.g. max-restarts=0 or max-outage=vr/r1/state=200ms (checks: %s)", s, LiveChecks)
	}
	lc, ok := liveChecks[name]
	switch {
	case !ok && (name == "min-rate" || name == "max-lag-reject"):
		return Trigger{}, fmt.Errorf("%q: %s is not decided sample by sample (it needs the whole recording); live checks: %s", s, name, LiveChecks)
	case !ok:
		return Trigger{}, fmt.Errorf("%q: unknown check %q; live checks: %s", s, name, LiveChecks)
	}
	l, err := ParseLimit(val, lc.dur)
	if err != nil {
		return Trigger{}, fmt.Errorf("%s: %w", name, err)
	}
	return Trigger{Check: name, Limit: l}, nil
}

// String is the trigger as given.
func (t Trigger) String() string {
	v := FmtNum(t.Limit.Value)
	if liveChecks[t.Check].dur {
		v += "ms"
	}
	if t.Limit.Channel != "" {
		v = t.Limit.Channel + "=" + v
	}
	return t.Check + "=" + v
}

// Fired is a trigger a sample set off.
type Fired struct {
	Check, Channel string
	Value, Limit   float64
	// Message words it as analyze words a failed check:
	// "max-restarts vr/r1/state: 1 (limit ≤ 0): off by 1".
	Message string
	// CaptureNs is the capture stamp of the sample that showed it; for
	// an outage that ended, the capture time its silence crossed the
	// line (the sample before it plus the line); 0 for a stream that
	// stopped (Silent).
	CaptureNs int64
	// RecvMonoNs and RecvWallNs, set by Silent, are when the silence
	// became a fault (0: at the sample that showed it).
	RecvMonoNs, RecvWallNs int64
}

// Watch evaluates triggers record by record, keeping the per-channel
// bookkeeping analyze keeps (sampler streams, frame-to-state pairing), in
// bounded memory. One goroutine uses it.
type Watch struct {
	byCheck map[string][]Limit
	specs   []Trigger
	chans   map[string]*watched
	states  []*watched
	frames  []*watched
	factor  float64
	// seenMono and seenWall are the latest receive stamps of any record
	// (the recorder's heartbeats included): the time Silent judges at, so
	// that records still on their way through a recorder that is behind
	// are no silence.
	seenMono, seenWall int64
}

// watched is one channel's live bookkeeping.
type watched struct {
	name, topic, kind string
	timing            Timing
	stream            *sampler.Stream
	count             uint64
	skipped, restarts uint64
	pub               string
	pair              *watched        // frames: the state channel they pair with
	lag               sampler.LiveLag // frames: paired with pair's states
	internal          bool            // the recorder's own (vrlog/recorder): never a subject
	lastMono          int64           // receive stamps of the latest sample
	lastWall          int64
	silent            bool // its silence fired max-outage (Silent); cleared by its next sample
}

// NewWatch watches ts; outageFactor is analyze's --outage-factor (0: 3).
func NewWatch(ts []Trigger, outageFactor float64) *Watch {
	if outageFactor <= 0 {
		outageFactor = 3
	}
	w := &Watch{byCheck: map[string][]Limit{}, specs: ts, chans: map[string]*watched{}, factor: outageFactor}
	for _, t := range ts {
		w.byCheck[t.Check] = append(w.byCheck[t.Check], t.Limit)
	}
	return w
}

// Record accounts for one record of channel c (with the stamps the
// recorder decoded) and returns the triggers it fired. lost is how many
// samples of c the recorder may have lost since c's previous record (its
// transport queue or subscriber buffer was full; ^uint64(0): the whole
// gap): that many seqs of a gap before r are the recorder's loss, no skip
// of the publisher, and a gap of the recorder's loss alone is no outage,
// as analyze counts recorder drops apart from the publisher's faults.
func (w *Watch) Record(c *logfmt.Channel, r *logfmt.Record, lost uint64) []Fired {
	fired, _ := w.record(c, r, lost, false)
	return fired
}

// RecordUndecided is Record for a record whose gap before it (less lost)
// is not yet
// known to be the recorder's loss or the publisher's skip (iceoryx2's
// safe overflow: the drain that took r says it when it ends). The gap's
// skip and outage wait in the Held (nil: r has no gap), judged by Release
// once the recorder's loss is ruled out, or forgotten if it is not.
func (w *Watch) RecordUndecided(c *logfmt.Channel, r *logfmt.Record, lost uint64) ([]Fired, *Held) {
	return w.record(c, r, lost, true)
}

// Held is the skip and the outage of a gap whose cause is not yet known
// (RecordUndecided).
type Held struct {
	ch                 *watched
	skipped            uint64
	outage             bool
	dtNs               int64 // the gap in capture time
	captureNs          int64
	prevMono, prevWall int64 // the channel's record before the gap
	mono, wall         int64 // the record after it
}

// Release judges h, a gap the publisher made: its skip and outage fire as
// they would have at its record, stamped there.
func (w *Watch) Release(h *Held) []Fired {
	fired := w.judgeGap(nil, h)
	for i := range fired {
		if fired[i].RecvMonoNs == 0 {
			fired[i].RecvMonoNs, fired[i].RecvWallNs = h.mono, h.wall
		}
	}
	return fired
}

func (w *Watch) record(c *logfmt.Channel, r *logfmt.Record, lost uint64, hold bool) ([]Fired, *Held) {
	w.seenMono, w.seenWall = max(w.seenMono, r.RecvMonoNs), max(w.seenWall, r.RecvWallNs)
	ch := w.channel(c)
	if ch.kind == KindProbe || ch.internal {
		return nil, nil
	}
	ch.count++
	wasSilent := ch.silent // its silence fired already (Silent): the gap it ends is that outage
	g := &Held{ch: ch, prevMono: ch.lastMono, prevWall: ch.lastWall, mono: r.RecvMonoNs, wall: r.RecvWallNs}
	ch.lastMono, ch.lastWall, ch.silent = r.RecvMonoNs, r.RecvWallNs, false
	s, ok := StoredSample(&ch.timing, r, ch.count)
	if !ok {
		return nil, nil
	}
	if string(r.PublisherID) != ch.pub {
		ch.pub = string(r.PublisherID)
	}
	s.Publisher = ch.pub
	ev := ch.stream.Add(s)
	var fired []Fired
	g.captureNs, g.dtNs = s.TNs, ev.DtNs
	g.outage = ev.Outage && !wasSilent
	switch ev.Kind {
	case sampler.Skip:
		g.skipped = ev.Skipped - min(ev.Skipped, lost)
		if g.skipped == 0 {
			g.outage = false // the recorder's loss alone
		}
	case sampler.Restart:
		ch.restarts++
		n := len(fired)
		fired = w.check(fired, "max-restarts", ch, float64(ch.restarts), s.TNs)
		if len(fired) > n && ch.restarts > 1 {
			fired[n].Message += " (since the recording started)"
		}
	}
	var held *Held
	switch {
	case g.skipped == 0 && !g.outage:
	case hold && ev.Kind == sampler.Skip:
		held = g
	default:
		fired = w.judgeGap(fired, g)
	}
	if ev.Kind == sampler.Duplicate || ev.Kind == sampler.Reorder {
		return fired, held
	}
	switch ch.kind {
	case KindState:
		for _, f := range w.frames {
			if f.pair == ch {
				fired = w.lags(fired, f, f.lag.State(s.TNs))
			}
		}
	case KindFrame:
		if ch.pair != nil {
			fired = w.lags(fired, ch, ch.lag.Frame(s.TNs))
		}
	}
	return fired, held
}

// judgeGap counts g's skip and judges it and g's outage.
func (w *Watch) judgeGap(fired []Fired, g *Held) []Fired {
	ch := g.ch
	if g.skipped > 0 {
		ch.skipped += g.skipped
		n := len(fired)
		fired = w.check(fired, "max-skips", ch, float64(ch.skipped), g.captureNs)
		if len(fired) > n { // the count is the recording's, as analyze's gate counts it; a snapshot holds this gap
			fired[n].Message += fmt.Sprintf(" (since the recording started; %d in this gap)", g.skipped)
		}
	}
	if g.outage {
		n := len(fired)
		fired = w.check(fired, "max-outage", ch, round3(float64(g.dtNs)/1e6), g.captureNs) // to the µs, as analyze's outages
		if len(fired) > n && g.prevMono != 0 {
			// An outage that ended before Silent saw it is stamped as Silent
			// stamps one: when the silence crossed the line, not when the
			// stream came back (up to the tick's second later).
			// Its capture stamp is the crossing's too, on the publisher's clock.
			line := w.outageLine(ch, fired[n].Limit)
			fired[n].RecvMonoNs, fired[n].RecvWallNs = min(g.prevMono+line, g.mono), min(g.prevWall+line, g.wall)
			fired[n].CaptureNs = min(g.captureNs-g.dtNs+line, g.captureNs)
		}
	}
	return fired
}

// Add makes c known before its first record, so that Unwatched judges
// the channels a recording has as soon as they are defined.
func (w *Watch) Add(c *logfmt.Channel) { w.channel(c) }

// Silent fires max-outage for the channels whose samples stopped: the
// silence since a channel's latest sample, judged at the latest receive
// stamp of any record (the recorder's heartbeats come every second) or
// Tick, is an outage once it exceeds the check's limit and the outage
// factor × the channel's nominal period, as analyze counts an ended
// outage. It fires once per silence, stamped when the silence crossed
// that line; the channel's next sample ends it. Call it about once a
// second, and at Deadline after a Tick.
func (w *Watch) Silent() []Fired {
	nowMono := w.seenMono
	if len(w.byCheck["max-outage"]) == 0 {
		return nil
	}
	var fired []Fired
	for _, name := range w.names() {
		ch := w.chans[name]
		l, line, judged := w.silenceLine(ch)
		if !judged {
			continue
		}
		gap := nowMono - ch.lastMono
		if gap <= line {
			continue
		}
		value := round3(float64(gap) / 1e6)
		pass, msg := Judge("max-outage", ch.name, liveChecks["max-outage"].unit, true, value, l.Value)
		if pass {
			continue
		}
		ch.silent = true
		fired = append(fired, Fired{Check: "max-outage", Channel: ch.name, Value: value, Limit: l.Value,
			Message: msg + ": its samples stopped", RecvMonoNs: ch.lastMono + line, RecvWallNs: ch.lastWall + line})
	}
	// In the order they crossed the line: the first opens the window.
	slices.SortStableFunc(fired, func(a, b Fired) int { return cmp.Compare(a.RecvMonoNs, b.RecvMonoNs) })
	return fired
}

// Tick tells the watch the time is nowMono (nowWall) on the receive
// clocks and every record received up to then has been given to it: the
// recorder's clock when its queues are empty. Silent then judges the
// silences at that time, so a silence fires as soon as it crosses its
// line (at Deadline), while the stream is still silent, not at the next
// heartbeat or only when the stream comes back (an outage that crossed
// its line less than a heartbeat before the stream came back fired then).
// A time before the latest record's is ignored.
func (w *Watch) Tick(nowMono, nowWall int64) {
	w.seenMono, w.seenWall = max(w.seenMono, nowMono), max(w.seenWall, nowWall)
}

// Deadline is the receive time (monotonic) at which the first silence
// not yet fired would cross its max-outage line, if no sample of its
// channel comes before: the recorder ticks (Tick, Silent) then. ok is
// false when no silence can fire (no max-outage trigger, or no channel
// with a nominal period yet).
func (w *Watch) Deadline() (mono int64, ok bool) {
	if len(w.byCheck["max-outage"]) == 0 {
		return 0, false
	}
	for _, ch := range w.chans {
		_, line, judged := w.silenceLine(ch)
		if !judged {
			continue
		}
		at := ch.lastMono + line + int64(time.Microsecond) // past the line: the silence fails the limit (to the µs, as analyze's outages)
		if !ok || at < mono {
			mono, ok = at, true
		}
	}
	return mono, ok
}

// silenceLine is the max-outage limit of ch and the silence after which
// it fails (outageLine); judged false when ch's silence is not judged
// (fired already, too few samples, no nominal period, no limit).
func (w *Watch) silenceLine(ch *watched) (l Limit, line int64, judged bool) {
	if ch.silent || ch.count < 2 || !applies("max-outage", ch) {
		return l, 0, false
	}
	l, ok := Pick(w.byCheck["max-outage"], ch.name, ch.topic)
	if !ok || ch.stream.Summary().NominalPeriodNs <= 0 {
		return l, 0, false
	}
	return l, w.outageLine(ch, l.Value), true
}

// outageLine is the silence after which ch is in an outage that fails a
// max-outage limit of limitMs: the limit, or --outage-factor × the
// channel's nominal period if that is longer (analyze's outage rule).
func (w *Watch) outageLine(ch *watched, limitMs float64) int64 {
	return max(int64(limitMs*1e6), int64(w.factor*float64(ch.stream.Summary().NominalPeriodNs)))
}

// names are the channels' names, sorted: what fires together fires in
// one order.
func (w *Watch) names() []string {
	out := make([]string, 0, len(w.chans))
	for n := range w.chans {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// channel finds or starts the bookkeeping of c; a new state channel may
// change which state channel a frame channel pairs with (pairState).
func (w *Watch) channel(c *logfmt.Channel) *watched {
	if ch, ok := w.chans[c.Name]; ok {
		return ch
	}
	t := TimingOf(c)
	ch := &watched{name: c.Name, topic: c.Topic, kind: t.Kind, timing: t, internal: c.Transport == logfmt.TransportInternal && c.Schema == codec.SchemaHeartbeat,
		stream: sampler.NewStream(sampler.Config{OutageFactor: w.factor, MaxEvents: 16})}
	w.chans[c.Name] = ch
	if ch.internal {
		return ch
	}
	switch ch.kind {
	case KindState:
		w.states = append(w.states, ch)
		for _, f := range w.frames {
			w.pairFrames(f)
		}
	case KindFrame:
		w.frames = append(w.frames, ch)
		w.pairFrames(ch)
	}
	return ch
}

// pairFrames pairs frame channel f with a state channel by analyze's rule.
func (w *Watch) pairFrames(f *watched) {
	if len(w.states) == 0 {
		return
	}
	best, n := w.states[0], -1
	for _, s := range w.states {
		if k := CommonPrefix(f.name, s.name); k > n {
			best, n = s, k
		}
	}
	if best != f.pair {
		f.pair, f.lag = best, sampler.LiveLag{}
	}
}

// lags checks the frames of f whose lag is now known.
func (w *Watch) lags(fired []Fired, f *watched, settled []sampler.FrameLag) []Fired {
	for _, fl := range settled {
		if f.pair != nil && sampler.AcrossOutage(fl.LagNs, int64(w.factor*float64(f.pair.stream.NominalNs()))) {
			continue // paired with a state from before an outage: no lag, as analyze counts it (lag.across_outage)
		}
		fired = w.check(fired, "max-lag", f, round3(float64(fl.LagNs)/1e6), fl.TNs) // as analyze's lag_ms
	}
	return fired
}

// check judges value of ch against the last limit of check that applies
// to it, and fires when the check fails.
func (w *Watch) check(fired []Fired, check string, ch *watched, value float64, captureNs int64) []Fired {
	if !applies(check, ch) {
		return fired
	}
	l, ok := Pick(w.byCheck[check], ch.name, ch.topic)
	if !ok {
		return fired
	}
	pass, msg := Judge(check, ch.name, liveChecks[check].unit, true, value, l.Value)
	if pass {
		return fired
	}
	return append(fired, Fired{Check: check, Channel: ch.name, Value: value, Limit: l.Value, Message: msg, CaptureNs: captureNs})
}

// Counted reports whether a channel of kind, whose seq comes from
// seqFrom (Timing.SeqFrom), has a counter a skip or restart shows in: not
// a raw channel, nor one whose seq is its record count (a declaration
// without seq=), which max-skips and max-restarts would pass unmeasured.
func Counted(kind, seqFrom string) bool { return kind != KindRaw && seqFrom != FromCount }

// applies reports whether check applies to ch, as analyze applies it.
func applies(check string, ch *watched) bool {
	if ch.internal {
		return false
	}
	switch check {
	case "max-skips", "max-restarts":
		return ch.kind != KindProbe && Counted(ch.kind, ch.timing.SeqFrom)
	case "max-lag":
		return ch.kind == KindFrame && ch.pair != nil
	}
	return ch.kind != KindProbe
}

// Unwatched says which triggers watched nothing: no channel they apply to
// was recorded, or none that their CHANNEL pattern matches. Each line
// begins with the trigger as given (max-lag=45ms), never a flag: a command
// line names its flag.
func (w *Watch) Unwatched() []string {
	var out []string
	for _, t := range w.specs {
		var have []string
		hit := false
		for _, ch := range w.chans {
			if applies(t.Check, ch) {
				have = append(have, ch.name)
				hit = hit || t.Limit.Matches(ch.name, ch.topic)
			}
		}
		if hit {
			continue
		}
		slices.Sort(have)
		what := liveChecks[t.Check].what
		if t.Limit.Channel != "" {
			out = append(out, fmt.Sprintf("%s: %v", t, &keyexpr.NoMatchError{Pattern: t.Limit.Channel, What: what, Have: have}))
		} else {
			out = append(out, fmt.Sprintf("%s watched nothing: the recording has no %s", t, what))
		}
	}
	return out
}
