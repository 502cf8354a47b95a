package analyzer

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/vrlog/vrlog/codec"
)

// TestSampleAgainstTruth checks the report of the bundled sample, recorded
// from the bundled simulator with injected faults (scripts/mksample.sh),
// against what the simulator says it published (testdata/sample.truth.jsonl):
// counts, every seq gap, the restart with its elapsed times, the pause,
// the frame lag and the clock offset.
func TestSampleAgainstTruth(t *testing.T) {
	rep, err := AnalyzeFiles([]string{"../testdata/sample.vrlog"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type run struct{ lastSeq, lastT int64 }
	type want struct {
		n, skipped, gaps, restarts uint64
		before, after              float64 // elapsed of the first restart
		last                       *run
	}
	truth := map[string]*want{}
	var order []string
	f, err := os.Open("../testdata/sample.truth.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p struct {
			Channel string `json:"channel"`
			Seq     int64  `json:"seq"`
			TNs     int64  `json:"t_ns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		w := truth[p.Channel]
		if w == nil {
			w = &want{}
			truth[p.Channel] = w
			order = append(order, p.Channel)
		}
		w.n++
		if l := w.last; l != nil {
			switch {
			case p.Seq <= l.lastSeq:
				w.restarts++
				if w.restarts == 1 {
					w.before, w.after = codec.Elapsed(l.lastT, rep.EpochNs), codec.Elapsed(p.TNs, rep.EpochNs)
				}
			case p.Seq > l.lastSeq+1:
				w.skipped += uint64(p.Seq - l.lastSeq - 1)
				w.gaps++
			}
		}
		w.last = &run{p.Seq, p.TNs}
	}
	if len(order) != 2 {
		t.Fatalf("truth has channels %v, want state and one camera", order)
	}
	for _, name := range order {
		w, c := truth[name], rep.Channel(name)
		if c == nil {
			t.Fatalf("%s: not in the report", name)
		}
		if c.Count != w.n || c.RecorderDrops != 0 || c.Undecodable != 0 {
			t.Errorf("%s: %d recorded (%d dropped, %d undecodable), %d published", name, c.Count, c.RecorderDrops, c.Undecodable, w.n)
		}
		if c.Skipped != w.skipped || c.SkipEvents != w.gaps || w.gaps == 0 {
			t.Errorf("%s: %d skipped in %d gaps, published with %d in %d", name, c.Skipped, c.SkipEvents, w.skipped, w.gaps)
		}
		if c.RestartCount != 1 || w.restarts != 1 {
			t.Fatalf("%s: %d restarts, published %d", name, c.RestartCount, w.restarts)
		}
		r := c.Restarts[0]
		if math.Abs(r.ElapsedBefore-w.before) > 0.001 || math.Abs(r.ElapsedAfter-w.after) > 0.001 {
			t.Errorf("%s: restart at %.3f → %.3f s, published %.3f → %.3f", name, r.ElapsedBefore, r.ElapsedAfter, w.before, w.after)
		}
		// The simulator restarts 5.84 s in and stays away 15.93 s.
		if math.Abs(r.ElapsedBefore-5.84) > 0.05 || math.Abs(r.ElapsedAfter-21.77) > 0.08 {
			t.Errorf("%s: elapsed froze at %.3f s and resumed at %.3f s, want about 5.84 and 21.77", name, r.ElapsedBefore, r.ElapsedAfter)
		}
		var restart, pause bool
		for _, o := range c.Outages {
			restart = restart || o.Restart && math.Abs(o.GapS-15.93) < 0.1
			pause = pause || !o.Restart && math.Abs(o.FromElapsed-25) < 0.1 && math.Abs(o.GapS-0.5) < 0.06
		}
		if !restart || !pause {
			t.Errorf("%s: outages %+v, want the restart's and the 500 ms pause at 25 s", name, c.Outages)
		}
	}
	// Frames are stamped 8 ms before they are published: their latency
	// (receive minus capture) is 8 ms above the states'.
	st, fr := rep.Channel(order[0]), rep.Channel(order[1])
	if st.Kind != KindState {
		st, fr = fr, st
	}
	if d := fr.LatencyMs.P50 - st.LatencyMs.P50; math.Abs(d-8) > 2 {
		t.Errorf("frame latency p50 %.3f ms, state %.3f ms: want 8 ms apart", fr.LatencyMs.P50, st.LatencyMs.P50)
	}
	if len(rep.Lag) != 1 || rep.Lag[0].Count == 0 {
		t.Errorf("lag %+v, want frames paired with states", rep.Lag)
	}
	if rep.Clock == nil || math.Abs(rep.Clock.OffsetMs-2) > 1 {
		t.Errorf("clock %+v, want the simulator 2 ms ahead", rep.Clock)
	}
}

// TestSampleMaxLagAcrossRestart: the sample's frames across the restart's
// and the pause's state outages are reported on their own, out of the
// lag figures and the gate: --max-lag 100ms passes (the state period and
// a skipped state are the latest lag), 5ms fails; the delay is 8 ms.
func TestSampleMaxLagAcrossRestart(t *testing.T) {
	rep, err := AnalyzeFiles([]string{"../testdata/sample.vrlog"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := rep.Lag[0]
	if l.AcrossOutage != 2 || len(l.AcrossOutages) != 2 {
		t.Fatalf("%d frames across %+v, want the restart's and the pause's", l.AcrossOutage, l.AcrossOutages)
	}
	if o := l.AcrossOutages[0]; !o.Restart || o.Frames != 1 || math.Abs(o.FromElapsed-5.84) > 0.05 || math.Abs(o.GapS-15.93) > 0.1 || o.MaxLagMs < 15000 {
		t.Errorf("across the restart: %+v", o)
	}
	if o := l.AcrossOutages[1]; o.Restart || math.Abs(o.FromElapsed-25) > 0.1 || math.Abs(o.GapS-0.5) > 0.06 {
		t.Errorf("across the pause: %+v", o)
	}
	if l.LatestMs.Max > 100 || l.LatestMs.Max < 40 || math.Abs(l.InterpolatedMs.P50-8) > 0.5 {
		t.Errorf("latest max %.3f ms, delay p50 %.3f ms: want the state period's sawtooth under 100 ms and 8 ms", l.LatestMs.Max, l.InterpolatedMs.P50)
	}
	for _, c := range []struct {
		limit string
		pass  bool
	}{{"100ms", true}, {"5ms", false}} {
		r := *rep
		r.Checks = nil
		lim, _ := ParseLimit(c.limit, true)
		if err := r.ApplyChecks(Thresholds{MaxLagMs: []Limit{lim}}); err != nil {
			t.Fatal(err)
		}
		if r.Pass != c.pass {
			t.Errorf("--max-lag %s: pass %v, want %v: %+v", c.limit, r.Pass, c.pass, r.Checks)
		}
	}
}
