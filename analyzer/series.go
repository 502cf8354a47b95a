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
	if b := s.bin(x.TNs); b != nil {
		b.n++
		b.interval(ev)
	}
}

// bin is the bin of capture time t, nil outside the bins kept.
func (s *series) bin(t int64) *bin {
	if t < s.origin {
		return nil
	}
	i := (t - s.origin) / s.width
	if i >= int64(4*s.bins) { // a later file far past the first span: stop growing
		return nil
	}
	for int64(len(s.data)) <= i {
		s.data = append(s.data, bin{})
	}
	return &s.data[i]
}

// interval accounts for the interval that ended with the sample ev is
// of, if it has one.
func (b *bin) interval(ev sampler.Event) {
	if ev.Kind == sampler.Next || ev.Kind == sampler.Skip || ev.Kind == sampler.Restart {
		b.interval2(ev.DtNs, ev.DtNs, 1)
	}
}

// interval2 accounts for n intervals from lo to hi.
func (b *bin) interval2(lo, hi int64, n uint32) {
	if n == 0 {
		return
	}
	if b.dts == 0 || lo < b.minDt {
		b.minDt = lo
	}
	if b.dts == 0 || hi > b.maxDt {
		b.maxDt = hi
	}
	b.dts += n
}

// merge adds o, the series of the samples after s's (a later part of
// the log, with the same bins), whose first sample had event ev after
// s's last (sampler.Stream.Merge): o took it for a stream's first.
func (s *series) merge(o *series, first sampler.Sample, ev sampler.Event) {
	if o.width == 0 {
		return // no sample
	}
	if s.width == 0 {
		s.origin, s.width = o.origin, o.width
	}
	for i := range o.data {
		if b := s.bin(s.start(i)); b != nil {
			b.n += o.data[i].n
			b.interval2(o.data[i].minDt, o.data[i].maxDt, o.data[i].dts)
		}
	}
	if b := s.bin(first.TNs); b != nil {
		b.interval(ev)
	}
}

// start is the capture time where bin i begins.
func (s *series) start(i int) int64 { return s.origin + int64(i)*s.width }
