package analyzer

import "github.com/vrlog/vrlog/sampler"

// lagSeries is a frame channel's pairings with its state channel reduced
// to the capture-time bins of its series (HTML report): per bin the
// frames' smallest and largest delay against the state timeline, and how
// many were rejected or paired across a state outage.
type lagSeries struct {
	span         *[2]int64 // the session's capture range as known when the first frame is paired
	origin       int64
	width        int64
	bins         int
	data         []lagBin
	across, rej  uint64
	delays, none uint64 // frames with a delay; paired frames without (outside the states' receive timeline)
}

type lagBin struct {
	n                  uint32 // frames with a delay
	rejected, across   uint32
	minDelay, maxDelay int64
}

func newLagSeries(bins int, span *[2]int64) *lagSeries { return &lagSeries{bins: bins, span: span} }

// add accounts for one frame's pairing.
func (s *lagSeries) add(p sampler.Pairing) {
	if !p.Paired {
		return
	}
	if s.width == 0 {
		s.origin, s.width = s.span[0], max((s.span[1]-s.span[0])/int64(s.bins), 1)
		if *s.span == [2]int64{} {
			s.origin, s.width = p.TNs, 1e6
		}
	}
	if p.TNs < s.origin {
		return
	}
	i := (p.TNs - s.origin) / s.width
	if i >= int64(4*s.bins) {
		return
	}
	for int64(len(s.data)) <= i {
		s.data = append(s.data, lagBin{})
	}
	b := &s.data[i]
	switch {
	case p.AcrossOutage:
		b.across++
		s.across++
		return
	case p.Rejected:
		b.rejected++
		s.rej++
	}
	if !p.HasDelay {
		s.none++
		return
	}
	if b.n == 0 || p.DelayNs < b.minDelay {
		b.minDelay = p.DelayNs
	}
	if b.n == 0 || p.DelayNs > b.maxDelay {
		b.maxDelay = p.DelayNs
	}
	b.n++
	s.delays++
}

// merge adds o, the pairings after s's (a later part of the log, with
// the same bins).
func (s *lagSeries) merge(o *lagSeries) {
	if o.width == 0 {
		return // no pairing
	}
	if s.width == 0 {
		s.origin, s.width = o.origin, o.width
	}
	s.across += o.across
	s.rej += o.rej
	s.delays += o.delays
	s.none += o.none
	for len(s.data) < len(o.data) {
		s.data = append(s.data, lagBin{})
	}
	for i, x := range o.data {
		b := &s.data[i]
		b.rejected += x.rejected
		b.across += x.across
		if x.n > 0 {
			if b.n == 0 || x.minDelay < b.minDelay {
				b.minDelay = x.minDelay
			}
			if b.n == 0 || x.maxDelay > b.maxDelay {
				b.maxDelay = x.maxDelay
			}
			b.n += x.n
		}
	}
}

// start is the capture time where bin i begins.
func (s *lagSeries) start(i int) int64 { return s.origin + int64(i)*s.width }
