package analyzer

import "github.com/vrlog/vrlog/sampler"

// series is a channel's capture-interval history reduced to fixed-width
// time bins (the largest interval per bin), plus the positions of skips and
// restarts: enough to plot dt over time for a log of any length in bounded
// memory.
type series struct {
	bins     int
	origin   int64 // capture time of bin 0
	width    int64 // ns per bin
	maxDt    []int64
	skips    []int64 // capture stamps of samples after a seq gap (capped)
	restarts []int64
}

const maxMarks = 2000

func newSeries(bins int) *series { return &series{bins: bins} }

func (s *series) add(span [2]int64, t int64, ev sampler.Event) {
	if s.width == 0 {
		s.origin = span[0]
		s.width = max((span[1]-span[0])/int64(s.bins), 1)
		if span == [2]int64{} {
			s.origin, s.width = t, 1e6
		}
	}
	if t < s.origin {
		return
	}
	i := (t - s.origin) / s.width
	if i >= int64(4*s.bins) { // a later file far past the first span: stop growing
		return
	}
	for int64(len(s.maxDt)) <= i {
		s.maxDt = append(s.maxDt, -1)
	}
	if ev.Kind != sampler.First && ev.DtNs > s.maxDt[i] {
		s.maxDt[i] = ev.DtNs
	}
	switch ev.Kind {
	case sampler.Skip:
		if len(s.skips) < maxMarks {
			s.skips = append(s.skips, t)
		}
	case sampler.Restart:
		if len(s.restarts) < maxMarks {
			s.restarts = append(s.restarts, t)
		}
	}
}
