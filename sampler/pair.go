package sampler

import (
	"math"
	"slices"
	"sort"
)

// LagConfig tunes frame-to-state pairing.
type LagConfig struct {
	// ToleranceNs: a frame whose lag to the latest state captured at or before
	// it exceeds this is rejected, as a fusing controller would.
	ToleranceNs int64
	// WindowNs and MaxStates bound LagStream's memory (see there); Lag
	// keeps every state it is given.
	WindowNs  int64
	MaxStates int
	// OutageNs, when set, is the state stream's outage threshold at the
	// time a frame is paired (OutageFactor × its nominal period so far,
	// as Stream judges outages; 0 while unknown). A frame whose latest
	// state is older than that was captured while the state stream was in
	// an outage (or after it stopped): its pairing with that stale state
	// measures the outage, not lag. It is counted in AcrossOutage, listed
	// with the gap it spans, and kept out of every lag figure and of
	// Rejected. Without OutageNs every pairing is lag.
	OutageNs func() int64
	// Deferred leaves the outage judging to the end (LagStream.Judge,
	// with the threshold of the whole state stream), so that every
	// frame is judged by one threshold whatever the order the log was
	// read in (in parts, on several cores). OutageNs is then a guess:
	// a pairing whose lag is at most half of it is counted as lag at
	// once, and the others (a frame in a gap of the state stream, or
	// before the guess is known) are held, at most MaxHeld of them,
	// to be judged at the end. Judge says whether the guess was good
	// enough (Valid): if it was not, pair the log again with the
	// threshold known.
	Deferred bool
	// Part says that the stream accounts for a later part of a log,
	// read apart from the part before it (on another core), for
	// LagStream.Merge: it keeps its first samples (its head, about two
	// windows of capture time) instead of pairing the frames among
	// them, for the stream of the part before to pair.
	Part bool
	// OnPair, when set, is called with each frame's pairing as it is
	// made (for plots over time); a held pairing, as it is judged.
	OnPair func(Pairing)
}

// MaxHeld bounds the pairings a Deferred LagSummary holds for judging
// (56 bytes each): beyond it, Valid is false.
const MaxHeld = 1 << 16

// Pairing is one frame's pairing with the state stream.
type Pairing struct {
	TNs          int64 // the frame's capture stamp
	Paired       bool  // a state was captured at or before it
	LatestNs     int64 // its lag to the latest such state
	DelayNs      int64 // its delay against the state timeline (Interpolated), if HasDelay
	HasDelay     bool
	Rejected     bool // LatestNs above the tolerance
	AcrossOutage bool // the latest state is from before a state outage (see LagConfig.OutageNs)
}

// LagOutage is a gap of the state stream that frames were paired across:
// from the latest state before it to the first state after it.
type LagOutage struct {
	StateNs  int64 // the latest state before the gap
	NextNs   int64 // the first state after it, if HasNext
	HasNext  bool  // false: no state came after it (the stream stopped)
	Frames   uint64
	MaxLagNs int64 // the largest latest-state lag of those frames
}

// MaxLagOutages bounds LagSummary.Outages (AcrossOutage counts them all).
const MaxLagOutages = 1000

// Stamped is what pairing needs of one sample: its capture stamp (simulator
// clock) and its receive stamp (recorder clock; 0 when unknown).
type Stamped struct {
	TNs    int64
	RecvNs int64
}

// LagSummary is the frame-to-state lag of one frame stream against one state
// stream: lag = frame.t_ns - state.t_ns, both capture stamps on the
// simulator's clock.
type LagSummary struct {
	Frames   uint64
	Unpaired uint64 // frames captured before the first state
	Rejected uint64 // latest-lag above tolerance (among the lag measurements)
	// AcrossOutage counts the frames paired with a state from before an
	// outage of the state stream (LagConfig.OutageNs); Outages lists the
	// gaps they span, in the order first met (at most MaxLagOutages).
	// They are in no histogram and not in Rejected.
	AcrossOutage uint64
	Outages      []LagOutage
	Latest       Histogram // lag to the latest state at or before the frame (≥ 0)
	Nearest      Histogram // lag to the nearest state in capture time (signed)
	// Interpolated is the frame's receive stamp minus the receive time of
	// the state timeline interpolated at the frame's capture stamp: how
	// much later the frame arrived than a state captured at the same
	// instant. Latest and Nearest cannot exceed the state period, whatever
	// the frames' delay; this can. Frames outside the states' capture span,
	// or without receive stamps, are left out.
	Interpolated Histogram

	// Deferred judging (LagConfig.Deferred): the pairings held, and the
	// thresholds the pairings already judged hold for.
	held     []heldPairing
	overflow bool  // more than MaxHeld pairings to hold
	lagMax   int64 // the largest latest lag counted as lag, if hasLag
	hasLag   bool
	crossMin int64 // the smallest counted across an outage, if hasCross
	hasCross bool
}

