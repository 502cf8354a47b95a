package sampler

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// arrival is one sample of an interleaved log, in the order a recorder
// received it.
type arrival struct {
	s     Stamped
	frame bool
	at    int64
}

// interleaved is a log of states at stateHz and frames at frameHz over
// n states: capture stamps with jitter, states delivered up to 3 ms late
// (so out of capture order), frames 12 ms old and delivered up to 60 ms
// late, some states with equal stamps.
func interleaved(rng *rand.Rand, n int, statePeriod, framePeriod int64) []arrival {
	var in []arrival
	for i := range n {
		ts := int64(i)*statePeriod + rng.Int64N(statePeriod/2)
		if i%97 == 0 && i > 0 {
			ts = in[len(in)-1].s.TNs // an equal stamp: pairs by arrival order
		}
		in = append(in, arrival{Stamped{ts, ts + 300_000 + rng.Int64N(3_000_000)}, false, 0})
		in[len(in)-1].at = in[len(in)-1].s.RecvNs
	}
	end := int64(n) * statePeriod
	for ts := -framePeriod; ts < end+framePeriod; ts += framePeriod { // some before the first state, some after the last
		recv := ts + 12_000_000 + rng.Int64N(60_000_000)
		in = append(in, arrival{Stamped{ts + rng.Int64N(1000), recv}, true, recv})
	}
	slices.SortStableFunc(in, func(a, b arrival) int { return cmp.Compare(a.at, b.at) })
	return in
}

// exact is Lag on the whole log: every state, sorted, and the frames in
// arrival order.
func exact(in []arrival, cfg LagConfig) *LagSummary {
	var states, frames []Stamped
	for _, a := range in {
		if a.frame {
			frames = append(frames, a.s)
		} else {
			states = append(states, a.s)
		}
	}
	SortStamped(states)
	return Lag(states, frames, cfg)
}

func stream(in []arrival, cfg LagConfig) (*LagStream, *LagSummary, int) {
	l := NewLagStream(cfg)
	most := 0
	for _, a := range in {
		if a.frame {
			l.Frame(a.s)
		} else {
			l.State(a.s)
		}
		most = max(most, len(l.states))
	}
	return l, l.Summary(), most
}

func sameHist(t *testing.T, what string, a, b *Histogram) {
	t.Helper()
	if a.Count() != b.Count() || a.Min() != b.Min() || a.Max() != b.Max() || a.Mean() != b.Mean() {
		t.Fatalf("%s: count/min/max/mean %d %d %d %v, want %d %d %d %v", what, a.Count(), a.Min(), a.Max(), a.Mean(), b.Count(), b.Min(), b.Max(), b.Mean())
	}
	for _, q := range []float64{0.01, 0.1, 0.5, 0.9, 0.99, 0.999} {
		if x, y := a.Quantile(q), b.Quantile(q); x != y {
			t.Fatalf("%s: q%v %d, want %d", what, q, x, y)
		}
	}
}

func sameLag(t *testing.T, got, want *LagSummary) {
	t.Helper()
	if got.Frames != want.Frames || got.Unpaired != want.Unpaired || got.Rejected != want.Rejected {
		t.Fatalf("frames/unpaired/rejected %d %d %d, want %d %d %d", got.Frames, got.Unpaired, got.Rejected, want.Frames, want.Unpaired, want.Rejected)
	}
	sameHist(t, "latest", &got.Latest, &want.Latest)
	sameHist(t, "nearest", &got.Nearest, &want.Nearest)
	sameHist(t, "interpolated", &got.Interpolated, &want.Interpolated)
}

