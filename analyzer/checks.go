package analyzer

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// Limit is a threshold that applies to channels whose name matches Glob
// (path.Match syntax; "" matches every channel the check applies to).
type Limit struct {
	Glob  string
	Value float64
}

// ParseLimit parses "VALUE" or "GLOB=VALUE"; VALUE is a number, or a
// duration ("500ms") when dur is set, stored in milliseconds.
func ParseLimit(s string, dur bool) (Limit, error) {
	glob, val := "", s
	if i := strings.LastIndexByte(s, '='); i >= 0 {
		glob, val = s[:i], s[i+1:]
		if _, err := path.Match(glob, ""); err != nil {
			return Limit{}, fmt.Errorf("bad channel pattern %q: %w", glob, err)
		}
	}
	if dur {
		d, err := time.ParseDuration(val)
		if err != nil {
			return Limit{}, fmt.Errorf("%q: want a duration such as 500ms or 2s", s)
		}
		return Limit{glob, float64(d) / 1e6}, nil
	}
	v, err := strconv.ParseFloat(val, 64)
	if err != nil || v < 0 {
		return Limit{}, fmt.Errorf("%q: want a non-negative number, or CHANNEL=NUMBER", s)
	}
	return Limit{glob, v}, nil
}

func (l Limit) matches(name string) bool {
	if l.Glob == "" {
		return true
	}
	ok, _ := path.Match(l.Glob, name)
	return ok || l.Glob == name
}

// Thresholds are the CI gate. Each list may hold a default (no glob) and
// per-channel overrides; the last matching entry wins.
type Thresholds struct {
	MaxSkips     []Limit // skipped samples per channel
	MaxRestarts  []Limit // publisher restarts per channel
	MaxOutageMs  []Limit // longest outage per channel
	MinRate      []Limit // Hz per channel
	MaxLagMs     []Limit // largest frame-to-latest-state lag, per frame channel
	MaxLagReject []Limit // rejected fraction (0..1), per frame channel
}

func pick(ls []Limit, name string) (Limit, bool) {
	var got Limit
	ok := false
	for _, l := range ls {
		if l.matches(name) {
			got, ok = l, true
		}
	}
	return got, ok
}

// ApplyChecks evaluates the thresholds against the report, appends one Check
// per (threshold, channel) and sets Pass.
func (r *Report) ApplyChecks(t Thresholds) {
	add := func(name, ch string, value float64, l Limit, unit string, atMost bool) {
		pass := value <= l.Value
		rel := "≤"
		if !atMost {
			pass, rel = value >= l.Value, "≥"
		}
		msg := fmt.Sprintf("%s %s: %s%s (limit %s %s%s)", name, ch, fmtNum(value), unit, rel, fmtNum(l.Value), unit)
		if !pass {
			msg += fmt.Sprintf(": off by %s%s", fmtNum(abs(value-l.Value)), unit)
		}
		r.Checks = append(r.Checks, Check{Name: name, Channel: ch, Value: value, Limit: l.Value, Unit: unit, Pass: pass, Message: msg})
	}
	for _, c := range r.Channels {
		if c.Kind == KindProbe {
			continue
		}
		if l, ok := pick(t.MaxSkips, c.Name); ok && c.Kind != KindRaw {
			add("max-skips", c.Name, float64(c.Skipped), l, "", true)
		}
		if l, ok := pick(t.MaxRestarts, c.Name); ok && c.Kind != KindRaw {
			add("max-restarts", c.Name, float64(c.RestartCount), l, "", true)
		}
		if l, ok := pick(t.MaxOutageMs, c.Name); ok {
			longest := 0.0
			for _, o := range c.Outages {
				longest = max(longest, o.GapS*1000)
			}
			add("max-outage", c.Name, longest, l, " ms", true)
		}
		if l, ok := pick(t.MinRate, c.Name); ok {
			add("min-rate", c.Name, c.RateHz, l, " Hz", false)
		}
	}
	for _, g := range r.Lag {
		if l, ok := pick(t.MaxLagMs, g.Frames); ok {
			add("max-lag", g.Frames, g.LatestMs.Max, l, " ms", true)
		}
		if l, ok := pick(t.MaxLagReject, g.Frames); ok {
			add("max-lag-reject", g.Frames, g.RejectedFraction, l, "", true)
		}
	}
	r.updatePass()
}

func (r *Report) updatePass() {
	r.Pass = len(r.Regressions) == 0
	for _, c := range r.Checks {
		r.Pass = r.Pass && c.Pass
	}
}

// Failed lists the failed checks.
func (r *Report) Failed() []Check {
	var f []Check
	for _, c := range r.Checks {
		if !c.Pass {
			f = append(f, c)
		}
	}
	return f
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
