package analyzer

import (
	"fmt"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/livecheck"
)

// Limit is a threshold for the channels its pattern matches
// (livecheck.Limit: record's live triggers take the same limits).
type Limit = livecheck.Limit

// ParseLimit parses "VALUE" or "CHANNEL=VALUE"; VALUE is a number, or a
// duration ("500ms") when dur is set, stored in milliseconds.
func ParseLimit(s string, dur bool) (Limit, error) { return livecheck.ParseLimit(s, dur) }

// Thresholds are the CI gate. Each list may hold a default (no pattern)
// and per-channel overrides; the last matching entry wins.
type Thresholds struct {
	MaxSkips     []Limit // skipped samples per channel
	MaxRestarts  []Limit // publisher restarts per channel
	MaxOutageMs  []Limit // longest outage per channel
	MinRate      []Limit // Hz per channel
	MaxLagMs     []Limit // largest frame-to-latest-state lag, per frame channel
	MaxLagReject []Limit // rejected fraction (0..1), per frame channel
	MaxReaction  []Limit // largest reaction, per trigger channel of a response log
}

// subject is something a check measures: a channel, or a frame channel's
// lag to its states.
type subject struct {
	name, topic string
	value       float64
}

// check is one threshold list and what it applies to.
type check struct {
	name, unit string
	atMost     bool
	limits     []Limit
	what       string // what it applies to, for messages: "channel with seq stamps"
	subjects   []subject
}

// ThresholdError is a threshold that cannot apply: its channel pattern
// matches none of the channels its check applies to (Err, a
// *keyexpr.NoMatchError listing them). Check names the check (max-skips,
// min-rate, ...): a command line names its flag.
type ThresholdError struct {
	Check string
	Err   error
}

func (e *ThresholdError) Error() string { return e.Check + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ThresholdError) Unwrap() error { return e.Err }

// ApplyChecks evaluates the thresholds against the report, appends one
// Check per (threshold, channel) and sets Pass. So that a gate never
// passes by checking nothing: a CHANNEL= limit that matches none of the
// channels its check applies to is an error (a *keyexpr.NoMatchError
// listing them), and a limit without CHANNEL= on a report with nothing to
// check adds a failed Check saying so.
func (r *Report) ApplyChecks(t Thresholds) error {
	for _, c := range r.checks(t) {
		var have []string
		for _, s := range c.subjects {
			have = append(have, s.name)
		}
		for i := range c.limits {
			l := &c.limits[i]
			hit := false
			for _, s := range c.subjects {
				hit = hit || l.Matches(s.name, s.topic)
			}
			switch {
			case hit:
			case l.Channel != "":
				return &ThresholdError{Check: c.name, Err: &keyexpr.NoMatchError{Pattern: l.Channel, What: c.what, Have: have}}
			default:
				r.Checks = append(r.Checks, Check{Name: c.name, Limit: l.Value, Unit: c.unit, Pass: false,
					Message: fmt.Sprintf("%s: nothing to check: the log has no %s", c.name, c.what)})
			}
		}
		for _, s := range c.subjects {
			if l, ok := pick(c.limits, s); ok {
				r.add(c, s, l)
			}
		}
	}
	r.markOutageBlindSpots()
	r.updatePass()
	return nil
}

