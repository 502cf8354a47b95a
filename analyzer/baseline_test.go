package analyzer

import (
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/synth"
)

// analyzeSession writes cfg as a log and analyzes it.
func analyzeSession(t *testing.T, cfg synth.Config) *Report {
	t.Helper()
	p, _ := writeSession(t, cfg)
	rep, err := AnalyzeFiles([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestBaselineChecksEverything: a baseline gate lists every metric it
// compared, and never passes by comparing nothing.
func TestBaselineChecksEverything(t *testing.T) {
	base := analyzeSession(t, synth.Default())

	// The log against its own report: every metric of every channel and
	// lag pair is a passed check.
	same := analyzeSession(t, synth.Default())
	same.CompareBaseline(base, Tolerances{Default: 0.1, Metric: map[string]float64{"dt_ms.p99": 0.1, "lag.latest_ms.p99": 0.1}})
	if !same.Pass || len(same.Regressions) != 0 {
		t.Fatalf("against itself: pass %v, failed %+v", same.Pass, same.Failed())
	}
	metrics := map[string]bool{}
	for _, c := range same.Checks {
		if c.Name != "baseline" || !c.Pass || c.Metric == "" {
			t.Fatalf("check %+v", c)
		}
		metrics[c.Channel+" "+c.Metric] = true
	}
	for _, want := range []string{"vr/r1/state skipped", "vr/r1/state rate_hz", "vr/r1/state dt_ms.p99",
		"vr/r1/camera/front lag.latest_ms.p99", "vr/r1/camera/front recorder_drops"} {
		if !metrics[want] {
			t.Fatalf("no check of %s in %v", want, metrics)
		}
	}

	// A log that lost a channel of the baseline fails, naming it.
	noRaw := synth.Default()
	noRaw.RawHz = 0
	lost := analyzeSession(t, noRaw)
	lost.CompareBaseline(base, Tolerances{Default: 0.1})
	if lost.Pass || len(lost.Failed()) != 1 || !strings.Contains(lost.Failed()[0].Message, synth.RawKey("r1")+": the channel is in the baseline but not in this log") {
		t.Fatalf("lost channel: pass %v, failed %+v", lost.Pass, lost.Failed())
	}

	// A log with none of the baseline's channels fails for each; its own
	// channels are notes.
	other := synth.Default()
	other.Robot = "r2"
	foreign := analyzeSession(t, other)
	foreign.CompareBaseline(base, Tolerances{Default: 0.1})
	if foreign.Pass || len(foreign.Failed()) != len(base.Channels) {
		t.Fatalf("foreign log: pass %v, failed %+v", foreign.Pass, foreign.Failed())
	}
	if !strings.Contains(strings.Join(foreign.Notes, "\n"), "baseline has no channel vr/r2/state") {
		t.Fatalf("notes %v", foreign.Notes)
	}

	// A baseline without a channel is nothing to check.
	empty := analyzeSession(t, synth.Default())
	empty.CompareBaseline(&Report{Schema: ReportSchema}, Tolerances{Default: 0.1})
	if empty.Pass || !strings.Contains(empty.Failed()[0].Message, "nothing to check") {
		t.Fatalf("empty baseline: pass %v, failed %+v", empty.Pass, empty.Failed())
	}
}

// By default a baseline compares what a clean run reproduces (counts,
// rates, lag rejections) and leaves out the timing percentiles, which vary
// with the machine's load, saying so in a note; a tolerance of its own
// compares one.
func TestBaselineToleranceByMetric(t *testing.T) {
	base := analyzeSession(t, synth.Default())
	loaded := synth.Default()
	loaded.Jitter = 3 * time.Millisecond // a busier machine: latency p99 several ms worse
	now := analyzeSession(t, loaded)
	now.CompareBaseline(base, Tolerances{Default: DefaultBaselineTolerance})
	if !now.Pass {
		t.Fatalf("default tolerances: failed %+v", now.Failed())
	}
	for _, c := range now.Checks {
		if strings.HasSuffix(c.Metric, ".p99") {
			t.Fatalf("a timing percentile compared by default: %+v", c)
		}
	}
	if !strings.Contains(strings.Join(now.Notes, "\n"), "dt_ms.p99, latency_ms.p99, lag.latest_ms.p99 not compared") {
		t.Fatalf("notes %q", now.Notes)
	}
	asked := analyzeSession(t, loaded)
	asked.CompareBaseline(base, Tolerances{Default: DefaultBaselineTolerance, Metric: map[string]float64{"latency_ms.p99": 0.1}})
	if asked.Pass || asked.Failed()[0].Metric != "latency_ms.p99" {
		t.Fatalf("latency_ms.p99 at 10 %%: failed %+v", asked.Failed())
	}
	lenient := analyzeSession(t, loaded)
	lenient.CompareBaseline(base, Tolerances{Default: DefaultBaselineTolerance, Metric: map[string]float64{"latency_ms.p99": 100}})
	if !lenient.Pass {
		t.Fatalf("latency_ms.p99 at 100x: failed %+v", lenient.Failed())
	}
}
