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
}

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
	Unpaired uint64    // frames captured before the first state
	Rejected uint64    // latest-lag above tolerance
	Latest   Histogram // lag to the latest state at or before the frame (≥ 0)
	Nearest  Histogram // lag to the nearest state in capture time (signed)
	// Interpolated is the frame's receive stamp minus the receive time of
	// the state timeline interpolated at the frame's capture stamp: how
	// much later the frame arrived than a state captured at the same
	// instant. Latest and Nearest cannot exceed the state period, whatever
	// the frames' delay; this can. Frames outside the states' capture span,
	// or without receive stamps, are left out.
	Interpolated Histogram
}

// RejectedFraction is Rejected over paired frames.
func (l *LagSummary) RejectedFraction() float64 {
	paired := l.Frames - l.Unpaired
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
		l.pair(states, f, cfg.ToleranceNs)
	}
	return l
}

// pair accounts for frame f against states (sorted by TNs, and holding
// every state that can be f's latest or next one).
func (l *LagSummary) pair(states []Stamped, f Stamped, toleranceNs int64) {
	l.Frames++
	latest, i, ok := latestLag(states, f.TNs)
	if !ok {
		l.Unpaired++
		if len(states) > 0 {
			l.Nearest.Add(f.TNs - states[0].TNs)
		}
		return
	}
	l.Latest.Add(latest)
	nearest := latest
	if i < len(states) && states[i].TNs-f.TNs < latest {
		nearest = f.TNs - states[i].TNs
	}
	l.Nearest.Add(nearest)
	if latest > toleranceNs {
		l.Rejected++
	}
	if recv, ok := recvAt(states, i, f.TNs); ok && f.RecvNs != 0 {
		l.Interpolated.Add(f.RecvNs - recv)
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