// Within the window the streaming pairing is Lag's, to the last bit of
// every histogram, in memory of the window: 1 kHz states and 30 Hz
// frames, and 10 kHz states and 2 kHz frames (past ExactLimit frames, so
// the buckets' sums are compared too).
func TestLagStreamAgreesWithLag(t *testing.T) {
	for _, c := range []struct {
		name          string
		n             int
		state, frame  int64
		window        int64
		tolerance     int64
		maxKeptStates int
	}{
		{"1kHz_30Hz", 600_000, 1_000_000, 33_333_333, 1e9, 20_000_000, 2 * 2 * 1000},
		{"10kHz_2kHz", 800_000, 100_000, 500_000, 0, 100_000, 2 * 10 * 10_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := interleaved(rand.New(rand.NewPCG(7, uint64(c.n))), c.n, c.state, c.frame)
			cfg := LagConfig{ToleranceNs: c.tolerance, WindowNs: c.window}
			want := exact(in, cfg)
			l, got, most := stream(in, cfg)
			if l.Late() != 0 {
				t.Fatalf("%d late samples within the window", l.Late())
			}
			sameLag(t, got, want)
			if want.Unpaired == 0 || want.Interpolated.Count() == 0 || want.Rejected == 0 {
				t.Fatalf("the log does not exercise every case: %d unpaired, %d interpolated, %d rejected", want.Unpaired, want.Interpolated.Count(), want.Rejected)
			}
			if most > c.maxKeptStates+4096 {
				t.Fatalf("kept up to %d states", most)
			}
		})
	}
}

// Unbounded (negative window) is Lag whatever the disorder; a state log
// given before its frame log (two recorders' files) pairs exactly while
// the states fit MaxStates.
func TestLagStreamUnboundedAndStatesFirst(t *testing.T) {
	in := interleaved(rand.New(rand.NewPCG(3, 4)), 100_000, 1_000_000, 33_333_333)
	slices.SortStableFunc(in, func(a, b arrival) int { // every state, then every frame
		if a.frame == b.frame {
			return 0
		}
		if a.frame {
			return 1
		}
		return -1
	})
	cfg := LagConfig{ToleranceNs: 20_000_000}
	want := exact(in, cfg)
	for _, c := range []LagConfig{{ToleranceNs: cfg.ToleranceNs, WindowNs: -1}, cfg} {
		l, got, _ := stream(in, c)
		if l.Late() != 0 {
			t.Fatalf("window %d: %d late", c.WindowNs, l.Late())
		}
		sameLag(t, got, want)
	}
}

// Beyond the window the stream says so: a state arriving after the frames
// it would pair with were paired, and frames whose states were dropped.
func TestLagStreamBeyondWindowIsLate(t *testing.T) {
	const ms = 1_000_000
	cfg := LagConfig{ToleranceNs: 20 * ms, WindowNs: 1000 * ms}
	l := NewLagStream(cfg)
	for i := range int64(3000) {
		l.State(Stamped{TNs: i * ms})
		if i%33 == 0 {
			l.Frame(Stamped{TNs: i*ms + ms/2})
		}
	}
	if l.Late() != 0 {
		t.Fatal(l.Late())
	}
	l.State(Stamped{TNs: 100*ms + 1}) // 2.9 s late: the frame at 99.5 ms is paired
	if l.Late() != 1 {
		t.Fatalf("late state: %d", l.Late())
	}
	// Past MaxStates with no frame to pace eviction: the oldest states go,
	// and a frame that needed them is late.
	l = NewLagStream(LagConfig{ToleranceNs: cfg.ToleranceNs, WindowNs: cfg.WindowNs, MaxStates: 1000})
	for i := range int64(5000) {
		l.State(Stamped{TNs: i * ms})
	}
	if len(l.states) > 1000 {
		t.Fatalf("kept %d states, MaxStates 1000", len(l.states))
	}
	l.Frame(Stamped{TNs: 10 * ms})
	if l.Summary(); l.Late() != 1 {
		t.Fatalf("frame before the kept states: %d late", l.Late())
	}
}

// BenchmarkLagStream pairs 1 kHz states and 30 Hz frames as they arrive;
// BenchmarkLagWhole keeps them and pairs at the end, as Lag: per sample.
func BenchmarkLagStream(b *testing.B) {
	benchLag(b, func(in []arrival, cfg LagConfig) { stream(in, cfg) })
}

func BenchmarkLagWhole(b *testing.B) {
	benchLag(b, func(in []arrival, cfg LagConfig) { exact(in, cfg) })
}

