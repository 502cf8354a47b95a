package sampler

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// Frames and states arriving interleaved, out of capture order: every
// frame LiveLag settles has the lag Lag gives it on the whole stream.
func TestLiveLagAgreesWithLag(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type arrival struct {
		t     int64
		frame bool
		at    int64 // arrival time
	}
	var in []arrival
	var states, frames []Stamped
	for i := 0; i < 2000; i++ { // 100 Hz states
		ts := int64(i)*10_000_000 + rng.Int64N(2_000_000)
		states = append(states, Stamped{TNs: ts})
		in = append(in, arrival{ts, false, ts + rng.Int64N(1_000_000)})
	}
	for i := 0; i < 600; i++ { // 30 Hz frames, 27 ms old, delivered up to 40 ms late
		ts := int64(i)*33_333_333 + 5_000_000
		frames = append(frames, Stamped{TNs: ts})
		in = append(in, arrival{ts, true, ts + 27_000_000 + rng.Int64N(40_000_000)})
	}
	slices.SortFunc(in, func(a, b arrival) int { return cmp.Compare(a.at, b.at) })
	want := map[int64]int64{}
	SortStamped(states)
	for _, f := range frames {
		if lag, _, ok := latestLag(states, f.TNs); ok {
			want[f.TNs] = lag
		}
	}
	var l LiveLag
	got := map[int64]int64{}
	for _, a := range in {
		var out []FrameLag
		if a.frame {
			out = l.Frame(a.t)
		} else {
			out = l.State(a.t)
		}
		for _, f := range out {
			got[f.TNs] = f.LagNs
		}
	}
	if len(got) < len(frames)-2 { // the last frames wait for a state that never comes
		t.Fatalf("settled %d of %d frames", len(got), len(frames))
	}
	for ts, lag := range got {
		if want[ts] != lag {
			t.Fatalf("frame %d: live lag %d, Lag says %d", ts, lag, want[ts])
		}
	}
	if len(l.pending) > 2 || len(l.states) > liveStates {
		t.Fatalf("kept %d waiting frames and %d states", len(l.pending), len(l.states))
	}
}
