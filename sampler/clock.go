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
	// DriftPPM is the slope of offset over local time, in parts per
	// million, from a least-squares fit over the used probes (0 with fewer
	// than 3 of them). DriftCIPPM is the half-width of its 95 % confidence
	// interval, from the fit's residuals and Student's t with Used-2 degrees
	// of freedom (valid when HasDriftCI). DriftValid: the interval is at
	// most MaxDriftCIPPM wide on each side, so the slope is drift, not the
	// probes' noise.
	DriftPPM   float64
	DriftCIPPM float64
	HasDriftCI bool
	DriftValid bool
}

// MaxDriftCIPPM is the widest 95 % confidence half-width (ppm) at which
// drift is reported as valid. Crystal oscillators drift by some ±10..50 ppm;
// a figure known to ±5 ppm tells such drift from none.
const MaxDriftCIPPM = 5.0

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
	est.drift(used)
	return est
}

// drift fits offset = a + b·T1 by least squares over the used probes and
// bounds b from the residuals: SE(b) = sqrt(Σr²/(n-2) / Σ(x-x̄)²).
func (est *ClockEstimate) drift(used []Probe) {
	n := len(used)
	if n < 3 {
		return
	}
	t0 := used[0].T1
	var mx, my float64
	for _, p := range used {
		mx += float64(p.T1 - t0)
		my += float64(p.Offset())
	}
	mx, my = mx/float64(n), my/float64(n)
	var sxx, sxy float64
	for _, p := range used {
		dx, dy := float64(p.T1-t0)-mx, float64(p.Offset())-my
		sxx, sxy = sxx+dx*dx, sxy+dx*dy
	}
	if sxx <= 0 {
		return // every probe at one instant: no slope
	}
	b := sxy / sxx
	var ss float64
	for _, p := range used {
		r := float64(p.Offset()) - (my + b*(float64(p.T1-t0)-mx))
		ss += r * r
	}
	se := math.Sqrt(ss / float64(n-2) / sxx)
	est.DriftPPM = b * 1e6
	est.DriftCIPPM = studentT975(n-2) * se * 1e6
	est.HasDriftCI = true
	est.DriftValid = est.DriftCIPPM <= MaxDriftCIPPM
}

// studentT975 is the 97.5 % quantile of Student's t with df degrees of
// freedom: exact to 3 decimals up to 30, then the Cornish-Fisher expansion.
func studentT975(df int) float64 {
	table := [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df >= 1 && df <= len(table) {
		return table[df-1]
	}
	const z = 1.959964
	d := float64(df)
	return z + (z*z*z+z)/(4*d) + (5*z*z*z*z*z+16*z*z*z+3*z)/(96*d*d)
}
