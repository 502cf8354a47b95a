package replayer

import (
	"math"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/sampler"
)

// Report is the JSON summary (schema vrlog.replay/1; docs/replay.md).
type Report struct {
	Schema       string   `json:"schema"`
	Inputs       []string `json:"inputs"`
	Clock        string   `json:"clock"`
	Rate         any      `json:"rate"` // a number, or "max"
	Loops        int      `json:"loops"`
	Passes       int      `json:"passes"`
	StartOffsetS float64  `json:"start_offset_s"`
	EndOffsetS   *float64 `json:"end_offset_s,omitempty"`
	ElapsedS     float64  `json:"elapsed_s"`
	Interrupted  bool     `json:"interrupted"`
	// EndedBy is why the fixture ended the run early ("" when it did
	// not): a controller gone, too many missed steps, no answer at all.
	EndedBy        string   `json:"ended_by,omitempty"`
	Restamp        bool     `json:"restamp"`
	RestampDeltaNs *int64   `json:"restamp_delta_ns,omitempty"`
	Inject         []string `json:"inject"`
	Seed           uint64   `json:"seed"`
	LowLatency     bool     `json:"low_latency"`
	PeakQueueMsgs  int      `json:"peak_queue_records"`
	PeakQueueBytes int      `json:"peak_queue_bytes"`
	SkippedChunks  []string `json:"skipped_chunks"`
	// The test fixture's parts (null when not asked for).
	WaitedS  *float64        `json:"waited_for_subscribers_s"`
	Control  *string         `json:"control"`
	ClockKey *string         `json:"clock_key"`
	Lockstep *LockstepReport `json:"lockstep"`
	Capture  *CaptureReport  `json:"capture"`
	// Outcome is how the replay ended, as the response log records it.
	Outcome  Outcome         `json:"outcome"`
	Channels []ChannelReport `json:"channels"`
	Total    ChannelReport   `json:"total"`
}

// LockstepReport is --lockstep's outcome.
type LockstepReport struct {
	Key      string   `json:"key"`
	TimeoutS float64  `json:"timeout_s"`
	Triggers []string `json:"triggers"`
	Answered uint64   `json:"answered"`
	Missed   uint64   `json:"missed"` // trigger records released after the timeout, unanswered
	// Late counts the answers that named an earlier trigger (dropped, never
	// paired with the current one); LateAnswers lists the first 100.
	Late        uint64       `json:"late"`
	LateAnswers []LateAnswer `json:"late_answers"`
	// Tagged counts the answers that named their trigger (AnswerTag).
	Tagged uint64 `json:"tagged"`
	// Duplicates counts the answers that named a trigger already answered
	// (dropped: a controller answering twice).
	Duplicates uint64 `json:"duplicates"`
	// UntaggedAfterMiss counts the triggers released by an untagged answer
	// after a missed step: each may have been released by the answer of
	// the trigger before it, come late (their pairing is not known).
	UntaggedAfterMiss uint64 `json:"untagged_after_miss"`
	// MaxMissed and MaxMissedInARow are the bounds that end the run (0: none).
	MaxMissed       int `json:"max_missed"`
	MaxMissedInARow int `json:"max_missed_in_a_row"`
}

// LateAnswer is one late answer: the trigger it named, and the one waiting.
type LateAnswer struct {
	Seq     uint64 `json:"seq"`
	Current uint64 `json:"current_seq"`
}

// ChannelReport is one channel's line.
type ChannelReport struct {
	Name          string      `json:"name"`
	Transport     string      `json:"transport"`
	Topic         string      `json:"topic"`
	Schema        string      `json:"schema"`
	Sent          uint64      `json:"sent"`
	Bytes         uint64      `json:"bytes"`
	Dropped       uint64      `json:"dropped"`
	OutageSkipped uint64      `json:"outage_skipped"`
	Reseq         uint64      `json:"reseq"`
	RestampErrors uint64      `json:"restamp_errors"`
	Steps         uint64      `json:"steps"`
	Answered      uint64      `json:"answered"` // lockstep
	Missed        uint64      `json:"missed"`
	TimingError   TimingError `json:"timing_error_ns"`
}

// TimingError summarizes actual minus scheduled publish time, ns. Count 0
// (rate max, or only steps) leaves the rest 0.
type TimingError struct {
	Count uint64  `json:"count"`
	P50   int64   `json:"p50"`
	P99   int64   `json:"p99"`
	Max   int64   `json:"max"`
	Min   int64   `json:"min"`
	Mean  float64 `json:"mean"`
}