func benchLag(b *testing.B, pair func([]arrival, LagConfig)) {
	in := interleaved(rand.New(rand.NewPCG(1, 1)), 300_000, 1_000_000, 33_333_333)
	cfg := LagConfig{ToleranceNs: 50_000_000}
	for b.Loop() {
		pair(in, cfg)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(in)), "ns/sample")
}

// A frame whose latest state is from before an outage of the state
// stream (a restart after silence, or a stream that stopped) is no lag
// measurement: counted across the outage with the gap it spans, in no
// histogram and not rejected; the frames around the gap are lag as
// usual. Lag and LagStream agree.
func TestLagAcrossOutage(t *testing.T) {
	const ms = 1_000_000
	var states, frames []Stamped
	for i := range int64(100) { // 25 Hz, silent from 1 s to 3 s, stopped after 3.96 s
		if ts := i * 40 * ms; ts <= 1000*ms || ts >= 3000*ms {
			states = append(states, Stamped{TNs: ts, RecvNs: ts + ms})
		}
	}
	for ts := int64(5 * ms); ts < 4500*ms; ts += 30 * ms { // 33 Hz frames throughout, 8 ms late
		frames = append(frames, Stamped{TNs: ts, RecvNs: ts + 9*ms})
	}
	cfg := LagConfig{ToleranceNs: 35 * ms, OutageNs: func() int64 { return 120 * ms }}
	want := Lag(states, frames, cfg)
	var in []arrival
	for _, s := range states {
		in = append(in, arrival{s: s})
	}
	for _, f := range frames {
		in = append(in, arrival{s: f, frame: true})
	}
	slices.SortStableFunc(in, func(a, b arrival) int { return cmp.Compare(a.s.TNs, b.s.TNs) })
	var pairings []Pairing
	cfg.OnPair = func(p Pairing) { pairings = append(pairings, p) }
	_, got, _ := stream(in, cfg)
	sameLag(t, got, want)
	if got.AcrossOutage != want.AcrossOutage || !slices.Equal(got.Outages, want.Outages) {
		t.Fatalf("stream: %d across %v, Lag: %d across %v", got.AcrossOutage, got.Outages, want.AcrossOutage, want.Outages)
	}
	// In the gap: frames captured from 1120 ms to 2990 ms; after the end:
	// from 4085 ms on.
	var inGap, afterEnd uint64
	for _, f := range frames {
		switch {
		case f.TNs > 1120*ms && f.TNs < 3000*ms:
			inGap++
		case f.TNs > 3960*ms+120*ms:
			afterEnd++
		}
	}
	if got.AcrossOutage != inGap+afterEnd || inGap == 0 || afterEnd == 0 {
		t.Fatalf("%d across an outage, want %d in the gap + %d after the end", got.AcrossOutage, inGap, afterEnd)
	}
	wantGaps := []LagOutage{{StateNs: 1000 * ms, NextNs: 3000 * ms, HasNext: true, Frames: inGap}, {StateNs: 3960 * ms, Frames: afterEnd}}
	for i := range wantGaps {
		if i >= len(got.Outages) || got.Outages[i].StateNs != wantGaps[i].StateNs || got.Outages[i].NextNs != wantGaps[i].NextNs ||
			got.Outages[i].HasNext != wantGaps[i].HasNext || got.Outages[i].Frames != wantGaps[i].Frames {
			t.Fatalf("gaps %+v, want %+v (max lags aside)", got.Outages, wantGaps)
		}
	}
	if m := got.Latest.Max(); m > 120*ms {
		t.Fatalf("latest lag max %d ms: an across-outage pairing is in the lag figures", m/ms)
	}
	if got.Latest.Count()+got.AcrossOutage+got.Unpaired != got.Frames || got.Rejected == 0 {
		t.Fatalf("latest %d + across %d + unpaired %d != %d frames; rejected %d", got.Latest.Count(), got.AcrossOutage, got.Unpaired, got.Frames, got.Rejected)
	}
	if d := got.Interpolated.Max(); d != 8*ms {
		t.Fatalf("delay max %d ns, want 8 ms", d)
	}
	var across uint64
	for _, p := range pairings {
		if p.AcrossOutage {
			across++
			if p.HasDelay || p.Rejected {
				t.Fatalf("across-outage pairing %+v has a delay or is rejected", p)
			}
		}
	}
	if len(pairings) != len(frames) || across != got.AcrossOutage {
		t.Fatalf("OnPair: %d pairings (%d across), want %d (%d)", len(pairings), across, len(frames), got.AcrossOutage)
	}
}

