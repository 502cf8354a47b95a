package analyzer

import (
	"encoding/json"
	"fmt"
	"os"
)

// LoadReport reads a report written with --json.
func LoadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not an analyze --json report: %w", path, err)
	}
	if r.Schema != ReportSchema {
		return nil, fmt.Errorf("%s: report schema %q, want %q", path, r.Schema, ReportSchema)
	}
	return &r, nil
}

// CompareBaseline records every metric that got worse than in base by more
// than the relative tolerance (0.1 = 10 %) plus a small absolute slack, as a
// Regression and a failed check. Channels are matched by name; channels
// missing from either side are noted, not failed.
func (r *Report) CompareBaseline(base *Report, tolerance float64) {
	worse := func(ch, metric string, old, now, slack float64) {
		if now > old*(1+tolerance)+slack {
			r.Regressions = append(r.Regressions, Regression{Channel: ch, Metric: metric, Baseline: old, Value: now})
			r.Checks = append(r.Checks, Check{Name: "baseline", Channel: ch, Value: now, Limit: old, Pass: false,
				Message: fmt.Sprintf("baseline %s %s: %s, was %s", ch, metric, fmtNum(now), fmtNum(old))})
		}
	}
	for _, c := range r.Channels {
		b := base.Channel(c.Name)
		if b == nil {
			r.Notes = append(r.Notes, "baseline has no channel "+c.Name)
			continue
		}
		worse(c.Name, "skipped", float64(b.Skipped), float64(c.Skipped), 0)
		worse(c.Name, "restart_count", float64(b.RestartCount), float64(c.RestartCount), 0)
		worse(c.Name, "outages", float64(len(b.Outages)), float64(len(c.Outages)), 0)
		worse(c.Name, "recorder_drops", float64(b.RecorderDrops), float64(c.RecorderDrops), 0)
		worse(c.Name, "dt_ms.p99", b.DtMs.P99, c.DtMs.P99, 0.5)
		if b.LatencyMs != nil && c.LatencyMs != nil {
			worse(c.Name, "latency_ms.p99", b.LatencyMs.P99, c.LatencyMs.P99, 0.5)
		}
		if b.RateHz > 0 && c.RateHz < b.RateHz*(1-tolerance) {
			r.Regressions = append(r.Regressions, Regression{Channel: c.Name, Metric: "rate_hz", Baseline: b.RateHz, Value: c.RateHz})
			r.Checks = append(r.Checks, Check{Name: "baseline", Channel: c.Name, Value: c.RateHz, Limit: b.RateHz, Pass: false,
				Message: fmt.Sprintf("baseline %s rate_hz: %s, was %s", c.Name, fmtNum(c.RateHz), fmtNum(b.RateHz))})
		}
	}
	for _, g := range r.Lag {
		for _, bg := range base.Lag {
			if bg.Frames == g.Frames && bg.States == g.States {
				worse(g.Frames, "lag.rejected_fraction", bg.RejectedFraction, g.RejectedFraction, 0.001)
				worse(g.Frames, "lag.latest_ms.p99", bg.LatestMs.P99, g.LatestMs.P99, 0.5)
			}
		}
	}
	r.updatePass()
}