// heldPairing is a frame's pairing whose outage is not yet judged:
// what either judgement needs.
type heldPairing struct {
	frame    Stamped
	latest   int64
	nearest  int64
	delay    int64 // if hasDelay
	stateNs  int64 // the latest state's capture stamp
	nextNs   int64 // the next state's, if hasNext
	hasNext  bool
	hasDelay bool
}

// RejectedFraction is Rejected over the lag measurements: paired frames
// but those paired across an outage.
func (l *LagSummary) RejectedFraction() float64 {
	paired := l.Frames - l.Unpaired - l.AcrossOutage
	if paired == 0 {
		return 0
	}
	return float64(l.Rejected) / float64(paired)
}

// Lag pairs every frame with the states by capture stamp. states must be
// sorted by TNs (SortStamped); frames may be in any order. Arrival order
// plays no part: only capture stamps pair samples, and receive stamps only
// measure (Interpolated).
func Lag(states, frames []Stamped, cfg LagConfig) *LagSummary {
	l := &LagSummary{}
	for _, f := range frames {
		l.pair(states, f, &cfg)
	}
	return l
}

// pair accounts for frame f against states (sorted by TNs, and holding
// every state that can be f's latest or next one).
func (l *LagSummary) pair(states []Stamped, f Stamped, cfg *LagConfig) {
	l.Frames++
	latest, i, ok := latestLag(states, f.TNs)
	if !ok {
		l.Unpaired++
		if len(states) > 0 {
			l.Nearest.Add(f.TNs - states[0].TNs)
		}
		if cfg.OnPair != nil {
			cfg.OnPair(Pairing{TNs: f.TNs})
		}
		return
	}
	h := heldPairing{frame: f, latest: latest, nearest: latest, stateNs: states[i-1].TNs}
	if i < len(states) {
		h.nextNs, h.hasNext = states[i].TNs, true
		if states[i].TNs-f.TNs < latest {
			h.nearest = f.TNs - states[i].TNs
		}
	}
	var t int64 // no threshold: every pairing is lag
	if cfg.OutageNs != nil {
		t = cfg.OutageNs()
	}
	if cfg.Deferred && cfg.OutageNs != nil && (t <= 0 || latest > t/2) {
		l.hold(&h, states, i)
		return
	}
	l.judge(&h, t, cfg, states, i)
}

// hold keeps pairing h (of the frame after states[i-1]) for Judge.
func (l *LagSummary) hold(h *heldPairing, states []Stamped, i int) {
	if len(l.held) >= MaxHeld {
		l.overflow = true
		return
	}
	if recv, ok := recvAt(states, i, h.frame.TNs); ok && h.frame.RecvNs != 0 {
		h.delay, h.hasDelay = h.frame.RecvNs-recv, true
	}
	l.held = append(l.held, *h)
}

// judge accounts for pairing h by outage threshold t: across the
// outage, or lag. states and i, when states is not nil, are where h
// was paired (its delay is interpolated there, if it is lag).
func (l *LagSummary) judge(h *heldPairing, t int64, cfg *LagConfig, states []Stamped, i int) {
	if !AcrossOutage(h.latest, t) {
		if states != nil {
			if recv, ok := recvAt(states, i, h.frame.TNs); ok && h.frame.RecvNs != 0 {
				h.delay, h.hasDelay = h.frame.RecvNs-recv, true
			}
		}
		l.countLag(h, cfg)
		return
	}
	if !l.hasCross || h.latest < l.crossMin {
		l.crossMin, l.hasCross = h.latest, true
	}
	l.acrossOutage(h)
	if cfg.OnPair != nil {
		cfg.OnPair(Pairing{TNs: h.frame.TNs, Paired: true, LatestNs: h.latest, AcrossOutage: true})
	}
}

// countLag counts pairing h as a lag measurement (h.delay set).
func (l *LagSummary) countLag(h *heldPairing, cfg *LagConfig) {
	p := Pairing{TNs: h.frame.TNs, Paired: true, LatestNs: h.latest, DelayNs: h.delay, HasDelay: h.hasDelay}
	if !l.hasLag || h.latest > l.lagMax {
		l.lagMax, l.hasLag = h.latest, true
	}
	l.Latest.Add(h.latest)
	l.Nearest.Add(h.nearest)
	if h.latest > cfg.ToleranceNs {
		l.Rejected++
		p.Rejected = true
	}
	if h.hasDelay {
		l.Interpolated.Add(h.delay)
	}
	if cfg.OnPair != nil {
		cfg.OnPair(p)
	}
}