func timing(h *sampler.Histogram) TimingError {
	if h.Count() == 0 {
		return TimingError{}
	}
	return TimingError{Count: h.Count(), P50: h.Quantile(.5), P99: h.Quantile(.99), Max: h.Max(), Min: h.Min(), Mean: math.Round(h.Mean())}
}

// sec is seconds to the microsecond: the report's precision for every
// time in seconds (elapsed_s printed 1.0505454379999999).
func sec(s float64) float64 { return math.Round(s*1e6) / 1e6 }

func buildReport(cfg *Config, s *session, sum *player.Summary, o player.Options) *Report {
	r := &Report{Schema: "vrlog.replay/1", Inputs: cfg.Files, Clock: cfg.Clock.String(), Rate: cfg.Rate, Loops: o.Loops,
		Passes: sum.Passes, StartOffsetS: sec(float64(s.src.start-s.logStart) / 1e9), ElapsedS: sec(sum.Elapsed.Seconds()),
		Interrupted: sum.Interrupted, Restamp: o.Restamp, Inject: cfg.Inject, Seed: o.Seed,
		PeakQueueMsgs: sum.PeakQueueMsgs, PeakQueueBytes: sum.PeakQueueBytes, SkippedChunks: []string{}}
	if r.Inject == nil {
		r.Inject = []string{}
	}
	if cfg.RateMax {
		r.Rate = "max"
	}
	if s.src.hasEnd {
		e := sec(float64(s.src.end-s.logStart) / 1e9)
		r.EndOffsetS = &e
	}
	if sum.HasRestamp {
		d := sum.RestampDelta
		r.RestampDeltaNs = &d
	}
	for _, in := range s.inputs {
		if tt := in.r.TornTail(); tt != nil {
			r.SkippedChunks = append(r.SkippedChunks, tt.Error())
		}
		for _, ce := range in.r.SkippedChunks() {
			r.SkippedChunks = append(r.SkippedChunks, ce.Error())
		}
	}
	var all sampler.Histogram
	r.Total = ChannelReport{Name: "total"}
	for i := range sum.Channels {
		c := &sum.Channels[i]
		out := s.outs[i]
		r.Channels = append(r.Channels, ChannelReport{Name: c.Name, Transport: out.Transport.String(), Topic: out.Topic,
			Schema: out.Schema, Sent: c.Sent, Bytes: c.Bytes, Dropped: c.Dropped, OutageSkipped: c.OutageSkip,
			Reseq: c.Reseq, RestampErrors: c.RestampErr, Steps: c.Steps, Answered: c.Answered, Missed: c.Missed, TimingError: timing(&c.Err)})
		all.Merge(&c.Err)
		t := &r.Total
		t.Sent += c.Sent
		t.Bytes += c.Bytes
		t.Dropped += c.Dropped
		t.OutageSkipped += c.OutageSkip
		t.Reseq += c.Reseq
		t.RestampErrors += c.RestampErr
		t.Steps += c.Steps
		t.Answered += c.Answered
		t.Missed += c.Missed
	}
	r.Total.TimingError = timing(&all)
	return r
}

// addFixture adds the test fixture's parts.
func (r *Report) addFixture(f *fixture) {
	fc := f.cfg
	if fc.WaitSubscribers > 0 || fc.WaitController {
		w := sec(f.waited.Seconds())
		r.WaitedS = &w
	}
	if fc.Control != "" {
		r.Control = &fc.Control
	}
	if fc.ClockKey != "" {
		r.ClockKey = &fc.ClockKey
	}
	if fc.Lockstep != "" {
		f.mu.Lock()
		r.Lockstep = &LockstepReport{Key: fc.Lockstep, TimeoutS: sec(fc.LockstepTimeout.Seconds()), Triggers: f.names,
			Answered: r.Total.Answered, Missed: r.Total.Missed, Late: f.lateN, LateAnswers: append([]LateAnswer{}, f.late...),
			Tagged: f.answers.tagged.Load(), Duplicates: f.dupN, UntaggedAfterMiss: f.untagged, MaxMissed: fc.MaxMissed, MaxMissedInARow: max(fc.MaxMissedInARow, 0)}
		f.mu.Unlock()
	}
	r.Capture = f.captured
}

// Outcome is how a replay ended (logfmt.ReplayOutcome): a response log
// (Config.Capture) records it as its last record.
type Outcome = logfmt.ReplayOutcome