// A log paired in parts (each part its own LagStream, Part after the
// first, merged in order) and judged at the end by one outage
// threshold gives the figures of Lag with that threshold: the whole
// log's pairing, judged by the whole state stream's median, to the last
// bit of every histogram and the order of the gaps; with the threshold
// guessed well (the pairings held are few) or badly (Valid false).
func TestLagStreamPartsMergeToLag(t *testing.T) {
	const ms = 1_000_000
	in := interleaved(rand.New(rand.NewPCG(9, 10)), 200_000, ms, 33*ms)
	// Outages: states silent for 40 ms at 50 s, 2 s at 120 s, and from 190 s on.
	var cut []arrival
	for _, a := range in {
		ts := a.s.TNs
		if !a.frame && ((ts > 50_000*ms && ts < 50_040*ms) || (ts > 120_000*ms && ts < 122_000*ms) || ts > 190_000*ms) {
			continue
		}
		cut = append(cut, a)
	}
	in = cut
	const threshold = 3 * ms
	fixed := LagConfig{ToleranceNs: 20 * ms, WindowNs: 2e9, OutageNs: func() int64 { return threshold }}
	want := exact(in, fixed)
	if want.AcrossOutage == 0 || len(want.Outages) < 3 {
		t.Fatalf("the log does not exercise outages: %d across, gaps %v", want.AcrossOutage, want.Outages)
	}
	for _, c := range []struct {
		name  string
		guess int64
		parts []int // split points, as fractions of len(in) in 1/100
		valid bool
	}{
		{"whole", threshold, nil, true},
		{"halves", threshold, []int{50}, true},
		{"quarters, guess high", 5 * ms, []int{25, 50, 75}, true},
		{"at an outage", threshold, []int{int(100 * float64(indexAt(in, 120_500*ms)) / float64(len(in)))}, true},
		{"guess too high", 100 * ms, []int{50}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := fixed
			cfg.Deferred = true
			cfg.OutageNs = func() int64 { return c.guess }
			var pairings []Pairing
			cfg.OnPair = func(p Pairing) { pairings = append(pairings, p) }
			bounds := []int{0}
			for _, p := range c.parts {
				bounds = append(bounds, len(in)*p/100)
			}
			bounds = append(bounds, len(in))
			var whole *LagStream
			for k := 0; k+1 < len(bounds); k++ {
				pc := cfg
				pc.Part = k > 0
				l := NewLagStream(pc)
				for _, a := range in[bounds[k]:bounds[k+1]] {
					if a.frame {
						l.Frame(a.s)
					} else {
						l.State(a.s)
					}
				}
				if whole == nil {
					whole = l
					continue
				}
				seam, ok := whole.Seam(l)
				if !ok {
					t.Fatalf("part %d not merged", k)
				}
				seam.Join()
			}
			if ok := whole.Judge(threshold); ok != c.valid {
				t.Fatalf("Judge %v, want %v", ok, c.valid)
			}
			if !c.valid {
				return
			}
			got := whole.Summary()
			sameLag(t, got, want)
			if got.AcrossOutage != want.AcrossOutage || !slices.Equal(got.Outages, want.Outages) || whole.Late() != 0 {
				t.Fatalf("%d across %v (late %d), want %d across %v", got.AcrossOutage, got.Outages, whole.Late(), want.AcrossOutage, want.Outages)
			}
			if uint64(len(pairings)) != want.Frames {
				t.Fatalf("OnPair called %d times for %d frames", len(pairings), want.Frames)
			}
		})
	}
}

// indexAt is the position of the first sample of in captured at or after t.
func indexAt(in []arrival, t int64) int {
	for i, a := range in {
		if a.s.TNs >= t {
			return i
		}
	}
	return len(in)
}
