package dataset

import (
	"time"

	"github.com/vrlog/vrlog/analyzer"
)

// Run is a row of the runs table: one analysis (one analyze command, over
// one or more files of one session).
type Run struct {
	RunID         string `json:"run_id"`
	SchemaVersion int    `json:"schema_version"`
	// Status is pass (every check passed), fail (a check failed: analyze
	// exit 1) or error (the analysis itself failed, Error says why: no
	// channels or events rows).
	Status       string            `json:"status"`
	Error        string            `json:"error"`
	Labels       map[string]string `json:"labels"`
	Appended     time.Time         `json:"appended"` // when the row was written
	VrlogVersion string            `json:"vrlog_version"`
	Hosts        []string          `json:"hosts"` // the recorder hosts of the files (their header's host)
	Files        []string          `json:"files"` // as given to analyze
	AnalyzeS     float64           `json:"analyze_s"`
	// The report's session figures (null when Status is error).
	Start          *time.Time `json:"start"` // start_ns as a timestamp
	StartNs        *int64     `json:"start_ns"`
	EndNs          *int64     `json:"end_ns"`
	DurationS      *float64   `json:"duration_s"`
	EpochNs        *int64     `json:"epoch_ns"`
	EpochSource    *string    `json:"epoch_source"`
	ReceiveClock   *string    `json:"receive_clock"`
	OutageFactor   *float64   `json:"outage_factor"`
	LagToleranceMs *float64   `json:"lag_tolerance_ms"`
	Pass           bool       `json:"pass"`
	Checks         int        `json:"checks"`
	ChecksFailed   int        `json:"checks_failed"`
	Regressions    int        `json:"regressions"`
	Channels       int        `json:"channels"`
	// Damaged: a torn tail, a skipped chunk or damage read around in an
	// input (an unfinished log is not damaged: Intact says it).
	Damaged bool `json:"damaged"`
	// Intact: every input finished and undamaged, as analyze
	// --require-intact judges it (logfmt.Damage.Intact).
	Intact           bool                  `json:"intact"`
	Clock            *analyzer.ClockReport `json:"clock"`
	HostClocks       []analyzer.HostReport `json:"host_clocks" dataset:"list"`
	Notes            []string              `json:"notes"`
	ReplayIncomplete []string              `json:"replay_incomplete"`
}

// Channel is a row of the channels table: one channel of one run, every
// figure of the report's channels[] entry, and of its lag[] entry (a
// frame channel: lag_*) and its reaction[] entry (a trigger channel:
// reaction_*). The report's lists (skips, restarts, outages, the lag's
// across_outages) are rows of the events table.
type Channel struct {
	RunID         string `json:"run_id"`
	SchemaVersion int    `json:"schema_version"`
	analyzer.ChannelReport
	OutageCount int                      `json:"outage_count"`
	Lag         *analyzer.LagReport      `json:"lag"`
	Reaction    *analyzer.ReactionReport `json:"reaction"`
}

// Event is a row of the events table: one skip, restart, outage, frame
// lag across a state outage, check, baseline regression or skipped chunk
// of one run. Columns a kind has no figure for are null.
type Event struct {
	RunID         string `json:"run_id"`
	SchemaVersion int    `json:"schema_version"`
	// Kind: skip, restart, outage, lag_across_outage, check, regression,
	// skipped_chunk.
	Kind    string `json:"kind"`
	Channel string `json:"channel"` // "" for a session-wide check or a file's chunk
	// Capture times: the event's span on the channel's capture clock
	// (unix ns) and on the session's elapsed scale (s). A skip is at the
	// sample after the gap (from = to); a restart from the last sample
	// before it to the first after.
	FromNs      *int64   `json:"from_ns"`
	ToNs        *int64   `json:"to_ns"`
	FromElapsed *float64 `json:"from_elapsed"`
	ToElapsed   *float64 `json:"to_elapsed"`
	GapS        *float64 `json:"gap_s"`
	// Count: samples skipped (skip), frames paired across the gap
	// (lag_across_outage).
	Count           *uint64 `json:"count"`
	LastSeq         *uint64 `json:"last_seq"`
	Seq             *uint64 `json:"seq"`
	Restart         *bool   `json:"restart"` // outage, lag_across_outage: ended by a publisher restart
	Ended           *bool   `json:"ended"`   // outage, lag_across_outage: the stream stopped
	PublisherChange *bool   `json:"publisher_change"`
	// Checks and regressions.
	Name     *string  `json:"name"` // the check, e.g. max-skips
	Metric   *string  `json:"metric"`
	Value    *float64 `json:"value"`
	Limit    *float64 `json:"threshold"` // the check's limit ("limit" is an SQL keyword)
	Baseline *float64 `json:"baseline"`
	Unit     *string  `json:"unit"`
	Pass     *bool    `json:"pass"`
	Message  *string  `json:"message"` // a check's message; a skipped chunk's file and reason
	MaxLagMs *float64 `json:"max_lag_ms"`
}

func ptr[T any](v T) *T { return &v }