// valid says whether the pairings judged so far stand with outage
// threshold t: none held beyond MaxHeld, every lag at most t and every
// pairing across an outage above it.
func (l *LagSummary) valid(t int64) bool {
	return !l.overflow && !(l.hasLag && AcrossOutage(l.lagMax, t)) && !(l.hasCross && !AcrossOutage(l.crossMin, t))
}

// judgeHeld judges the pairings held by threshold t, in the order they
// were made.
func (l *LagSummary) judgeHeld(t int64, cfg *LagConfig) {
	for i := range l.held {
		l.judge(&l.held[i], t, cfg, nil, 0)
	}
	l.held = l.held[:0]
}

// merge appends o, the summary of the frames paired after l's (a
// later part of the log); both Deferred, with nothing judged across an
// outage yet.
func (l *LagSummary) merge(o *LagSummary) {
	l.Frames += o.Frames
	l.Unpaired += o.Unpaired
	l.Rejected += o.Rejected
	l.Latest.absorb(&o.Latest)
	l.Nearest.absorb(&o.Nearest)
	l.Interpolated.absorb(&o.Interpolated)
	n := min(len(o.held), MaxHeld-len(l.held))
	l.held = append(l.held, o.held[:n]...)
	l.overflow = l.overflow || o.overflow || n < len(o.held)
	if o.hasLag && (!l.hasLag || o.lagMax > l.lagMax) {
		l.lagMax, l.hasLag = o.lagMax, true
	}
}

// AcrossOutage reports whether a frame with latest-state lag latestNs
// was paired across an outage of the state stream whose outage threshold
// is outageNs (0: unknown): a lag above it means the state stream had
// been silent that long when the frame was captured, an outage by
// Stream's own rule (the gap it is in is at least as long as the lag).
// Analyze's pairing and record's live max-lag check both apply it.
func AcrossOutage(latestNs, outageNs int64) bool { return outageNs > 0 && latestNs > outageNs }

// acrossOutage accounts for pairing h, across the gap after its latest
// state.
func (l *LagSummary) acrossOutage(h *heldPairing) {
	l.AcrossOutage++
	g := LagOutage{StateNs: h.stateNs, NextNs: h.nextNs, HasNext: h.hasNext}
	latestNs := h.latest
	for k := len(l.Outages) - 1; k >= 0 && k >= len(l.Outages)-8; k-- { // frames of one gap arrive together
		if o := &l.Outages[k]; o.StateNs == g.StateNs {
			o.Frames++
			o.MaxLagNs = max(o.MaxLagNs, latestNs)
			if g.HasNext && (!o.HasNext || g.NextNs < o.NextNs) {
				o.NextNs, o.HasNext = g.NextNs, true
			}
			return
		}
	}
	if len(l.Outages) < MaxLagOutages {
		g.Frames, g.MaxLagNs = 1, latestNs
		l.Outages = append(l.Outages, g)
	}
}

// latestLag is the lag of a frame captured at t: t minus the capture
// stamp of the latest state captured at or before it (states sorted by
// TNs), with the index of the first state captured after t; ok is false
// when no state was captured at or before t.
func latestLag(states []Stamped, t int64) (lag int64, after int, ok bool) {
	i := sort.Search(len(states), func(i int) bool { return states[i].TNs > t })
	if i == 0 {
		return 0, 0, false
	}
	return t - states[i-1].TNs, i, true
}

// recvAt interpolates the states' receive stamps at capture time t, between
// states[i-1] (captured at or before t) and states[i] (after t).
func recvAt(states []Stamped, i int, t int64) (int64, bool) {
	s0 := states[i-1]
	if s0.RecvNs == 0 {
		return 0, false
	}
	if s0.TNs == t {
		return s0.RecvNs, true
	}
	if i == len(states) || states[i].RecvNs == 0 {
		return 0, false // after the last state: no timeline to interpolate
	}
	s1 := states[i]
	frac := float64(t-s0.TNs) / float64(s1.TNs-s0.TNs)
	return s0.RecvNs + int64(math.Round(frac*float64(s1.RecvNs-s0.RecvNs))), true
}

// SortStamped sorts by capture stamp in place (states arrive nearly sorted).
func SortStamped(ts []Stamped) {
	cmp := func(a, b Stamped) int {
		switch {
		case a.TNs < b.TNs:
			return -1
		case a.TNs > b.TNs:
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(ts, cmp) {
		slices.SortStableFunc(ts, cmp)
	}
}
