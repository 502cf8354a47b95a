package sampler

import (
	"math"
	"sort"
)

// Probe is one clock-sync exchange: T1 sent and T4 received on the local
// (recorder) clock, T2 received and T3 sent on the remote (simulator) clock.
type Probe struct{ T1, T2, T3, T4 int64 }

// Offset is remote minus local: ((T2-T1)+(T3-T4))/2.
func (p Probe) Offset() int64 { return ((p.T2 - p.T1) + (p.T3 - p.T4)) / 2 }

// RTT is (T4-T1)-(T3-T2): the round trip without the remote's processing.
func (p Probe) RTT() int64 { return (p.T4 - p.T1) - (p.T3 - p.T2) }

// ClockEstimate is the offset between two clocks from a set of probes.
type ClockEstimate struct {
	Probes   int
	Used     int   // the lowest-RTT half (at least one)
	OffsetNs int64 // mean offset of the used probes: add to a local stamp to get remote time
	// RefNs is the mean T1 of the used probes: the local time OffsetNs
	// belongs to, through which the drift line passes.
	RefNs    int64
	RTTNs    int64 // mean RTT of the used probes
	MinRTTNs int64
	MaxRTTNs int64
	// DriftPPM is the slope of offset over local time, in parts per million,
	// from a least-squares fit over the used probes; valid only when they span
	// at least MinDriftSpanNs.
	DriftPPM   float64
	DriftValid bool
}

// MinDriftSpanNs is the shortest probe span over which drift is reported.
const MinDriftSpanNs = 10e9

// EstimateClock keeps the lowest-RTT half of the probes (the ones least
// disturbed by queueing) and averages their offsets, as in NTP-style
// software sync. Probes with a negative RTT (impossible unless stamps are
// broken) are ignored.
func EstimateClock(probes []Probe) ClockEstimate {
	var ok []Probe
	for _, p := range probes {
		if p.RTT() >= 0 {
			ok = append(ok, p)
		}
	}
	est := ClockEstimate{Probes: len(probes)}
	if len(ok) == 0 {
		return est
	}
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].RTT() < ok[j].RTT() })
	est.MinRTTNs, est.MaxRTTNs = ok[0].RTT(), ok[len(ok)-1].RTT()
	used := ok[:max(1, len(ok)/2)]
	est.Used = len(used)
	var off, rtt, ref float64
	for _, p := range used {
		off += float64(p.Offset())
		rtt += float64(p.RTT())
		ref += float64(p.T1 - used[0].T1) // relative: unix ns would lose precision in a float sum
	}
	est.OffsetNs = int64(math.Round(off / float64(len(used))))
	est.RTTNs = int64(math.Round(rtt / float64(len(used))))
	est.RefNs = used[0].T1 + int64(math.Round(ref/float64(len(used))))

	// Drift: least squares of offset against T1, relative to the first T1.
	lo, hi := used[0].T1, used[0].T1
	for _, p := range used {
		lo, hi = min(lo, p.T1), max(hi, p.T1)
	}
	if len(used) >= 3 && hi-lo >= MinDriftSpanNs {
		var sx, sy, sxx, sxy float64
		for _, p := range used {
			x, y := float64(p.T1-lo), float64(p.Offset())
			sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
		}
		n := float64(len(used))
		if d := n*sxx - sx*sx; d > 0 {
			est.DriftPPM = (n*sxy - sx*sy) / d * 1e6
			est.DriftValid = true
		}
	}
	return est
}
