package analyzer

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// LoadReport reads a report written with --json.
func LoadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a JSON report of analyze: %w", path, err)
	}
	if r.Schema != ReportSchema {
		return nil, fmt.Errorf("%s: report schema %q, want %q", path, r.Schema, ReportSchema)
	}
	return &r, nil
}

// BaselineMetrics are the metrics a baseline compares, and which of them
// are timing percentiles: those vary with the machine's load (two clean
// runs of one log, back to back: the camera's latency_ms.p99 4.315 vs
// 2.982 ms), so one tolerance for every metric cannot work. The others,
// counts and rates, a clean run reproduces.
var BaselineMetrics = []struct {
	Name   string
	Timing bool
}{
	{"skipped", false}, {"restart_count", false}, {"outages", false}, {"recorder_drops", false}, {"rate_hz", false},
	{"lag.rejected_fraction", false},
	{"dt_ms.p99", true}, {"latency_ms.p99", true}, {"lag.latest_ms.p99", true},
}

// Tolerances say how much worse than its baseline each metric may get,
// as a relative worsening (0.1 = 10 %; a count or ms figure also gets a
// small absolute slack). Default applies to every metric that is not a
// timing percentile; Metric sets one metric's, and a timing percentile
// is compared only when Metric has it.
type Tolerances struct {
	Default float64
	Metric  map[string]float64
}

// DefaultBaselineTolerance is the relative worsening allowed by default.
const DefaultBaselineTolerance = 0.1

// of is metric's tolerance; ok false when it is not compared.
func (t Tolerances) of(metric string) (tol float64, ok bool) {
	if v, set := t.Metric[metric]; set {
		return v, true
	}
	for _, m := range BaselineMetrics {
		if m.Name == metric {
			return t.Default, !m.Timing
		}
	}
	return 0, false
}

// IsBaselineMetric reports whether name is one of BaselineMetrics.
func IsBaselineMetric(name string) bool {
	for _, m := range BaselineMetrics {
		if m.Name == name {
			return true
		}
	}
	return false
}

// CompareBaseline checks this report against an earlier one: every
// compared metric (Tolerances) of every baseline channel (and lag pair) is
// one Check, passed or failed, so a baseline gate lists what it compared;
// a metric worse than in base by more than its tolerance plus a small
// absolute slack is also a Regression. A gate never passes by comparing
// nothing: a baseline channel or lag pair missing from this report fails,
// and so does a baseline with no channel at all. A channel new in this
// report is a note, and so are the timing percentiles left out.
func (r *Report) CompareBaseline(base *Report, tols Tolerances) {
	cmp := func(ch, metric, unit string, old, now, allowed float64, atMost bool) {
		pass, rel := now <= allowed, "≤"
		if !atMost {
			pass, rel = now >= allowed, "≥"
		}
		msg := fmt.Sprintf("baseline %s %s: %s%s, was %s%s (allowed %s %s%s)",
			ch, metric, fmtNum(now), spaced(unit), fmtNum(old), spaced(unit), rel, fmtNum(allowed), spaced(unit))
		if !pass {
			r.Regressions = append(r.Regressions, Regression{Channel: ch, Metric: metric, Baseline: old, Value: now})
		}
		r.Checks = append(r.Checks, Check{Name: "baseline", Channel: ch, Metric: metric, Value: now, Limit: old, Unit: unit, Pass: pass, Message: msg})
	}
	worse := func(ch, metric, unit string, old, now, slack float64) {
		if tol, ok := tols.of(metric); ok {
			cmp(ch, metric, unit, old, now, old*(1+tol)+slack, true)
		}
	}
	missing := func(ch, what string) {
		r.Checks = append(r.Checks, Check{Name: "baseline", Channel: ch, Pass: false,
			Message: fmt.Sprintf("baseline %s: %s is in the baseline but not in this log", ch, what)})
	}
	if len(base.Channels) == 0 {
		r.Checks = append(r.Checks, Check{Name: "baseline", Pass: false,
			Message: "baseline: nothing to check: the baseline report has no channel"})
	}
	for _, b := range base.Channels {
		c := r.Channel(b.Name)
		if c == nil {
			missing(b.Name, "the channel")
			continue
		}
		worse(c.Name, "skipped", "", float64(b.Skipped), float64(c.Skipped), 0)
		worse(c.Name, "restart_count", "", float64(b.RestartCount), float64(c.RestartCount), 0)
		worse(c.Name, "outages", "", float64(len(b.Outages)), float64(len(c.Outages)), 0)
		worse(c.Name, "recorder_drops", "", float64(b.RecorderDrops), float64(c.RecorderDrops), 0)
		worse(c.Name, "dt_ms.p99", "ms", b.DtMs.P99, c.DtMs.P99, 0.5)
		if b.LatencyMs != nil && c.LatencyMs != nil {
			worse(c.Name, "latency_ms.p99", "ms", b.LatencyMs.P99, c.LatencyMs.P99, 0.5)
		}
		if tol, ok := tols.of("rate_hz"); ok && b.RateHz > 0 {
			cmp(c.Name, "rate_hz", "Hz", b.RateHz, c.RateHz, b.RateHz*(1-tol), false)
		}
	}
	for _, c := range r.Channels {
		if base.Channel(c.Name) == nil {
			r.Notes = append(r.Notes, "baseline has no channel "+c.Name)
		}
	}
	for _, bg := range base.Lag {
		g := r.lagPair(bg.Frames, bg.States)
		if g == nil {
			if r.Channel(bg.Frames) != nil && r.Channel(bg.States) != nil { // else failed above
				missing(bg.Frames, "the lag pair "+bg.Frames+" → "+bg.States)
			}
			continue
		}
		worse(g.Frames, "lag.rejected_fraction", "", bg.RejectedFraction, g.RejectedFraction, 0.001)
		worse(g.Frames, "lag.latest_ms.p99", "ms", bg.LatestMs.P99, g.LatestMs.P99, 0.5)
	}
	var left []string
	for _, m := range BaselineMetrics {
		if _, ok := tols.of(m.Name); !ok {
			left = append(left, m.Name)
		}
	}
	if len(left) > 0 {
		r.Notes = append(r.Notes, "baseline: "+strings.Join(left, ", ")+" not compared: timing percentiles vary with the machine's load; "+
			"a tolerance of its own compares one ("+left[0]+"=1 allows it to double)")
	}
	r.updatePass()
}

// lagPair returns the lag report of this frame and state channel, or nil.
func (r *Report) lagPair(frames, states string) *LagReport {
	for i := range r.Lag {
		if r.Lag[i].Frames == frames && r.Lag[i].States == states {
			return &r.Lag[i]
		}
	}
	return nil
}
