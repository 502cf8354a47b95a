package analyzer

import "github.com/vrlog/vrlog/sampler"

// series is a channel's history reduced to fixed-width capture-time bins:
// per bin the number of samples and the smallest and largest capture
// interval that ended in it. Enough to plot intervals and rate over time
// for a log of any length in bounded memory (HTML report).
type series struct {
	bins   int
	origin int64 // capture time of bin 0
	width  int64 // ns per bin
	data   []bin
}

type bin struct {
	n            uint32 // samples captured in the bin
	dts          uint32 // intervals that ended in it
	minDt, maxDt int64
}

func newSeries(bins int) *series { return &series{bins: bins} }

// add accounts for sample s. span is the session's capture range as known
// from the index when the first sample arrives; it fixes the bins.
func (s *series) add(span [2]int64, x sampler.Sample, ev sampler.Event) {
	if s.width == 0 {
		s.origin = span[0]
		s.width = max((span[1]-span[0])/int64(s.bins), 1)
		if span == [2]int64{} {
			s.origin, s.width = x.TNs, 1e6
		}
	}
	if x.TNs < s.origin {
		return
	}
	i := (x.TNs - s.origin) / s.width
	if i >= int64(4*s.bins) { // a later file far past the first span: stop growing
		return
	}
	for int64(len(s.data)) <= i {
		s.data = append(s.data, bin{})
	}
	b := &s.data[i]
	b.n++
	if ev.Kind == sampler.Next || ev.Kind == sampler.Skip || ev.Kind == sampler.Restart {
		if b.dts == 0 || ev.DtNs < b.minDt {
			b.minDt = ev.DtNs
		}
		if b.dts == 0 || ev.DtNs > b.maxDt {
			b.maxDt = ev.DtNs
		}
		b.dts++
	}
}

// start is the capture time where bin i begins.
func (s *series) start(i int) int64 { return s.origin + int64(i)*s.width }
