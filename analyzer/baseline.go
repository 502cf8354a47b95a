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

// CompareBaseline checks this report against an earlier one: every metric
// of every baseline channel (and lag pair) is one Check, passed or failed,
// so a baseline gate lists what it compared; a metric worse than in base by
// more than the relative tolerance (0.1 = 10 %) plus a small absolute slack
// is also a Regression. A gate never passes by comparing nothing: a
// baseline channel or lag pair missing from this report fails, and so does
// a baseline with no channel at all. A channel new in this report is a note.
func (r *Report) CompareBaseline(base *Report, tolerance float64) {
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
		cmp(ch, metric, unit, old, now, old*(1+tolerance)+slack, true)
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
		if b.RateHz > 0 {
			cmp(c.Name, "rate_hz", "Hz", b.RateHz, c.RateHz, b.RateHz*(1-tolerance), false)
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
