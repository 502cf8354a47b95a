package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/sampler"
)

// Report is the JSON summary (schema vrlog.replay/1; docs/replay.md).
type Report struct {
	Schema         string   `json:"schema"`
	Inputs         []string `json:"inputs"`
	Clock          string   `json:"clock"`
	Rate           any      `json:"rate"` // a number, or "max"
	Loops          int      `json:"loops"`
	Passes         int      `json:"passes"`
	StartOffsetS   float64  `json:"start_offset_s"`
	EndOffsetS     *float64 `json:"end_offset_s,omitempty"`
	ElapsedS       float64  `json:"elapsed_s"`
	Interrupted    bool     `json:"interrupted"`
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
	Capture  *captureReport  `json:"capture"`
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
	return TimingError{Count: h.Count(), P50: h.Quantile(.5), P99: h.Quantile(.99), Max: h.Max(), Min: h.Min(), Mean: h.Mean()}
}

func buildReport(cfg *config, s *session, sum *player.Summary, o player.Options) *Report {
	r := &Report{Schema: "vrlog.replay/1", Inputs: cfg.files, Clock: "receive", Rate: cfg.rate, Loops: o.Loops,
		Passes: sum.Passes, StartOffsetS: float64(s.src.start-s.logStart) / 1e9, ElapsedS: sum.Elapsed.Seconds(),
		Interrupted: sum.Interrupted, Restamp: o.Restamp, Inject: cfg.injects, Seed: o.Seed,
		PeakQueueMsgs: sum.PeakQueueMsgs, PeakQueueBytes: sum.PeakQueueBytes, SkippedChunks: []string{}}
	if r.Inject == nil {
		r.Inject = []string{}
	}
	if cfg.clock == clockCapture {
		r.Clock = "capture"
	}
	if cfg.rateMax {
		r.Rate = "max"
	}
	if s.src.hasEnd {
		e := float64(s.src.end-s.logStart) / 1e9
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
	if fc.waitSubscribers > 0 {
		w := f.waited.Seconds()
		r.WaitedS = &w
	}
	if fc.control != "" {
		r.Control = &fc.control
	}
	if fc.clockKey != "" {
		r.ClockKey = &fc.clockKey
	}
	if fc.lockstep != "" {
		r.Lockstep = &LockstepReport{Key: fc.lockstep, TimeoutS: fc.lockstepTimeout.Seconds(), Triggers: f.names,
			Answered: r.Total.Answered, Missed: r.Total.Missed}
	}
	r.Capture = f.captured
}

func writeJSON(w io.Writer, r *Report) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}

func us(ns int64) string { return time.Duration(ns).Round(100 * time.Nanosecond).String() }

func writeText(w io.Writer, r *Report) error {
	rate := fmt.Sprint(r.Rate, "×")
	if r.Rate == "max" {
		rate = "max"
	}
	fmt.Fprintf(w, "replayed %d records on %d channels in %.3f s (%s, %s clock, %d pass(es))",
		r.Total.Sent, len(r.Channels), r.ElapsedS, rate, r.Clock, r.Passes)
	if r.Interrupted {
		fmt.Fprint(w, ", interrupted")
	}
	fmt.Fprintln(w)
	if r.RestampDeltaNs != nil {
		fmt.Fprintf(w, "restamped: every stamp shifted by %d ns\n", *r.RestampDeltaNs)
	}
	if r.WaitedS != nil {
		fmt.Fprintf(w, "waited %.3f s for subscribers\n", *r.WaitedS)
	}
	if l := r.Lockstep; l != nil {
		fmt.Fprintf(w, "lockstep on %s: %d trigger records answered, %d missed (no answer within %g s)\n", l.Key, l.Answered, l.Missed, l.TimeoutS)
	}
	if c := r.Capture; c != nil {
		var parts []string
		for _, ch := range c.Channels {
			parts = append(parts, fmt.Sprintf("%s %s %d", ch.Role, ch.Name, ch.Records))
		}
		fmt.Fprintf(w, "captured into %s: %s\n", c.Output, strings.Join(parts, ", "))
		for _, m := range c.Missed {
			fmt.Fprintf(w, "capture: nothing captured on %s\n", m)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANNEL\tTRANSPORT\tTOPIC\tSENT\tDROPPED\tOUTAGE\tERR p50\tp99\tmax\t")
	rows := append(append([]ChannelReport{}, r.Channels...), r.Total)
	for _, c := range rows {
		p50, p99, mx := "-", "-", "-"
		if c.TimingError.Count > 0 {
			p50, p99, mx = us(c.TimingError.P50), us(c.TimingError.P99), us(c.TimingError.Max)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t\n", c.Name, c.Transport, c.Topic, c.Sent, c.Dropped, c.OutageSkipped, p50, p99, mx)
	}
	return tw.Flush()
}
