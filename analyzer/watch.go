package analyzer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// A Trigger is one of analyze's checks watched live, as record
// --trigger CHECK=[CHANNEL=]VALUE watches it: the same check, the same
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
	"max-skips":    {"", false, whatStamped},
	"max-restarts": {"", false, whatStamped},
	"max-outage":   {"ms", true, whatData},
	"max-lag":      {"ms", true, whatPaired},
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
	v := fmtNum(t.Limit.Value)
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
	// CaptureNs is the capture stamp of the sample that showed it.
	CaptureNs int64
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
}

// watched is one channel's live bookkeeping.
type watched struct {
	name, topic, kind string
	stream            *sampler.Stream
	count             uint64
	skipped, restarts uint64
	pub               string
	pair              *watched        // frames: the state channel they pair with
	lag               sampler.LiveLag // frames: paired with pair's states
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
// recorder decoded) and returns the triggers it fired.
func (w *Watch) Record(c *logfmt.Channel, r *logfmt.Record) []Fired {
	ch := w.channel(c)
	if ch.kind == KindProbe {
		return nil
	}
	ch.count++
	s, ok := storedSample(ch.kind, r, ch.count)
	if !ok {
		return nil
	}
	if string(r.PublisherID) != ch.pub {
		ch.pub = string(r.PublisherID)
	}
	s.Publisher = ch.pub
	ev := ch.stream.Add(s)
	var fired []Fired
	switch ev.Kind {
	case sampler.Skip:
		ch.skipped += ev.Skipped
		fired = w.check(fired, "max-skips", ch, float64(ch.skipped), s.TNs)
	case sampler.Restart:
		ch.restarts++
		fired = w.check(fired, "max-restarts", ch, float64(ch.restarts), s.TNs)
	}
	if ev.Outage {
		fired = w.check(fired, "max-outage", ch, round3(float64(ev.DtNs)/1e6), s.TNs) // to the µs, as analyze's outages
	}
	if ev.Kind == sampler.Duplicate || ev.Kind == sampler.Reorder {
		return fired
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
	return fired
}

// channel finds or starts the bookkeeping of c; a new state channel may
// change which state channel a frame channel pairs with (pairState).
func (w *Watch) channel(c *logfmt.Channel) *watched {
	if ch, ok := w.chans[c.Name]; ok {
		return ch
	}
	ch := &watched{name: c.Name, topic: c.Topic, kind: kindOf(c.Schema),
		stream: sampler.NewStream(sampler.Config{OutageFactor: w.factor, MaxEvents: 16})}
	w.chans[c.Name] = ch
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
		if k := commonPrefix(f.name, s.name); k > n {
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
	l, ok := pick(w.byCheck[check], subject{ch.name, ch.topic, value})
	if !ok {
		return fired
	}
	pass, msg := judge(check, ch.name, liveChecks[check].unit, true, value, l.Value)
	if pass {
		return fired
	}
	return append(fired, Fired{Check: check, Channel: ch.name, Value: value, Limit: l.Value, Message: msg, CaptureNs: captureNs})
}

// applies reports whether check applies to ch, as analyze applies it.
func applies(check string, ch *watched) bool {
	switch check {
	case "max-skips", "max-restarts":
		return ch.kind != KindProbe && ch.kind != KindRaw
	case "max-lag":
		return ch.kind == KindFrame && ch.pair != nil
	}
	return ch.kind != KindProbe
}

// Unwatched says which triggers watched nothing: no channel they apply to
// was recorded, or none that their CHANNEL pattern matches.
func (w *Watch) Unwatched() []string {
	var out []string
	for _, t := range w.specs {
		var have []string
		hit := false
		for _, ch := range w.chans {
			if applies(t.Check, ch) {
				have = append(have, ch.name)
				hit = hit || t.Limit.matches(ch.name, ch.topic)
			}
		}
		if hit {
			continue
		}
		slices.Sort(have)
		what := liveChecks[t.Check].what
		if t.Limit.Channel != "" {
			out = append(out, fmt.Sprintf("--trigger %s: %v", t, &keyexpr.NoMatchError{Pattern: t.Limit.Channel, What: what, Have: have}))
		} else {
			out = append(out, fmt.Sprintf("--trigger %s watched nothing: the recording has no %s", t, what))
		}
	}
	return out
}
