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
