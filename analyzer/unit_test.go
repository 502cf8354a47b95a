package analyzer

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/sampler"
)

// TestCheckUnits: checks[].unit is the bare unit ("ms", "Hz", "" for a
// count, as docs/analyze-report.md says); messages keep "3 ms".
func TestCheckUnits(t *testing.T) {
	rep, err := AnalyzeFiles([]string{"../testdata/sample.vrlog"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lim := func(s string, dur bool) []Limit {
		l, err := ParseLimit(s, dur)
		if err != nil {
			t.Fatal(err)
		}
		return []Limit{l}
	}
	if err := rep.ApplyChecks(Thresholds{MaxSkips: lim("0", false), MaxOutageMs: lim("vr/r1/state=1s", true),
		MinRate: lim("vr/r1/state=24", false), MaxLagMs: lim("200ms", true)}); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep.Checks)
	var checks []struct{ Name, Unit, Message string }
	json.Unmarshal(b, &checks)
	want := map[string]string{"max-skips": "", "max-outage": "ms", "min-rate": "Hz", "max-lag": "ms"}
	for _, c := range checks {
		if c.Unit != want[c.Name] {
			t.Errorf("%s: unit %q, want %q", c.Name, c.Unit, want[c.Name])
		}
		if c.Unit != "" && !strings.Contains(c.Message, " "+c.Unit+" (limit") {
			t.Errorf("%s: message %q lacks the spaced unit", c.Name, c.Message)
		}
	}
}

// A figure that rounds to zero is 0, never -0: "nearest: p50 -0.000" in
// the text, -0 in the JSON.
func TestRoundedZeroHasNoSign(t *testing.T) {
	for _, v := range []float64{-0.0004, -0.0, 0.0001} {
		if r := round3(v); math.Signbit(r) || fmt.Sprintf("%.3f", r) != "0.000" {
			t.Errorf("round3(%v) = %v (%.3f)", v, r, r)
		}
	}
	if d := distMs(histOf(-400, -300)); math.Signbit(d.P50) || math.Signbit(d.Max) {
		t.Errorf("dist of sub-µs negatives: %+v", d)
	}
}

func histOf(ns ...int64) *sampler.Histogram {
	var h sampler.Histogram
	for _, v := range ns {
		h.Add(v)
	}
	return &h
}
