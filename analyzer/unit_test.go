package analyzer

import (
	"encoding/json"
	"strings"
	"testing"
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
