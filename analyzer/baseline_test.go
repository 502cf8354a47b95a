package analyzer

import (
	"strings"
	"testing"

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
	same.CompareBaseline(base, 0.1)
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
	lost.CompareBaseline(base, 0.1)
	if lost.Pass || len(lost.Failed()) != 1 || !strings.Contains(lost.Failed()[0].Message, synth.RawKey("r1")+": the channel is in the baseline but not in this log") {
		t.Fatalf("lost channel: pass %v, failed %+v", lost.Pass, lost.Failed())
	}

	// A log with none of the baseline's channels fails for each; its own
	// channels are notes.
	other := synth.Default()
	other.Robot = "r2"
	foreign := analyzeSession(t, other)
	foreign.CompareBaseline(base, 0.1)
	if foreign.Pass || len(foreign.Failed()) != len(base.Channels) {
		t.Fatalf("foreign log: pass %v, failed %+v", foreign.Pass, foreign.Failed())
	}
	if !strings.Contains(strings.Join(foreign.Notes, "\n"), "baseline has no channel vr/r2/state") {
		t.Fatalf("notes %v", foreign.Notes)
	}

	// A baseline without a channel is nothing to check.
	empty := analyzeSession(t, synth.Default())
	empty.CompareBaseline(&Report{Schema: ReportSchema}, 0.1)
	if empty.Pass || !strings.Contains(empty.Failed()[0].Message, "nothing to check") {
		t.Fatalf("empty baseline: pass %v, failed %+v", empty.Pass, empty.Failed())
	}
}