// channelRows are the channels of rep.
func channelRows(runID string, rep *analyzer.Report) []Channel {
	rows := make([]Channel, 0, len(rep.Channels))
	for _, c := range rep.Channels {
		row := Channel{RunID: runID, SchemaVersion: SchemaVersion, ChannelReport: c, OutageCount: len(c.Outages)}
		for i := range rep.Lag {
			if rep.Lag[i].Frames == c.Name {
				row.Lag = &rep.Lag[i]
			}
		}
		for i := range rep.Reaction {
			if rep.Reaction[i].Trigger == c.Name {
				row.Reaction = &rep.Reaction[i]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// eventRows are the events of rep.
func eventRows(runID string, rep *analyzer.Report) []Event {
	var rows []Event
	add := func(e Event) {
		e.RunID, e.SchemaVersion = runID, SchemaVersion
		rows = append(rows, e)
	}
	for _, c := range rep.Channels {
		for _, s := range c.Skips {
			add(Event{Kind: "skip", Channel: c.Name, FromNs: ptr(s.TNs), ToNs: ptr(s.TNs), FromElapsed: ptr(s.Elapsed), ToElapsed: ptr(s.Elapsed),
				Count: ptr(s.Skipped), LastSeq: ptr(s.LastSeq), Seq: ptr(s.Seq)})
		}
		for _, r := range c.Restarts {
			add(Event{Kind: "restart", Channel: c.Name, FromNs: ptr(r.BeforeNs), ToNs: ptr(r.AfterNs), FromElapsed: ptr(r.ElapsedBefore), ToElapsed: ptr(r.ElapsedAfter),
				GapS: ptr(r.GapS), LastSeq: ptr(r.LastSeq), Seq: ptr(r.Seq), PublisherChange: ptr(r.PublisherChange)})
		}
		for _, o := range c.Outages {
			add(Event{Kind: "outage", Channel: c.Name, FromNs: ptr(o.FromNs), ToNs: ptr(o.ToNs), FromElapsed: ptr(o.FromElapsed), ToElapsed: ptr(o.ToElapsed),
				GapS: ptr(o.GapS), Restart: ptr(o.Restart), Ended: ptr(o.Ended)})
		}
	}
	for _, l := range rep.Lag {
		for _, o := range l.AcrossOutages {
			add(Event{Kind: "lag_across_outage", Channel: l.Frames, FromNs: ptr(o.FromNs), ToNs: ptr(o.ToNs), FromElapsed: ptr(o.FromElapsed), ToElapsed: ptr(o.ToElapsed),
				GapS: ptr(o.GapS), Count: ptr(o.Frames), Restart: ptr(o.Restart), Ended: ptr(o.Ended), MaxLagMs: ptr(o.MaxLagMs)})
		}
	}
	for _, c := range rep.Checks {
		e := Event{Kind: "check", Channel: c.Channel, Name: ptr(c.Name), Value: ptr(c.Value), Limit: ptr(c.Limit), Unit: ptr(c.Unit), Pass: ptr(c.Pass), Message: ptr(c.Message)}
		if c.Metric != "" {
			e.Metric = ptr(c.Metric)
		}
		add(e)
	}
	for _, r := range rep.Regressions {
		add(Event{Kind: "regression", Channel: r.Channel, Metric: ptr(r.Metric), Value: ptr(r.Value), Baseline: ptr(r.Baseline)})
	}
	for _, f := range rep.Files {
		for _, s := range f.SkippedChunks {
			add(Event{Kind: "skipped_chunk", Message: ptr(f.Path + ": " + s)})
		}
	}
	return rows
}

// runRow is the runs row of a finished analysis.
func runRow(runID string, rep *analyzer.Report, info RunInfo) Run {
	r := baseRun(runID, info)
	r.Status = "pass"
	if !rep.Pass {
		r.Status = "fail"
	}
	start := time.Unix(0, rep.StartNs).UTC()
	r.Start, r.StartNs, r.EndNs, r.DurationS = &start, ptr(rep.StartNs), ptr(rep.EndNs), ptr(rep.DurationS)
	r.EpochNs, r.EpochSource, r.ReceiveClock = ptr(rep.EpochNs), ptr(rep.EpochSource), ptr(rep.ReceiveClock)
	r.OutageFactor, r.LagToleranceMs = ptr(rep.OutageFactor), ptr(rep.LagToleranceMs)
	r.Pass, r.Checks, r.ChecksFailed = rep.Pass, len(rep.Checks), len(rep.Failed())
	r.Regressions, r.Channels = len(rep.Regressions), len(rep.Channels)
	r.Damaged, r.Intact = rep.Damaged(), rep.Intact()
	r.Clock, r.HostClocks = rep.Clock, rep.Hosts
	r.Notes, r.ReplayIncomplete = rep.Notes, rep.ReplayIncomplete
	return r
}

func baseRun(runID string, info RunInfo) Run {
	return Run{RunID: runID, SchemaVersion: SchemaVersion, Labels: info.Labels, Appended: info.now(),
		VrlogVersion: info.VrlogVersion, Hosts: info.Hosts, Files: info.Files, AnalyzeS: info.Analyze.Seconds()}
}
