package sampler

import (
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

const ms = int64(1e6)

// feed adds samples at a 40 ms period with the given seqs and capture times.
func feed(s *Stream, seqs []uint64, ts []int64) []Event {
	var evs []Event
	for i := range seqs {
		evs = append(evs, s.Add(Sample{Seq: seqs[i], TNs: ts[i], RecvWallNs: ts[i] + 2*ms}))
	}
	return evs
}

func TestStreamSkipsRestartsOutages(t *testing.T) {
	s := NewStream(Config{})
	t0 := int64(1_700_000_000_000_000_000)
	var seqs []uint64
	var ts []int64
	// 0..145 at 25 Hz with 312 missing (1 skipped) and 200..202 missing (3).
	for i := uint64(0); i <= 145; i++ {
		if i == 12 || i >= 100 && i <= 102 {
			continue
		}
		seqs, ts = append(seqs, i), append(ts, t0+int64(i)*40*ms)
	}
	// Outage: the simulator restarts 15.93 s later, seq back to 0.
	restartAt := ts[len(ts)-1] + 15_930*ms
	for i := uint64(0); i < 50; i++ {
		seqs, ts = append(seqs, i), append(ts, restartAt+int64(i)*40*ms)
	}
	evs := feed(s, seqs, ts)
	sum := s.Summary()
	if sum.Skipped != 4 || sum.SkipEvents != 2 {
		t.Fatalf("skipped %d in %d gaps, want 4 in 2", sum.Skipped, sum.SkipEvents)
	}
	if sum.Skips[0].LastSeq != 11 || sum.Skips[0].Seq != 13 || sum.Skips[1].Skipped != 3 {
		t.Fatalf("skips %+v", sum.Skips)
	}
	if sum.RestartCount != 1 || sum.Restarts[0].LastSeq != 145 || sum.Restarts[0].Seq != 0 ||
		sum.Restarts[0].AfterTNs-sum.Restarts[0].BeforeTNs != 15_930*ms {
		t.Fatalf("restarts %+v", sum.Restarts)
	}
	// Outages: the 160 ms gap of 3 skipped samples (4× nominal) and the restart.
	if len(sum.Outages) != 2 || sum.Outages[0].Len() != 160*ms || !sum.Outages[1].Restart || sum.Outages[1].Len() != 15_930*ms {
		t.Fatalf("outages %+v", sum.Outages)
	}
	if d := sum.NominalPeriodNs - 40*ms; d < -40*ms/64 || d > 40*ms/64 {
		t.Fatalf("nominal %d", sum.NominalPeriodNs)
	}
	if evs[12].Kind != Skip || evs[12].Skipped != 1 || evs[12].DtNs != 80*ms {
		t.Fatalf("event at the first skip: %+v", evs[12])
	}
	// A skip of 3 is a 160 ms gap: 4× nominal, an outage by the default factor.
	var live int
	for _, e := range evs {
		if e.Outage {
			live++
		}
	}
	if live != 2 {
		t.Fatalf("live outage events %d, want 2 (the 160 ms gap and the restart)", live)
	}
	if sum.Duplicates != 0 || sum.Reorders != 0 {
		t.Fatalf("dups %d reorders %d", sum.Duplicates, sum.Reorders)
	}
	if p50 := s.Latency.Quantile(0.5); p50 < 2*ms*63/64 || p50 > 2*ms*65/64 {
		t.Fatalf("latency p50 %d", p50)
	}
}

func TestStreamDuplicateAndReorder(t *testing.T) {
	s := NewStream(Config{})
	evs := feed(s, []uint64{1, 2, 2, 4, 3, 5}, []int64{10, 20, 20, 40, 30, 50})
	want := []Kind{First, Next, Duplicate, Skip, Reorder, Next}
	for i, e := range evs {
		if e.Kind != want[i] {
			t.Fatalf("sample %d: %v, want %v", i, e.Kind, want[i])
		}
	}
	sum := s.Summary()
	// seq 3 arrived late: it was counted in the skip at 4, and its late
	// arrival is a reorder (the analyzer reports both).
	if sum.Duplicates != 1 || sum.Reorders != 1 || sum.Skipped != 1 || sum.RestartCount != 0 {
		t.Fatalf("%+v", sum)
	}
	// Capture and receive intervals are over the same in-order pairs: 1-2,
	// 2-4, 4-5 (receive stamps here: capture + 1 ms, so the same values).
	r := NewStream(Config{})
	for i, q := range []uint64{1, 2, 2, 4, 3, 5} {
		tn := []int64{10, 20, 20, 40, 30, 50}[i] * ms
		r.Add(Sample{Seq: q, TNs: tn, RecvMonoNs: tn + ms})
	}
	if r.Dt.Count() != 3 || r.RecvDt.Count() != 3 || r.RecvDt.Min() != r.Dt.Min() || r.RecvDt.Max() != r.Dt.Max() {
		t.Fatalf("dt %d [%d, %d], recv dt %d [%d, %d]", r.Dt.Count(), r.Dt.Min(), r.Dt.Max(), r.RecvDt.Count(), r.RecvDt.Min(), r.RecvDt.Max())
	}
}

func TestPublisherChangeIsRestart(t *testing.T) {
	s := NewStream(Config{})
	s.Add(Sample{Seq: 7, TNs: 100, Publisher: "a"})
	if e := s.Add(Sample{Seq: 7, TNs: 50, Publisher: "b"}); e.Kind != Restart {
		t.Fatalf("new publisher with seq back: %v", e.Kind)
	}
}

func TestHistogramAccuracy(t *testing.T) {
	var h Histogram
	r := rand.New(rand.NewPCG(1, 2))
	vals := make([]int64, ExactLimit)
	for i := range vals {
		vals[i] = int64(r.ExpFloat64()*40e6) - 5e6
		h.Add(vals[i])
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, q := range []float64{0.01, 0.1, 0.5, 0.9, 0.99, 0.999} {
		exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
		if got := h.Quantile(q); got != exact {
			t.Errorf("q%.3f: %d, exact %d (below ExactLimit quantiles are exact)", q, got, exact)
		}
		if got := h.approxQuantile(q); math.Abs(float64(got-exact)) > math.Abs(float64(exact))/256+1 {
			t.Errorf("bucket q%.3f: %d, exact %d", q, got, exact)
		}
	}
	if h.Quantile(0) != vals[0] || h.Quantile(1) != vals[len(vals)-1] || h.Min() != vals[0] {
		t.Fatal("min/max must be exact")
	}
	var n uint64
	h.Buckets(func(lo, hi int64, c uint64) {
		if lo > hi {
			t.Fatalf("bucket [%d,%d]", lo, hi)
		}
		n += c
	})
	if n != h.Count() {
		t.Fatalf("buckets hold %d of %d", n, h.Count())
	}
	var e Histogram
	e.Add(math.MinInt64)
	e.Add(math.MaxInt64)
	if e.Quantile(0.5) != math.MinInt64 || e.Quantile(1) != math.MaxInt64 || e.approxQuantile(0.5) != math.MinInt64 ||
		e.approxQuantile(0.99) < math.MaxInt64/256*255 {
		t.Fatalf("extremes: %d %d", e.approxQuantile(0.5), e.approxQuantile(0.99))
	}
	var m Histogram
	m.Merge(&h)
	m.Merge(&e)
	if m.Count() != h.Count()+2 || m.Min() != math.MinInt64 {
		t.Fatal("merge")
	}
}

func stamped(ts ...int64) []Stamped {
	out := make([]Stamped, len(ts))
	for i, t := range ts {
		out[i] = Stamped{TNs: t, RecvNs: t + 1000}
	}
	return out
}

func TestLag(t *testing.T) {
	states := stamped(0, 40, 80, 120)
	frames := stamped(-5, 12, 39, 45, 80, 200)
	l := Lag(states, frames, LagConfig{ToleranceNs: 30})
	if l.Frames != 6 || l.Unpaired != 1 {
		t.Fatalf("%+v", l)
	}
	// latest lags: 12, 39, 5, 0, 80 → rejected 39 and 80
	if l.Rejected != 2 || l.Latest.Max() != 80 || l.Latest.Min() != 0 {
		t.Fatalf("rejected %d, latest [%d,%d]", l.Rejected, l.Latest.Min(), l.Latest.Max())
	}
	// nearest: -5 (to 0), 12, -1 (to 40), 5, 0, 80
	if l.Nearest.Min() != -5 || l.Nearest.Count() != 6 {
		t.Fatalf("nearest min %d", l.Nearest.Min())
	}
	if f := l.RejectedFraction(); f != 0.4 {
		t.Fatalf("fraction %v", f)
	}
	// Every sample arrived 1000 ns after capture: the frames inside the
	// states' span (12, 39, 45, 80) arrived 0 ns later than a state would.
	if l.Interpolated.Count() != 4 || l.Interpolated.Min() != 0 || l.Interpolated.Max() != 0 {
		t.Fatalf("interpolated: %d, [%d, %d]", l.Interpolated.Count(), l.Interpolated.Min(), l.Interpolated.Max())
	}
}

// Frames stamped 27 ms before they are published (a camera's exposure or
// processing delay): the latest and nearest state lags stay below the state
// period whatever the state rate, the interpolated lag reads 27 ms at each.
func TestLagInterpolatedShowsFrameDelay(t *testing.T) {
	const delay, latency = 27 * ms, 300_000
	r := rand.New(rand.NewPCG(9, 10))
	for _, hz := range []int64{10, 100, 1000} {
		period := int64(1e9) / hz
		var states, frames []Stamped
		for c := int64(0); c < 5e9; c += period {
			states = append(states, Stamped{TNs: c, RecvNs: c + latency + r.Int64N(50_000)})
		}
		for c := int64(0); c < 5e9; c += 33_333_333 {
			frames = append(frames, Stamped{TNs: c - delay, RecvNs: c + latency + r.Int64N(50_000)})
		}
		l := Lag(states, frames, LagConfig{ToleranceNs: 50 * ms})
		if l.Latest.Max() >= period {
			t.Fatalf("%d Hz: latest lag max %d ns above the state period", hz, l.Latest.Max())
		}
		p50 := l.Interpolated.Quantile(0.5)
		if d := p50 - delay; d < -100_000 || d > 100_000 {
			t.Fatalf("%d Hz: interpolated lag p50 %.3f ms, want 27", hz, float64(p50)/1e6)
		}
		t.Logf("%3d Hz states: latest lag p50 %.3f max %.3f ms; interpolated p50 %.3f ms (%d frames)", hz,
			float64(l.Latest.Quantile(0.5))/1e6, float64(l.Latest.Max())/1e6, float64(p50)/1e6, l.Interpolated.Count())
	}
}

func TestEstimateClock(t *testing.T) {
	// seeds/002: offset -2000 ns, RTT 104000 ns.
	p := Probe{1_000_000_000, 1_000_050_000, 1_000_051_000, 1_000_105_000}
	if p.Offset() != -2000 || p.RTT() != 104_000 {
		t.Fatal(p.Offset(), p.RTT())
	}
	// A remote clock 3 ms ahead and drifting 20 ppm; half the probes queued.
	var probes []Probe
	for i := range 40 {
		t1 := int64(i) * 1e9
		off := int64(3e6) + t1*20/1e6
		q := int64(50_000)
		if i%2 == 1 {
			q = 5_000_000 // queued on the way out: skews the offset
		}
		probes = append(probes, Probe{T1: t1, T2: t1 + q + off, T3: t1 + q + off + 1000, T4: t1 + q + 1000 + 50_000})
	}
	est := EstimateClock(probes)
	if est.Used != 20 || est.RTTNs != 100_000 {
		t.Fatalf("%+v", est)
	}
	wantOff := int64(3e6) + 19e9*20/1e6 // mean over the even probes, t1 = 0, 2, …, 38 s
	if d := est.OffsetNs - wantOff; d < -1000 || d > 1000 {
		t.Fatalf("offset %d, want %d", est.OffsetNs, wantOff)
	}
	if !est.DriftValid || math.Abs(est.DriftPPM-20) > 0.01 {
		t.Fatalf("drift %v %v", est.DriftPPM, est.DriftValid)
	}
	if est.RefNs != 19e9 { // the mean T1 of the even probes
		t.Fatalf("ref %d", est.RefNs)
	}
	if e := EstimateClock(nil); e.Used != 0 {
		t.Fatal("empty")
	}
}

// probesFor simulates probes once a second over span seconds: a remote clock
// drifting by ppm, a one-way delay of 50 µs plus noise (exponential, mean
// noise ns, independently each way: queueing makes the two ways asymmetric).
func probesFor(r *rand.Rand, span int, ppm, noise float64) []Probe {
	var out []Probe
	for i := 0; i <= span; i++ {
		t1 := int64(i) * 1e9
		off := int64(float64(t1) * ppm / 1e6)
		up, down := 50_000+int64(r.ExpFloat64()*noise), 50_000+int64(r.ExpFloat64()*noise)
		t2 := t1 + up + off
		out = append(out, Probe{T1: t1, T2: t2, T3: t2 + 1000, T4: t1 + up + 1000 + down})
	}
	return out
}

// Drift is valid only when the probes bound it: the 95 % confidence
// half-width from the fit's residuals must be within MaxDriftCIPPM. Quiet
// probes over a minute measure 20 ppm; the probes of a loaded machine (a
// true drift of 0 read as tens of ppm) are not valid; and the interval
// covers the true drift in about 95 % of runs.
func TestDriftValidity(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	quiet := EstimateClock(probesFor(r, 60, 20, 5_000))
	if !quiet.DriftValid || math.Abs(quiet.DriftPPM-20) > quiet.DriftCIPPM || quiet.DriftCIPPM > 1 {
		t.Fatalf("quiet, 60 s: drift %.3f ± %.3f ppm valid %v, want 20", quiet.DriftPPM, quiet.DriftCIPPM, quiet.DriftValid)
	}
	invalid := 0
	var worst float64
	for range 200 {
		loaded := EstimateClock(probesFor(r, 20, 0, 600_000))
		worst = max(worst, math.Abs(loaded.DriftPPM))
		if !loaded.HasDriftCI {
			t.Fatal("no interval from 10 probes")
		}
		if !loaded.DriftValid {
			invalid++
		} else if math.Abs(loaded.DriftPPM) > MaxDriftCIPPM {
			t.Fatalf("loaded: drift %.3f ± %.3f ppm valid, true drift 0", loaded.DriftPPM, loaded.DriftCIPPM)
		}
	}
	if invalid < 190 {
		t.Fatalf("loaded, 20 s: only %d of 200 runs invalid (estimates up to %.1f ppm)", invalid, worst)
	}
	t.Logf("loaded, 20 s: %d of 200 runs invalid; estimates up to %.1f ppm against a true 0", invalid, worst)
	covered := 0
	const runs = 1000
	for range runs {
		e := EstimateClock(probesFor(r, 30, -12, 40_000))
		if math.Abs(e.DriftPPM+12) <= e.DriftCIPPM {
			covered++
		}
	}
	if f := float64(covered) / runs; f < 0.90 || f > 0.99 {
		t.Fatalf("the 95 %% interval covers the true drift in %.1f %% of runs", 100*f)
	}
	t.Logf("the 95 %% interval covers the true drift in %.1f %% of %d runs", 100*float64(covered)/runs, runs)
	same := make([]Probe, 6) // three used, all at one instant: no slope
	for i := range same {
		same[i] = Probe{T1: 5, T2: 6, T3: 7, T4: 8}
	}
	for _, few := range [][]Probe{probesFor(r, 1, 0, 0), same} {
		if e := EstimateClock(few); e.DriftValid || e.HasDriftCI {
			t.Fatalf("%d probes: %+v", len(few), e)
		}
	}
}

func BenchmarkStreamAdd(b *testing.B) {
	s := NewStream(Config{})
	t0 := int64(1_700_000_000_000_000_000)
	r := rand.New(rand.NewPCG(3, 4))
	var i uint64
	b.ReportAllocs()
	for b.Loop() {
		i++
		if r.IntN(1000) == 0 {
			i++
		}
		ts := t0 + int64(i)*ms + int64(r.IntN(50_000))
		s.Add(Sample{Seq: i, TNs: ts, RecvWallNs: ts + 300_000, RecvMonoNs: ts})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Msamples/s")
}

func TestSelectNth(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 15, 16, 17, 100, 1000, 10_000} {
		for _, spread := range []int64{1, 3, 1 << 40} {
			a := make([]int64, n)
			for i := range a {
				a[i] = r.Int64N(spread) - spread/2
			}
			sorted := append([]int64(nil), a...)
			sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
			for _, k := range []int{0, n / 2, n * 9 / 10, n - 1} {
				if got := selectNth(a, k); got != sorted[k] {
					t.Fatalf("n %d spread %d k %d: %d, want %d", n, spread, k, got, sorted[k])
				}
			}
		}
	}
}

// Past ExactLimit, a steady period is still reported exactly (the bucket
// mean of equal values), and a spread within the bucket width.
func TestHistogramBeyondExact(t *testing.T) {
	var h Histogram
	for range ExactLimit + 10 {
		h.Add(40_000_000)
	}
	h.Add(80_000_000)
	if p50, top := h.Quantile(0.5), h.Quantile(1); h.exact != nil || p50 != 40_000_000 || top != 80_000_000 {
		t.Fatalf("p50 %d max %d", p50, top)
	}
	var g Histogram
	r := rand.New(rand.NewPCG(7, 8))
	for range 2 * ExactLimit {
		g.Add(1_000_000 + r.Int64N(1000)) // 1 ms ± 1 µs
	}
	if p := g.Quantile(0.5); p < 1_000_000 || p > 1_001_000 {
		t.Fatalf("p50 %d", p)
	}
}

// TestBucketQuantileGroups: the group-skipping walk finds the same bucket
// as a plain walk over every bucket, for values of both signs.
func TestBucketQuantileGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h Histogram
	for i := 0; i < 5000; i++ {
		v := int64(rng.NormFloat64() * 1e6)
		if i%7 == 0 {
			v = -int64(rng.IntN(1 << 40))
		}
		h.Add(v)
	}
	bucket := func(ps *[nPages]*page, i int) bucket {
		if pg := ps[i>>pageBits]; pg != nil {
			return pg.b[i&(pageLen-1)]
		}
		return bucket{}
	}
	plain := func(rank uint64) int64 {
		var seen uint64
		for i := nBuckets - 1; i >= 0; i-- {
			if b := bucket(&h.neg, i); b.n > 0 {
				if seen += b.n; seen >= rank {
					return h.clamp(neg(uint64(math.Round(b.mean()))))
				}
			}
		}
		for i := range nBuckets {
			if b := bucket(&h.pos, i); b.n > 0 {
				if seen += b.n; seen >= rank {
					return h.clamp(pos(uint64(math.Round(b.mean()))))
				}
			}
		}
		return h.max
	}
	for rank := uint64(1); rank <= h.n+1; rank += 7 {
		if got, want := h.bucketQuantile(rank), plain(rank); got != want {
			t.Fatalf("rank %d: %d, plain walk %d", rank, got, want)
		}
	}
}

// Across a Break (the next of several snapshots of one recording), the
// time between is not captured: no skip, restart or outage, no interval,
// and the rate is that of the captured spans.
func TestStreamBreak(t *testing.T) {
	s := NewStream(Config{})
	const ms = int64(1e6)
	for i := uint64(0); i < 100; i++ {
		s.Add(Sample{Seq: i, TNs: int64(i) * 10 * ms})
	}
	s.Break()
	for i := uint64(5000); i < 5100; i++ { // 49 s later, seq far ahead
		if ev := s.Add(Sample{Seq: i, TNs: int64(i) * 10 * ms}); ev.Kind != Next && ev.Kind != First || ev.Outage {
			t.Fatalf("seq %d: %+v", i, ev)
		}
	}
	s.Break()
	for i := uint64(10); i < 20; i++ { // a publisher restart while not captured
		s.Add(Sample{Seq: i, TNs: int64(60000+i*10) * ms})
	}
	sum := s.Summary()
	if sum.Skipped != 0 || sum.RestartCount != 0 || len(sum.Outages) != 0 || sum.Spans != 2 || s.Dt.Max() != 10*ms {
		t.Fatalf("summary %+v, longest interval %d", sum, s.Dt.Max())
	}
	if r := sum.RateHz(); r < 99.99 || r > 100.01 {
		t.Fatalf("rate %.3f Hz, want 100", r)
	}
}

// A stream accounted for in parts (each part a Stream of its own,
// merged in order) is the stream accounted for whole: the same summary,
// events, outages and histograms, whatever the seams; a seam at a
// duplicate or a reordered sample is refused, and the part accounted
// for again after the stream before it gives the whole.
func TestStreamPartsMergeToWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var xs []Sample
	seq, tns := uint64(0), int64(1_764_446_400)*1e9
	pubs := []string{"sim-a", "sim-b"}
	pub := 0
	for i := range 300_000 { // past ExactLimit: the buckets merge too
		seq++
		tns += ms + rng.Int64N(ms/4) - ms/8
		switch r := rng.IntN(1000); {
		case r < 3:
			seq += uint64(1 + rng.IntN(5)) // skipped
		case r < 4:
			tns += 50 * ms // an outage
		case r == 4 && i%7 == 0:
			seq, pub = 0, 1-pub // a restart by a new publisher
			tns += 2000 * ms
		}
		x := Sample{Seq: seq, TNs: tns, RecvWallNs: tns + 300_000 + rng.Int64N(100_000), RecvMonoNs: tns - 1e18 + 400_000, Publisher: pubs[pub]}
		xs = append(xs, x)
		switch rng.IntN(2000) {
		case 0:
			xs = append(xs, x) // a duplicate
		case 1:
			y := xs[len(xs)-2] // a late one
			xs[len(xs)-2], xs[len(xs)-1] = x, y
		}
	}
	cfg := Config{MaxEvents: 50, NoLiveOutage: true}
	whole := NewStream(cfg)
	for _, x := range xs {
		whole.Add(x)
	}
	want := whole.Summary()
	for _, parts := range [][]int{{1}, {len(xs) / 2}, {1000, 150_000, 150_001, 299_000}} {
		s := NewStream(cfg)
		from := 0
		for _, to := range append(parts, len(xs)) {
			p := NewStream(cfg)
			for _, x := range xs[from:to] {
				p.Add(x)
			}
			if _, ok := s.Merge(p); !ok {
				dup := xs[from].Seq == s.last.Seq || (xs[from].Seq < s.last.Seq && xs[from].TNs < s.last.TNs)
				if !dup {
					t.Fatalf("seam at %d refused: %+v after %+v", from, xs[from], s.last)
				}
				for _, x := range xs[from:to] {
					s.Add(x)
				}
			}
			from = to
		}
		got := s.Summary()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seams %v: summary\n%+v\nwant\n%+v", parts, got, want)
		}
		for _, h := range []struct {
			name string
			a, b *Histogram
		}{{"dt", &s.Dt, &whole.Dt}, {"recv dt", &s.RecvDt, &whole.RecvDt}, {"latency", &s.Latency, &whole.Latency}} {
			if h.a.Count() != h.b.Count() || h.a.Mean() != h.b.Mean() || h.a.Min() != h.b.Min() || h.a.Max() != h.b.Max() {
				t.Fatalf("seams %v: %s histogram differs", parts, h.name)
			}
			for _, q := range []float64{0.001, 0.1, 0.5, 0.9, 0.999} {
				if h.a.Quantile(q) != h.b.Quantile(q) {
					t.Fatalf("seams %v: %s q%v %d, want %d", parts, h.name, q, h.a.Quantile(q), h.b.Quantile(q))
				}
			}
		}
	}
	// A duplicate at the seam.
	s, p := NewStream(cfg), NewStream(cfg)
	s.Add(xs[0])
	p.Add(xs[0])
	if _, ok := s.Merge(p); ok {
		t.Fatal("a duplicate at the seam was merged")
	}
}