// checks lists every threshold with the subjects it applies to.
func (r *Report) checks(t Thresholds) []check {
	topics := map[string]string{}
	var seqd, data []subject
	var outage []subject
	for _, c := range r.Channels {
		topics[c.Name] = c.Topic
		if c.Kind == KindProbe {
			continue
		}
		longest := 0.0
		for _, o := range c.Outages {
			longest = max(longest, o.GapS*1000)
		}
		data = append(data, subject{c.Name, c.Topic, c.RateHz})
		outage = append(outage, subject{c.Name, c.Topic, longest})
		if livecheck.Counted(c.Kind, c.SeqSource) {
			seqd = append(seqd, subject{c.Name, c.Topic, float64(c.PublisherSkipped)}) // the publisher's, as live max-skips
		}
	}
	restarts := make([]subject, 0, len(seqd))
	for _, c := range r.Channels {
		if c.Kind != KindProbe && livecheck.Counted(c.Kind, c.SeqSource) {
			restarts = append(restarts, subject{c.Name, c.Topic, float64(c.RestartCount)})
		}
	}
	var lagMax, lagRej []subject
	for _, g := range r.Lag {
		lagMax = append(lagMax, subject{g.Frames, topics[g.Frames], g.LatestMs.Max})
		lagRej = append(lagRej, subject{g.Frames, topics[g.Frames], g.RejectedFraction})
	}
	return []check{
		{"max-skips", "", true, t.MaxSkips, whatStamped, seqd},
		{"max-restarts", "", true, t.MaxRestarts, whatStamped, restarts},
		{"max-outage", "ms", true, t.MaxOutageMs, whatData, outage},
		{"min-rate", "Hz", false, t.MinRate, whatData, data},
		{"max-lag", "ms", true, t.MaxLagMs, whatPaired, lagMax},
		{"max-lag-reject", "", true, t.MaxLagReject, whatPaired, lagRej},
		{"max-reaction", "ms", true, t.MaxReaction, "trigger channel of a response log (a replay's capture)", r.reactionSubjects(topics)},
	}
}

// What each check applies to, for messages.
const (
	whatStamped = livecheck.WhatStamped
	whatData    = livecheck.WhatData
	whatPaired  = livecheck.WhatPaired
)

// pick is the last limit that applies to s.
func pick(ls []Limit, s subject) (Limit, bool) { return livecheck.Pick(ls, s.name, s.topic) }

// add appends the check of l on s.
func (r *Report) add(c check, s subject, l Limit) {
	pass, msg := judge(c.name, s.name, c.unit, c.atMost, s.value, l.Value)
	if c.name == "max-skips" {
		if ch := r.Channel(s.name); ch != nil && ch.RecorderDrops > 0 {
			msg += fmt.Sprintf(" (skipped by the publisher; %d more missing by seq were dropped by the recorder, not counted here)", ch.Skipped-ch.PublisherSkipped)
		}
	}
	if why := r.unmeasured(s.name); why != "" { // its value is no measurement
		pass, msg = false, fmt.Sprintf("%s %s: nothing measured: %s", c.name, s.name, why)
	}
	if why := r.failsAnyway(c.name, s.name); why != "" {
		pass, msg = false, msg+": "+why
		if r.noReaction(c.name, s.name) { // no value to compare: not "0 ms"
			msg = fmt.Sprintf("%s %s: no response to measure: %s", c.name, s.name, why)
		}
	}
	r.Checks = append(r.Checks, Check{Name: c.name, Channel: s.name, Value: s.value, Limit: l.Value, Unit: c.unit, Pass: pass, Message: msg})
}

// unmeasured says why no check can measure channel name: a channel of a
// known or declared schema none of whose records decoded (a declaration
// that does not fit the payload) has no stamp, seq or rate to judge, and
// its zero skips, restarts and outages are no pass. "" when it can.
func (r *Report) unmeasured(name string) string {
	ch := r.Channel(name)
	if ch == nil || ch.Kind == KindRaw || ch.Count == 0 || ch.Undecodable < ch.Count {
		return ""
	}
	why := fmt.Sprintf("none of its %d records decoded", ch.Count)
	if u := ch.FirstUndecodable; u != nil {
		why += fmt.Sprintf(" (the first at byte %d: %s)", u.Offset, u.Reason)
	}
	return why
}

// judge compares a check's value on a channel with its limit and says
// so, as record's live triggers do (livecheck.Judge).
func judge(check, channel, unit string, atMost bool, value, limit float64) (pass bool, msg string) {
	return livecheck.Judge(check, channel, unit, atMost, value, limit)
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

// spaced is a unit as it follows a number in a message (livecheck.Spaced).
func spaced(unit string) string { return livecheck.Spaced(unit) }

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// fmtNum writes v as short as it reads (livecheck.FmtNum).
func fmtNum(v float64) string { return livecheck.FmtNum(v) }
