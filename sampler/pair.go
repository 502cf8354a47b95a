package sampler

import "sort"

// LagConfig tunes frame-to-state pairing.
type LagConfig struct {
	// ToleranceNs: a frame whose lag to the latest state captured at or before
	// it exceeds this is rejected, as a fusing controller would.
	ToleranceNs int64
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
}

// RejectedFraction is Rejected over paired frames.
func (l *LagSummary) RejectedFraction() float64 {
	paired := l.Frames - l.Unpaired
	if paired == 0 {
		return 0
	}
	return float64(l.Rejected) / float64(paired)
}

// Lag pairs every frame capture stamp with the states' capture stamps.
// states must be sorted ascending (SortStamps); frames may be in any order.
// Arrival order plays no part: only capture stamps pair samples.
func Lag(states, frames []int64, cfg LagConfig) *LagSummary {
	l := &LagSummary{}
	for _, f := range frames {
		l.Frames++
		i := sort.Search(len(states), func(i int) bool { return states[i] > f }) // first state after f
		if i == 0 {
			l.Unpaired++
			if len(states) > 0 {
				l.Nearest.Add(f - states[0])
			}
			continue
		}
		latest := f - states[i-1]
		l.Latest.Add(latest)
		nearest := latest
		if i < len(states) && states[i]-f < latest {
			nearest = f - states[i]
		}
		l.Nearest.Add(nearest)
		if latest > cfg.ToleranceNs {
			l.Rejected++
		}
	}
	return l
}

// SortStamps sorts capture stamps in place (states arrive nearly sorted).
func SortStamps(ts []int64) {
	if !sort.SliceIsSorted(ts, func(i, j int) bool { return ts[i] < ts[j] }) {
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	}
}
