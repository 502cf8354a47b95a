package analyzer

import (
	"fmt"
	"math"

	"github.com/vrlog/vrlog/livecheck"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// ReportSchema names the JSON layout of Report; it changes only with a new
// name (docs/analyze-report.md).
const ReportSchema = "vrlog.analyze/1"

// Report is the result of an analysis. Times are unix ns (…Ns), seconds
// since the session epoch (…Elapsed, …S), or milliseconds (…Ms).
type Report struct {
	Schema      string       `json:"schema"`
	Files       []FileReport `json:"files"`
	EpochNs     int64        `json:"epoch_ns"`
	EpochSource string       `json:"epoch_source"`
	StartNs     int64        `json:"start_ns"`
	EndNs       int64        `json:"end_ns"`
	DurationS   float64      `json:"duration_s"`
	// OutageFactor and LagToleranceMs are the settings the report was made with.
	OutageFactor   float64          `json:"outage_factor"`
	LagToleranceMs float64          `json:"lag_tolerance_ms"`
	Channels       []ChannelReport  `json:"channels"`
	Lag            []LagReport      `json:"lag"`
	Reaction       []ReactionReport `json:"reaction"` // response logs (replay --capture), reaction.go
	// ReplayIncomplete says, per response log, why it holds less than the
	// replay's whole window answered: the replay did not finish, or the
	// log holds fewer triggers than the window; --max-reaction fails on it
	// unless Options.PartialReplay.
	ReplayIncomplete []string `json:"replay_incomplete"`
	partialReplay    bool
	Clock            *ClockReport `json:"clock"`
	// ReceiveClock is what the receive stamps are on: "recorder" (each
	// recorder's own clocks), "simulator" (merge --clock sim converted
	// them; Hosts says how) or "mixed" (several files, some of each).
	ReceiveClock string       `json:"receive_clock"`
	Hosts        []HostReport `json:"hosts"`
	Checks       []Check      `json:"checks"`
	Regressions  []Regression `json:"regressions"`
	Pass         bool         `json:"pass"`
	Notes        []string     `json:"notes"`
	// Snapshots: what triggered each input that is a snapshot
	// (record --snapshot), and the window it holds.
	Snapshots []SnapshotReport `json:"snapshots"`
	// NotCaptured: the time between snapshots of one recording, which
	// no check counts.
	NotCaptured []NotCaptured `json:"not_captured"`
}

// SnapshotReport is one snapshot log's trigger and window. Times are on
// the recorder's wall clock (…Ns) and on the session's elapsed scale
// (…Elapsed: the capture clock, reached from the recorder's clock through
// the clock offset when the log has clock-sync probes).
type SnapshotReport struct {
	File           string        `json:"file"`
	Cause          string        `json:"cause"` // the first trigger's
	TriggerNs      int64         `json:"trigger_ns"`
	TriggerElapsed float64       `json:"trigger_elapsed"`
	BeforeS        float64       `json:"before_s"` // the window asked for
	AfterS         float64       `json:"after_s"`
	FromNs         int64         `json:"from_ns"` // the window held: receive stamps, both included
	ToNs           int64         `json:"to_ns"`
	FromElapsed    float64       `json:"from_elapsed"`
	ToElapsed      float64       `json:"to_elapsed"`
	Short          string        `json:"short"` // why the window holds less than asked; "" when it holds all
	Triggers       []TriggerItem `json:"triggers"`
	TriggerCount   int           `json:"trigger_count"` // all of them; triggers lists the first logfmt.MaxSnapshotTriggers
}

// TriggerItem is one trigger of a snapshot: the first opened its window,
// later ones extended it.
type TriggerItem struct {
	Cause string `json:"cause"`
	AtNs  int64  `json:"at_ns"` // the recorder's wall clock
	// Elapsed is the capture stamp of the sample that showed a timing
	// fault, else AtNs on the capture clock.
	Elapsed   float64 `json:"elapsed"`
	CaptureNs int64   `json:"capture_ns"` // of that sample; 0 for a signal or a query
}

// FileReport says what was read of one input file.
type FileReport struct {
	Path      string `json:"path"`
	SizeBytes int64  `json:"size_bytes"`
	BytesRead int64  `json:"bytes_read"`
	Indexed   bool   `json:"indexed"` // opened from the footer index (false: linear scan of an unfinished log)
	// Finished: the log ends with its footer (its writer closed it).
	Finished bool `json:"finished"`
	// Intact: finished, and nothing torn, skipped or read around
	// (logfmt.Damage.Intact, what --require-intact gates).
	Intact        bool     `json:"intact"`
	SkippedChunks []string `json:"skipped_chunks"`
	// Warnings is damage read around without losing a record: a damaged
	// footer index (read by linear scan), header block or prelude.
	Warnings []string `json:"warnings"`
	// BeingWritten says another process holds the log live (a recorder
	// writing it): "being written by PID 123 (record)"; what was there
	// when it was opened is analyzed, and its torn tail is where the
	// writer was, not damage.
	BeingWritten string `json:"being_written,omitempty"`
	// TornTail is where an unfinished log's last incomplete chunk starts
	// (-1: none); what follows it was never completely written.
	TornTail int64 `json:"torn_tail"`
	// PayloadsChecked: every payload was read and its CRC checked
	// (--full-decode). By default only record metadata and its CRCs are
	// read: a corrupt payload is not noticed (vrlog verify checks it).
	PayloadsChecked bool `json:"payloads_checked"`
	// ReplayOutcome is how the replay that wrote a response log ended (the
	// log's outcome record; null when it has none: not a response log, or
	// the replay was killed before it finished the log).
	ReplayOutcome *logfmt.ReplayOutcome `json:"replay_outcome"`
	response      bool                  // a response log (it has a trigger channel)
	readFrom      int64                 // RecvMonoNs it was read from (Analysis.readFrom)
	apart         bool                  // it began a captured span (Analysis.apart)
	pauses        []pauseMark           // its pauses, whose ends begin its segments (pause.go)
}

// Dist summarises a distribution in milliseconds.
type Dist struct {
	Count uint64  `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

func distMs(h *sampler.Histogram) Dist {
	if h.Count() == 0 {
		return Dist{}
	}
	f := func(v int64) float64 { return round3(float64(v) / 1e6) }
	return Dist{Count: h.Count(), Min: f(h.Min()), Mean: round3(h.Mean() / 1e6),
		P50: f(h.Quantile(0.5)), P90: f(h.Quantile(0.9)), P99: f(h.Quantile(0.99)), Max: f(h.Max())}
}

// round3 is v to three decimals; a value that rounds to zero is 0, never
// -0 (which printed "p50 -0.000").
func round3(v float64) float64 {
	r := math.Round(v*1000) / 1000
	if r == 0 {
		return 0
	}
	return r
}

// ms3 is ns in milliseconds, to the microsecond.
func ms3(ns int64) float64 { return round3(float64(ns) / 1e6) }

// Channel kinds.
const (
	KindState = livecheck.KindState
	KindFrame = livecheck.KindFrame
	KindProbe = livecheck.KindProbe
	KindRaw   = livecheck.KindRaw // schema unknown: transport-level facts only
)

// ChannelReport is one channel's audit.
type ChannelReport struct {
	Name string `json:"name"`
	// Hosts are the host logs of a merged log that recorded the channel
	// (HostReport.Name, else File); empty for one host's log.
	Hosts     []string `json:"hosts"`
	Transport string   `json:"transport"`
	Topic     string   `json:"topic"`
	Schema    string   `json:"schema"`
	Kind      string   `json:"kind"`
	// StampSource and SeqSource say where the capture stamps and the
	// counter came from: the payload (its field), the zenoh timestamp or
	// source info, the receive stamp or the record count (livecheck.Timing).
	StampSource string `json:"stamp_source"`
	SeqSource   string `json:"seq_source"`
	// Error says why the recorder could not record the channel (it has no
	// records); Warning what limited its recording ("" when none).
	Error   string `json:"error"`
	Warning string `json:"warning"`
	// Count is the records read; Undecodable of them had no valid stamp
	// (payload not of the channel's schema) and were left out of the timing.
	Count       uint64 `json:"count"`
	Undecodable uint64 `json:"undecodable"`
	// FirstUndecodable is the first of them: when it was received, and
	// where and why its payload failed its schema (null when none did).
	FirstUndecodable *Undecodable `json:"first_undecodable"`
	RecorderDrops    uint64       `json:"recorder_drops"` // dropped by the recorder, never published-side
	Bytes            uint64       `json:"bytes"`
	// Stamps: capture stamps for decodable channels; receive wall stamps for raw ones.
	FirstNs         int64   `json:"first_ns"`
	LastNs          int64   `json:"last_ns"`
	FirstElapsed    float64 `json:"first_elapsed"`
	DurationS       float64 `json:"duration_s"`
	RateHz          float64 `json:"rate_hz"`         // (decodable samples - 1) over the capture span, outages included
	NominalRateHz   float64 `json:"nominal_rate_hz"` // 1 / median interval
	NominalPeriodMs float64 `json:"nominal_period_ms"`
	DtMs            Dist    `json:"dt_ms"`
	RecvDtMs        Dist    `json:"recv_dt_ms"`
	LatencyMs       *Dist   `json:"latency_ms"` // receive wall minus capture: transport latency plus clock offset
	Skipped         uint64  `json:"skipped"`    // samples missing from seq, whoever lost them (the publisher, the transport or the recorder)
	// PublisherSkipped is what of Skipped the recorder did not drop
	// itself (Skipped − RecorderDrops): the samples the publisher (or the
	// transport before the recorder) skipped, what --max-skips gates, as
	// record's live max-skips counts them.
	PublisherSkipped uint64        `json:"publisher_skipped"`
	SkipEvents       uint64        `json:"skip_events"`
	Skips            []SkipItem    `json:"skips"`
	RestartCount     uint64        `json:"restart_count"`
	Restarts         []RestartItem `json:"restarts"`
	Outages          []OutageItem  `json:"outages"`
	MaxGapS          float64       `json:"max_gap_s"`
	Duplicates       uint64        `json:"duplicates"`
	Reorders         uint64        `json:"reorders"`
}

// Undecodable is a record whose payload did not decode under its
// channel's schema.
type Undecodable struct {
	RecvMonoNs int64  `json:"recv_mono_ns"`
	RecvWallNs int64  `json:"recv_wall_ns"`
	Offset     int    `json:"offset"` // the byte of the payload (or header) the decoder stopped at
	Reason     string `json:"reason"`
}

// SkipItem is one gap in seq.
type SkipItem struct {
	LastSeq uint64  `json:"last_seq"`
	Seq     uint64  `json:"seq"`
	Skipped uint64  `json:"skipped"`
	TNs     int64   `json:"t_ns"`
	Elapsed float64 `json:"elapsed"`
}

// RestartItem is one publisher restart: elapsed froze at ElapsedBefore and
// resumed at ElapsedAfter.
type RestartItem struct {
	LastSeq         uint64  `json:"last_seq"`
	Seq             uint64  `json:"seq"`
	BeforeNs        int64   `json:"before_ns"`
	AfterNs         int64   `json:"after_ns"`
	ElapsedBefore   float64 `json:"elapsed_before"`
	ElapsedAfter    float64 `json:"elapsed_after"`
	GapS            float64 `json:"gap_s"`
	PublisherChange bool    `json:"publisher_change"`
}

// OutageItem is a capture gap above OutageFactor × the nominal period.
type OutageItem struct {
	FromNs      int64   `json:"from_ns"`
	ToNs        int64   `json:"to_ns"`
	FromElapsed float64 `json:"from_elapsed"`
	ToElapsed   float64 `json:"to_elapsed"`
	GapS        float64 `json:"gap_s"`
	Restart     bool    `json:"restart"`
	// Ended: the channel's last sample, then silence until the recording
	// ended (the recorder's heartbeats say when): the stream stopped.
	Ended bool `json:"ended"`
}

// LagReport is one frame channel paired with one state channel.
type LagReport struct {
	Frames           string  `json:"frames"`
	States           string  `json:"states"`
	ToleranceMs      float64 `json:"tolerance_ms"`
	Count            uint64  `json:"count"`
	Unpaired         uint64  `json:"unpaired"` // captured before the first state
	Rejected         uint64  `json:"rejected"`
	RejectedFraction float64 `json:"rejected_fraction"` // of the frames paired within the state stream (not across an outage)
	// AcrossOutage counts the frames whose latest state is from before an
	// outage of the state stream (older than outage_factor × its nominal
	// period when the frame was captured): no lag measurement, left out
	// of every lag figure, of rejected and of --max-lag. AcrossOutages
	// lists the gaps they span.
	AcrossOutage  uint64          `json:"across_outage"`
	AcrossOutages []LagOutageItem `json:"across_outages"`
	LatestMs      Dist            `json:"latest_ms"`  // frame t_ns minus the latest state at or before it
	NearestMs     Dist            `json:"nearest_ms"` // minus the nearest state (signed)
	// InterpolatedMs: the frame's receive stamp minus the states' receive
	// time interpolated at its capture stamp (a frame delay, whatever the
	// state rate).
	InterpolatedMs Dist `json:"interpolated_ms"`
}

// LagOutageItem is a gap of the state stream that frames were paired
// across: from the latest state before it to the first one after.
type LagOutageItem struct {
	FromNs      int64   `json:"from_ns"`
	ToNs        int64   `json:"to_ns"` // 0 when Ended
	FromElapsed float64 `json:"from_elapsed"`
	ToElapsed   float64 `json:"to_elapsed"`
	GapS        float64 `json:"gap_s"`
	Frames      uint64  `json:"frames"`
	MaxLagMs    float64 `json:"max_lag_ms"` // the largest latest-state lag of those frames
	Restart     bool    `json:"restart"`    // the state publisher restarted at the gap's end
	Ended       bool    `json:"ended"`      // no state came after it
}

// describe says what o is in a line: "1 frame from 21.764 s with the
// state of 5.840 s, across the 15.932 s gap to 21.772 s (ended by a
// restart); latest-state lag up to 15923.865 ms".
func (o LagOutageItem) describe() string {
	frames := "frames"
	if o.Frames == 1 {
		frames = "frame"
	}
	if o.Ended {
		return fmt.Sprintf("%d %s with the state of %.3f s, the last one: the states stopped; latest-state lag up to %.3f ms", o.Frames, frames, o.FromElapsed, o.MaxLagMs)
	}
	tag := ""
	if o.Restart {
		tag = ", ended by a restart"
	}
	return fmt.Sprintf("%d %s with the state of %.3f s, across the %.3f s gap to %.3f s%s; latest-state lag up to %.3f ms", o.Frames, frames, o.FromElapsed, o.GapS, o.ToElapsed, tag, o.MaxLagMs)
}

// ClockReport is the recorder/simulator clock offset from clock-sync probes.
type ClockReport struct {
	Probes     int      `json:"probes"`
	Used       int      `json:"used"`
	OffsetMs   float64  `json:"offset_ms"` // simulator clock minus recorder clock
	RTTMs      float64  `json:"rtt_ms"`
	MinRTTMs   float64  `json:"min_rtt_ms"`
	DriftPPM   float64  `json:"drift_ppm"`
	DriftCIPPM *float64 `json:"drift_ci_ppm"` // 95 % confidence half-width; null with fewer than 3 used probes
	DriftValid bool     `json:"drift_valid"`  // drift_ci_ppm ≤ 5 (sampler.MaxDriftCIPPM)
}

// HostReport is one recorder host of a log merged onto the simulator's
// clock: the clock model its receive stamps were converted with.
type HostReport struct {
	// Name is the host's name when the merge had one (collect: its
	// recorder's); File its first log, as merged, and Files all of
	// them when it had several (split files, one recorder's files).
	Name          string   `json:"name"`
	File          string   `json:"file"`
	Files         []string `json:"files"`
	ProbeChannel  string   `json:"probe_channel"`
	TimeService   string   `json:"time_service"`
	OffsetMs      float64  `json:"offset_ms"` // simulator clock minus the host's
	UncertaintyMs float64  `json:"uncertainty_ms"`
	RTTMs         float64  `json:"rtt_ms"`
	Probes        int      `json:"probes"`
	Used          int      `json:"used"`
	DriftPPM      float64  `json:"drift_ppm"`
	DriftValid    bool     `json:"drift_valid"`
	// Channels are the streams this host recorded (its probes aside).
	Channels []string `json:"channels"`
	// RecoveredFrom, when set, says the host's log was the verified copy
	// of one its recorder never finished (a crash): what the recorder
	// still held then is not in it.
	RecoveredFrom string `json:"recovered_from"`
}

// Check is one CI-gate threshold applied to one channel (or the session).
type Check struct {
	Name    string  `json:"name"`    // e.g. max-skips
	Channel string  `json:"channel"` // "" for a session-wide check
	Metric  string  `json:"metric"`  // what a baseline check compared ("dt_ms.p99"); "" for a threshold
	Value   float64 `json:"value"`
	Limit   float64 `json:"limit"`
	Unit    string  `json:"unit"`
	Pass    bool    `json:"pass"`
	Message string  `json:"message"`
}

// Regression is a metric that got worse than in a baseline report.
type Regression struct {
	Channel  string  `json:"channel"`
	Metric   string  `json:"metric"`
	Baseline float64 `json:"baseline"`
	Value    float64 `json:"value"`
}

// Channel returns the channel report with this name, or nil.
func (r *Report) Channel(name string) *ChannelReport {
	for i := range r.Channels {
		if r.Channels[i].Name == name {
			return &r.Channels[i]
		}
	}
	return nil
}
