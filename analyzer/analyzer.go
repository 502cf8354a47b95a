package analyzer

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/livecheck"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
	"github.com/vrlog/vrlog/schema"
)

// Options tunes an analysis. The zero value is usable.
type Options struct {
	// OutageFactor: a capture gap above this × the nominal period is an
	// outage (default 3).
	OutageFactor float64
	// LagTolerance: frames whose lag to the latest state exceeds it are
	// rejected (default 50 ms).
	LagTolerance time.Duration
	// FullDecode decodes every payload with epoch 0 instead of reading the
	// stamps the recorder stored; slower, and must give the same report.
	FullDecode bool
	// Tolerant skips corrupt chunks (listed in the report) instead of failing.
	Tolerant bool
	// PlotBins > 0 collects per-channel series for plots (HTML report).
	PlotBins int
	// MaxEvents caps each channel's listed skips, restarts and outages
	// (counts are exact regardless; default 1000).
	MaxEvents int
	// LagWindow bounds the memory of frame-to-state lag pairing: states
	// and frames are paired as they arrive, exactly while they are out of
	// capture order by less than this (default 2 s; see
	// sampler.LagStream); beyond it a note says so. Negative keeps every
	// state: exact whatever the order, memory grows with the log.
	LagWindow time.Duration
	// partRecords is the fewest data records a part of a log read
	// apart may have (0: minPartRecords; tests split short logs).
	partRecords int
	// PartialReplay gates a response log of a replay that did not finish,
	// or did not release every trigger of its window, on what it holds;
	// by default such a log fails --max-reaction (Report.ReplayIncomplete).
	PartialReplay bool
}

// channel is one channel's running analysis.
type channel struct {
	rep    ChannelReport
	kind   string
	raw    bool // no stored stamps: timed by the receive stamp (compared once, not per record)
	timing livecheck.Timing
	codec  codec.Codec // nil when vrlog cannot decode the payload
	stream *sampler.Stream
	lag    *sampler.LagStream   // a frame channel's pairing with its state channel (lagOf)
	lagOf  *channel             // that state channel
	lagSer *lagSeries           // the pairing over time, for plots (PlotBins > 0)
	feeds  []*sampler.LagStream // a state channel's: the pairings it feeds
	probes []sampler.Probe
	// lagFrom is the position of the file the pairing began with (files
	// before held no records of the pair); lagFixed, that it judges
	// outages by a threshold set when it was paired again (repair).
	lagFrom  int
	lagFixed bool
	series   *series
	first    bool          // no record seen yet
	pub      string        // last publisher identity, reused while it does not change
	react    *reactChannel // a response log's trigger or response channel (reaction.go)
	badMono  int64         // receive stamp of the file's first undecodable record, until explained (whyUndecodable)
}

// Analysis accumulates records from one or more logs.
type Analysis struct {
	opts     Options
	byName   map[string]*channel
	byStream map[logfmt.Stream]*channel // channels across files: logfmt.StreamOf
	input    int                        // the position of the file being planned or read
	planned  []string                   // Plan's paths in time order (Files)
	order    []*channel
	files    []FileReport
	epoch    int64
	epochSrc string
	haveEp   bool
	epState  bool     // the epoch is a first state sample (Epoch.State)
	epFile   int      // the input it came from
	span     [2]int64 // capture range over all stamped channels, for plot bins
	lags     []namedLag
	snaps    []fileSnapshot
	gaps     []NotCaptured // between snapshots of one recording
	notes    []string      // about the inputs
	onSim    int           // files whose receive stamps are on the simulator's clock
	hosts    []HostReport
	hostsOf  map[string][]string // a merged log's channel -> the hosts' logs that recorded it
	rec      recordingSpan       // the recorder's heartbeats: the recording's own end
	logClock *logClock           // the response log being read: its responses' place on its log's clock
	readFrom int64               // RecvMonoNs the current file is read from (overlapping snapshots)
	readTo   int64               // and up to, excluded (its next pause; 0: to its end)
	reread   int                 // parts read again after a seam that did not merge (readData)
	// readAgain is the bytes of the current file read twice so: the
	// report says how much of the file was read.
	readAgain int64
}

type namedLag struct {
	name string
	sum  *sampler.LagSummary
}

// AnalyzeFiles analyzes the logs at paths as one session, in time order
// (split files of one recording, snapshots of one recording, or logs of
// one session from several recorders).
func AnalyzeFiles(paths []string, opts Options) (*Report, error) {
	a := New(opts)
	if err := a.Plan(paths); err != nil {
		return nil, err
	}
	for _, p := range a.Files() {
		if err := a.AddFile(p); err != nil {
			return nil, err
		}
	}
	return a.Report(), nil
}

// New returns an empty Analysis.
func New(opts Options) *Analysis {
	if opts.OutageFactor <= 0 {
		opts.OutageFactor = 3
	}
	if opts.LagTolerance <= 0 {
		opts.LagTolerance = 50 * time.Millisecond
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = 1000
	}
	a := &Analysis{opts: opts, byName: map[string]*channel{}, byStream: map[logfmt.Stream]*channel{}, hostsOf: map[string][]string{}}
	return a
}

// Plan reads the channel tables of the logs AddFile will be given, in
// the order of their first records (Files: give AddFile that order), so that a frame channel and its state channel in different
// files (one recorder's states, another's frames) are paired from their
// first records, and checks that the logs share one receive clock
// (hostclock.OneReceiveClock: logs of several hosts, or on the
// simulator's and a recorder's clock, are refused with its error). One
// log needs no plan.
func (a *Analysis) Plan(paths []string) error {
	a.planned = slices.Clone(paths)
	if len(paths) < 2 {
		return nil
	}
	rs := make([]*logfmt.Reader, 0, len(paths))
	defer func() {
		for _, r := range rs {
			r.Close()
		}
	}()
	for _, p := range paths {
		r, err := logfmt.Open(p, logfmt.ReaderOptions{Tolerant: a.opts.Tolerant})
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	// One receive clock, or the figures that compare receive stamps
	// across files (latency, the ended outage, the clock offset from
	// pooled probes) would compare different hosts' clocks.
	if err := hostclock.OneReceiveClock(rs, paths); err != nil {
		return err
	}
	// In time order: the files of one recording given out of order would
	// read as a publisher restart at each seam.
	order := make([]int, len(paths))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(firstWall(rs[x]), firstWall(rs[y])) })
	for i, k := range order {
		r := rs[k]
		a.planned[i] = paths[k]
		a.input = i
		a.channels(r)
		if a.opts.PlotBins > 0 { // the plots' bins span every file (snapshots far apart)
			for _, c := range r.Channels() {
				if st := r.StatsOf(c.ID); st.HasCapture && st.Records > 0 {
					a.widen(st.FirstCaptureNs, st.LastCaptureNs)
				}
			}
		}
	}
	a.pairFrames()
	return nil
}

// Files are the paths Plan was given in the order to give AddFile: that of
// their first records (receive wall clock; one receive clock, so
// comparable), ties in the order given.
func (a *Analysis) Files() []string { return a.planned }

// firstWall is the receive wall stamp of r's earliest record (MaxInt64
// for an empty log: it goes last).
func firstWall(r *logfmt.Reader) int64 {
	first := int64(math.MaxInt64)
	for _, st := range r.Stats() {
		if st.Records > 0 {
			first = min(first, st.FirstWallNs)
		}
	}
	return first
}

// AddFile reads one log into the analysis.
func (a *Analysis) AddFile(path string) error {
	r, err := logfmt.Open(path, logfmt.ReaderOptions{Tolerant: a.opts.Tolerant})
	if err != nil {
		return err
	}
	defer r.Close()
	a.readFrom, a.readTo, a.input, a.readAgain = 0, 0, len(a.files), 0
	apart := false
	if a.addSnapshot(path, r) {
		a.readFrom, apart = a.overlapStart()
	}
	if _, _, err := logfmt.StoredEpoch(r.Header().Metadata); err != nil {
		if _, general := r.Header().Metadata[logfmt.MetaSessionEpoch]; general { // a snapshot's: noted by addSnapshot
			a.notes = append(a.notes, fmt.Sprintf("%s: %v", path, err))
		}
	} else if e, ok := storedEpoch(r.Header().Metadata); ok {
		a.offerEpoch(e)
	}
	fr := FileReport{Path: path, Indexed: r.Indexed(), Finished: r.Finished(), TornTail: -1, BeingWritten: r.BeingWritten(), PayloadsChecked: a.opts.FullDecode, SkippedChunks: []string{}, Warnings: []string{},
		readFrom: a.readFrom}
	if tt := r.TornTail(); tt != nil {
		fr.TornTail = tt.Offset
	}
	if st, err := os.Stat(path); err == nil {
		fr.SizeBytes = st.Size()
	}
	sim, err := hostclock.ParseSimClock(r.Header().Metadata)
	if err != nil {
		return inFile(path, err)
	}
	if sim != nil {
		a.onSim++
		for _, h := range sim.Hosts {
			a.hosts = append(a.hosts, HostReport{Name: h.Name, File: h.File, Files: append([]string{}, h.Files...), ProbeChannel: h.ProbeChannel, TimeService: sim.Service,
				OffsetMs: ms3(h.OffsetNs), UncertaintyMs: ms3(h.UncertaintyNs), RTTMs: ms3(h.RTTNs), Probes: h.Probes, Used: h.Used,
				DriftPPM: round3(h.DriftPPM), DriftValid: h.DriftValid, Channels: append([]string{}, h.Channels...), RecoveredFrom: h.RecoveredFrom})
			for _, c := range h.Channels {
				a.hostsOf[c] = append(a.hostsOf[c], h.Label())
			}
		}
	}

	response := isResponseLog(r.Channels())
	if response {
		fr.ReplayOutcome = readOutcome(r)
		fr.response = true
	}
	ids, dataIDs, probeIDs := a.channels(r)
	if fr.ReplayOutcome != nil {
		noteOutcome(ids, fr.ReplayOutcome)
	}
	if response && (fr.ReplayOutcome == nil || !fr.ReplayOutcome.Finished) {
		noteUnfinished(ids)
	}
	if !response { // a response log's recording outlasts the replay by its linger: no outage of the controller
		a.rec.note(r, func(id uint16) *channel {
			if int(id) < len(ids) {
				return ids[id]
			}
			return nil
		})
	}
	a.pairFrames()
	if apart {
		a.apart(path, r)
	}
	for _, c := range r.Channels() {
		if int(c.ID) >= len(ids) || ids[c.ID] == nil {
			continue // the recorder's heartbeats
		}
		ch := ids[c.ID]
		st := r.StatsOf(c.ID)
		ch.rep.RecorderDrops += st.Drops
		if st.HasCapture && a.opts.PlotBins > 0 {
			a.widen(st.FirstCaptureNs, st.LastCaptureNs)
		}
	}
	if a.opts.PlotBins > 0 {
		for _, ch := range a.order {
			if ch.series == nil && ch.kind != KindProbe {
				ch.series = newSeries(a.opts.PlotBins)
			}
		}
	}

	// A response log's responses go on its log's clock (logClock).
	a.logClock = nil
	if response {
		if a.logClock, err = readLogClock(r, ids); err != nil {
			return inFile(path, err)
		}
	}
	// Data channels: metadata only unless FullDecode; in segments
	// between the recording's pauses.
	pauses, err := a.readPauses(path, r)
	bounds := boundsOf(pauses)
	for i := 0; err == nil && i <= len(bounds); i++ {
		if i > 0 {
			b := bounds[i-1]
			a.readFrom = b.at
			if !b.end {
				b.p.pausing(a.order)
			} else if err = a.paused(path, r, b.p, dataIDs, ids); err != nil {
				break
			}
		}
		a.readTo = 0
		if i < len(bounds) {
			a.readTo = bounds[i].at
		}
		err = a.readData(r, ids, dataIDs)
	}
	fr.pauses = pauses
	if err == nil {
		err = a.whyUndecodable(r, ids)
	}
	if err == nil && fr.response {
		err = readAnswerTags(r, ids)
	}
	if err != nil {
		return inFile(path, err)
	}
	// Clock-sync probes: tiny, always decoded.
	if len(probeIDs) > 0 {
		it := r.Records(logfmt.Filter{Channels: probeIDs})
		for it.Next() {
			rec := it.Record()
			if int(rec.Channel) >= len(ids) || ids[rec.Channel] == nil {
				continue
			}
			ch := ids[rec.Channel]
			ch.rep.Count++
			ch.rep.Bytes += uint64(len(rec.Header) + len(rec.Payload))
			p, err := codec.DecodeClockProbe(rec.Payload)
			if err != nil {
				ch.rep.Undecodable++
				continue
			}
			if sim == nil { // a merged log's probes are its hosts' (Hosts), not one recorder clock's
				ch.probes = append(ch.probes, sampler.Probe{T1: p.T1Ns, T2: p.T2Ns, T3: p.T3Ns, T4: p.T4Ns})
			}
		}
		if err := it.Err(); err != nil {
			return inFile(path, err)
		}
	}
	for _, ce := range r.SkippedChunks() {
		fr.SkippedChunks = append(fr.SkippedChunks, ce.Error())
	}
	for _, ce := range r.Warnings() {
		fr.Warnings = append(fr.Warnings, ce.Error())
	}
	fr.Intact = fr.damage().Intact()
	// A linear scan may read a block again (a torn tail's last block,
	// read once to find it torn): the report says how much of the file.
	fr.BytesRead = min(r.BytesRead()-a.readAgain, fr.SizeBytes)
	a.files = append(a.files, fr)
	return a.judgeable()
}

// inFile names path in err, unless err names it already (logfmt's
// corruption errors do): context once.
func inFile(path string, err error) error {
	if ce, ok := errors.AsType[*logfmt.CorruptionError](err); ok && ce.File == path {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// channels matches r's channels to the analysis's (by name, across
// files): the analysis of each channel id, and the ids of data and of
// clock-probe channels.
func (a *Analysis) channels(r *logfmt.Reader) (ids []*channel, dataIDs, probeIDs []uint16) {
	responseLog := isResponseLog(r.Channels())
	for _, c := range r.Channels() {
		if isHeartbeat(c) || isOutcome(c) || IsPause(c) {
			continue
		}
		ch := a.channel(c)
		markReaction(ch, c, responseLog)
		if int(c.ID) >= len(ids) {
			ids = append(ids, make([]*channel, int(c.ID)+1-len(ids))...)
		}
		ids[c.ID] = ch
		if ch.kind == KindProbe {
			probeIDs = append(probeIDs, c.ID)
		} else {
			dataIDs = append(dataIDs, c.ID)
		}
	}
	return ids, dataIDs, probeIDs
}

// eachData calls fn for each record of the data channels, metadata only
// unless FullDecode. ids is indexed by channel id: the hot loop never hashes.
func (a *Analysis) eachData(r *logfmt.Reader, ids []*channel, dataIDs []uint16, fn func(*channel, *logfmt.Record)) error {
	if len(dataIDs) == 0 {
		return nil
	}
	// Chunks are loaded ahead on the other cores while this one keeps
	// the books.
	it := r.Records(logfmt.Filter{Channels: dataIDs, Start: a.readFrom, End: a.readTo, MetaOnly: !a.opts.FullDecode, Workers: min(runtime.GOMAXPROCS(0)-1, 4)})
	defer it.Close()
	for it.Next() {
		rec := it.Record()
		if int(rec.Channel) < len(ids) && ids[rec.Channel] != nil {
			fn(ids[rec.Channel], rec)
		}
	}
	return it.Err()
}

func (a *Analysis) widen(lo, hi int64) {
	if a.span == [2]int64{} {
		a.span = [2]int64{lo, hi}
		return
	}
	a.span[0], a.span[1] = min(a.span[0], lo), max(a.span[1], hi)
}

// channel finds or creates the analysis of c, matched across files by
// its stream (logfmt.StreamOf, as merge matches them): a different
// stream under a name already taken is NAME@N, N the file's position.
func (a *Analysis) channel(c logfmt.Channel) *channel {
	if ch, ok := a.byStream[logfmt.StreamOf(c)]; ok {
		return ch
	}
	name := c.Name
	if a.byName[name] != nil {
		name = logfmt.InputName(name, a.input)
		a.notes = append(a.notes, fmt.Sprintf("channel %s of file %d differs from the one of that name in an earlier file (transport/topic/schema): analyzed apart as %s", c.Name, a.input+1, name))
	}
	ch := &channel{first: true, rep: ChannelReport{Name: name, Transport: c.Transport.String(), Topic: c.Topic, Schema: c.Schema,
		Error: c.Meta[logfmt.MetaError], Warning: c.Meta[logfmt.MetaWarning]}}
	ch.timing = livecheck.TimingOf(&c)
	ch.kind = ch.timing.Kind
	ch.raw = !ch.timing.Stamped
	ch.codec, _ = schema.Lookup(&c)
	ch.rep.Kind = ch.kind
	ch.rep.StampSource, ch.rep.SeqSource = ch.timing.StampFrom, ch.timing.SeqFrom
	// The report judges outages from the summary: no live outage flags.
	ch.stream = sampler.NewStream(sampler.Config{OutageFactor: a.opts.OutageFactor, MaxEvents: a.opts.MaxEvents, NoLiveOutage: true})
	a.byName[name], a.byStream[logfmt.StreamOf(c)] = ch, ch
	a.order = append(a.order, ch)
	return ch
}

// kindOf is the kind of a channel of schema.
func kindOf(schema string) string { return livecheck.KindOf(schema) }

// sampleOf sets s to the sampler's view of data record r of ch, the
// channel's n-th record; false for a record of a known schema without a
// valid stamp (undecodable). pub caches the last publisher identity, so
// that an unchanged one is not copied again.
func (a *Analysis) sampleOf(s *sampler.Sample, ch *channel, r *logfmt.Record, n uint64, pub *string) (ok bool) {
	if string(r.PublisherID) != *pub { // compared without allocating
		*pub = string(r.PublisherID)
	}
	*s, ok = livecheck.StoredSample(&ch.timing, r, n)
	if a.opts.FullDecode && !ch.raw && ch.codec != nil {
		var err error
		if sc, declared := ch.codec.(*schema.Codec); declared {
			s.Seq, s.TNs, err = sc.Recheck(r)
		} else {
			s.Seq, s.TNs, err = ch.codec.Stamp(r.Header, r.Payload)
		}
		ok = err == nil
		if err != nil && ch.rep.FirstUndecodable == nil {
			ch.rep.FirstUndecodable = undecodable(r, err)
		}
	}
	if ch.react != nil && ch.react.trigger {
		// A response log's released trigger: its receive stamp is the
		// replay's release time, its capture stamp the log's; their
		// difference is no transport latency.
		s.RecvWallNs = 0
	}
	if ch.react != nil && !ch.react.trigger && ch.raw && a.logClock != nil {
		s.TNs = a.logClock.at(s.TNs) // a response stamped on receipt: on the triggers' timeline
	}
	s.Publisher = *pub
	return ok
}

// Report computes the report. Checks and baseline comparison are applied
// separately (Check, CompareBaseline).
func (a *Analysis) Report() *Report {
	// Lists are [] when empty, never null or absent (docs/analyze-report.md).
	rep := &Report{Schema: ReportSchema, Files: a.files, Pass: true, Checks: []Check{}, Lag: []LagReport{},
		Channels: []ChannelReport{}, Regressions: []Regression{}, Notes: []string{},
		OutageFactor: a.opts.OutageFactor, LagToleranceMs: round3(float64(a.opts.LagTolerance) / 1e6),
		ReceiveClock: "recorder", Hosts: []HostReport{}}
	if rep.Files == nil {
		rep.Files = []FileReport{}
	}
	rep.Notes = append(rep.Notes, a.notes...)
	switch {
	case a.onSim > 0 && a.onSim == len(a.files):
		rep.ReceiveClock = "simulator"
	case a.onSim > 0:
		rep.ReceiveClock = "mixed"
		rep.Notes = append(rep.Notes, "some files' receive stamps are on the simulator's clock (merged onto it), others on their recorders': latency and receive intervals of a channel that spans both compare different clocks")
	}
	rep.Hosts = append(rep.Hosts, a.hosts...)
	if !a.haveEp {
		a.fallbackEpoch(rep)
	}
	rep.EpochNs, rep.EpochSource = a.epoch, a.epochSrc
	if len(a.files) > 1 && a.epFile >= 0 && a.epFile < len(a.files) && !strings.Contains(a.epochSrc, "(in ") {
		rep.EpochSource += " (in " + a.files[a.epFile].Path + ")"
	}
	el := func(t int64) float64 { return round3(codec.Elapsed(t, a.epoch)*1000) / 1000 }

	var states, frames []*channel
	var probes []sampler.Probe
	first := true
	for _, ch := range a.order {
		c := ch.rep
		c.Skips, c.Restarts, c.Outages = []SkipItem{}, []RestartItem{}, []OutageItem{}
		c.Hosts = append([]string{}, a.hostsOf[c.Name]...)
		sum := ch.stream.Summary()
		if ch.kind == KindProbe {
			probes = append(probes, ch.probes...)
			rep.Channels = append(rep.Channels, c)
			continue
		}
		if sum.Count > 0 {
			c.FirstNs, c.LastNs = sum.MinTNs, sum.MaxTNs
			c.FirstElapsed = el(sum.MinTNs) // raw channels: of the receive stamp
			if ch.kind != KindRaw {
				if first || sum.MinTNs < rep.StartNs {
					rep.StartNs = sum.MinTNs
				}
				if first || sum.MaxTNs > rep.EndNs {
					rep.EndNs = sum.MaxTNs
				}
				first = false
			}
			c.DurationS = round3(float64(sum.MaxTNs-sum.MinTNs)/1e9*1000) / 1000
		}
		c.RateHz = round3(sum.RateHz())
		c.NominalPeriodMs = round3(float64(sum.NominalPeriodNs) / 1e6)
		if sum.NominalPeriodNs > 0 {
			c.NominalRateHz = round3(1e9 / float64(sum.NominalPeriodNs))
		}
		c.DtMs = distMs(&ch.stream.Dt)
		c.RecvDtMs = distMs(&ch.stream.RecvDt)
		if ch.stream.Latency.Count() > 0 {
			d := distMs(&ch.stream.Latency)
			c.LatencyMs = &d
		}
		c.Skipped, c.SkipEvents, c.RestartCount = sum.Skipped, sum.SkipEvents, sum.RestartCount
		c.PublisherSkipped = sum.Skipped - min(sum.Skipped, c.RecorderDrops) // the recorder's own drops are seq gaps too
		c.Duplicates, c.Reorders = sum.Duplicates, sum.Reorders
		for _, s := range sum.Skips {
			c.Skips = append(c.Skips, SkipItem{LastSeq: s.LastSeq, Seq: s.Seq, Skipped: s.Skipped, TNs: s.TNs, Elapsed: el(s.TNs)})
		}
		for _, r := range sum.Restarts {
			c.Restarts = append(c.Restarts, RestartItem{LastSeq: r.LastSeq, Seq: r.Seq, BeforeNs: r.BeforeTNs, AfterNs: r.AfterTNs,
				ElapsedBefore: el(r.BeforeTNs), ElapsedAfter: el(r.AfterTNs), GapS: round3(float64(r.AfterTNs-r.BeforeTNs)/1e9*1000) / 1000,
				PublisherChange: r.PublisherChange})
		}
		for _, g := range sum.Outages {
			c.Outages = append(c.Outages, OutageItem{FromNs: g.FromTNs, ToNs: g.ToTNs, FromElapsed: el(g.FromTNs), ToElapsed: el(g.ToTNs),
				GapS: round3(float64(g.Len())/1e9*1000) / 1000, Restart: g.Restart})
		}
		if o, ok := a.rec.trailingOutage(&c, a.opts.OutageFactor, sum.NominalPeriodNs); ok {
			o.FromElapsed, o.ToElapsed = el(o.FromNs), el(o.ToNs)
			c.Outages = append(c.Outages, o)
			rep.Notes = append(rep.Notes, endedNote(c.Name, o))
		}
		if sum.Count > 1 {
			c.MaxGapS = round3(float64(ch.stream.Dt.Max())/1e9*1000) / 1000
		}
		rep.Channels = append(rep.Channels, c)
		switch ch.kind {
		case KindState:
			states = append(states, ch)
		case KindFrame:
			frames = append(frames, ch)
		}
	}
	if !first {
		rep.DurationS = round3(float64(rep.EndNs-rep.StartNs)/1e9*1000) / 1000
	}
	for _, f := range frames {
		s := f.lagOf
		if s == nil {
			continue
		}
		if !f.lag.Judge(a.outageOf(s)) { // AddFile paired it again where it would not (judgeable)
			rep.Notes = append(rep.Notes, fmt.Sprintf("lag of %s vs %s: some frames were judged across an outage of the states, or not, by a threshold other than the report's", f.rep.Name, s.rep.Name))
		}
		l := f.lag.Summary()
		if n := f.lag.Late(); n > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("lag of %s vs %s: %d samples arrived beyond the pairing window (%v of capture time out of order, or after %d states without a frame): "+
				"the lag figures may differ from an exact pairing; analyze again with a larger lag window (negative: unbounded)",
				f.rep.Name, s.rep.Name, n, a.lagWindow(), sampler.DefaultLagMaxStates))
		}
		a.lags = append(a.lags, namedLag{f.rep.Name + " vs " + s.rep.Name, l})
		rep.Lag = append(rep.Lag, LagReport{Frames: f.rep.Name, States: s.rep.Name, ToleranceMs: round3(float64(a.opts.LagTolerance) / 1e6),
			Count: l.Frames, Unpaired: l.Unpaired, Rejected: l.Rejected, RejectedFraction: round3(l.RejectedFraction()*1e4) / 1e4,
			AcrossOutage: l.AcrossOutage, AcrossOutages: lagOutages(l, rep.Channel(s.rep.Name), el),
			LatestMs: distMs(&l.Latest), NearestMs: distMs(&l.Nearest), InterpolatedMs: distMs(&l.Interpolated)})
	}
	rep.Reaction = a.reaction()
	rep.ReplayIncomplete = a.replayIncomplete(rep.Reaction)
	rep.partialReplay = a.opts.PartialReplay
	if len(probes) > 0 {
		e := sampler.EstimateClock(probes)
		rep.Clock = &ClockReport{Probes: e.Probes, Used: e.Used, OffsetMs: round3(float64(e.OffsetNs) / 1e6),
			RTTMs: round3(float64(e.RTTNs) / 1e6), MinRTTMs: round3(float64(e.MinRTTNs) / 1e6),
			DriftPPM: round3(e.DriftPPM), DriftValid: e.DriftValid}
		if e.HasDriftCI {
			ci := round3(e.DriftCIPPM)
			rep.Clock.DriftCIPPM = &ci
		}
	}
	rep.Snapshots = a.snapshots(rep)
	rep.NotCaptured = []NotCaptured{}
	for _, g := range a.gaps {
		g.FromElapsed, g.ToElapsed = el(g.FromNs), el(g.ToNs)
		rep.NotCaptured = append(rep.NotCaptured, g)
		rep.Notes = append(rep.Notes, fmt.Sprintf("%.3f–%.3f s not captured (%s): no skip, outage or restart counted there",
			g.FromElapsed, g.ToElapsed, g.what()))
	}
	return rep
}

// lagOutages lists the state gaps frames were paired across, with
// whether the state channel's publisher restarted at the gap's end.
func lagOutages(l *sampler.LagSummary, states *ChannelReport, el func(int64) float64) []LagOutageItem {
	out := []LagOutageItem{}
	for _, g := range l.Outages {
		o := LagOutageItem{FromNs: g.StateNs, FromElapsed: el(g.StateNs), Frames: g.Frames, MaxLagMs: ms3(g.MaxLagNs), Ended: !g.HasNext}
		if g.HasNext {
			o.ToNs, o.ToElapsed, o.GapS = g.NextNs, el(g.NextNs), round3(float64(g.NextNs-g.StateNs)/1e9*1000)/1000
		}
		for _, r := range states.Restarts {
			o.Restart = o.Restart || (g.HasNext && r.AfterNs == g.NextNs)
		}
		out = append(out, o)
	}
	return out
}

// offerEpoch takes e as the session epoch unless the epoch set already
// must stay: the first state epoch wins (of the first input that has
// one), and a fallback (a stored one of a log without the state stream)
// never wins over a first state sample (SessionEpochOf's rule).
func (a *Analysis) offerEpoch(e Epoch) {
	if a.haveEp && (a.epState || !e.State) {
		return
	}
	a.epoch, a.epochSrc, a.epState, a.haveEp, a.epFile = e.Ns, e.Source, e.State, true, a.input
}

// fallbackEpoch picks the session epoch of a log without a state channel:
// the earliest capture stamp of any decodable channel, else the earliest
// receive stamp of a raw one; a note says which.
func (a *Analysis) fallbackEpoch(rep *Report) {
	for _, raw := range []bool{false, true} {
		for _, ch := range a.order {
			sum := ch.stream.Summary()
			if ch.kind == KindProbe || (ch.kind == KindRaw) != raw || sum.Count == 0 {
				continue
			}
			if !a.haveEp || sum.MinTNs < a.epoch {
				a.epoch, a.haveEp, a.epFile = sum.MinTNs, true, -1 // over every input
				a.epochSrc = "no state channel: earliest capture stamp (" + ch.rep.Name + ")"
				if raw {
					a.epochSrc = "no decodable channel: earliest receive stamp (" + ch.rep.Name + ")"
				}
			}
		}
		if a.haveEp {
			note := "the log has no state channel; elapsed counts from the earliest frame instead of the robot's first state"
			if raw {
				note = "the log has no decodable channel; elapsed counts from the earliest receive stamp, on the recorder's clock"
			}
			rep.Notes = append(rep.Notes, note)
			return
		}
	}
}

// DefaultLagWindow is Options.LagWindow's default.
const DefaultLagWindow = time.Duration(sampler.DefaultLagWindowNs)

// lagWindow is the pairing window in effect.
func (a *Analysis) lagWindow() time.Duration {
	if a.opts.LagWindow == 0 {
		return DefaultLagWindow
	}
	return a.opts.LagWindow
}

// pairFrames pairs each frame channel with its state channel (pairState)
// once both are known, so that their samples are paired as they arrive.
// A pair formed after either had records (they came from different files
// and Plan was not called), or that a later file's state channel would
// make differently, is not the whole log's pairing: a note says so.
func (a *Analysis) pairFrames() {
	var states []*channel
	for _, ch := range a.order {
		if ch.kind == KindState {
			states = append(states, ch)
		}
	}
	for _, f := range a.order {
		if f.kind != KindFrame {
			continue
		}
		s := pairState(f, states)
		switch {
		case s == nil || s == f.lagOf:
			continue
		case f.lagOf != nil:
			a.notes = append(a.notes, fmt.Sprintf("lag of %s: paired with %s, known when the frames began; %s, in a later file, shares more of its name: plan all files first (Analysis.Plan) to pair them with it",
				f.rep.Name, f.lagOf.rep.Name, s.rep.Name))
			continue
		case f.rep.Count > 0 || s.rep.Count > 0:
			a.notes = append(a.notes, fmt.Sprintf("lag of %s vs %s: only the records of the files from the first that holds both are paired: plan all files first (Analysis.Plan) to pair them all",
				f.rep.Name, s.rep.Name))
		}
		f.lagOf, f.lagFrom = s, len(a.files)
		if a.opts.PlotBins > 0 {
			f.lagSer = newLagSeries(a.opts.PlotBins, &a.span)
		}
		f.lag = sampler.NewLagStream(a.lagConfig(s.stream, f.lagSer, false))
		s.feeds = append(s.feeds, f.lag)
	}
}

// lagConfig is the pairing of a frame channel with the state channel
// whose samples states accounts for (plotted in ser, if not nil; part:
// a later part of a log, sampler.LagConfig.Part). A frame whose latest
// state is older than the outage threshold of the whole state stream
// is paired across an outage (outageOf): judged at the end, with the
// state stream's threshold so far as the guess that keeps the pairings
// held for it few.
func (a *Analysis) lagConfig(states *sampler.Stream, ser *lagSeries, part bool) sampler.LagConfig {
	cfg := sampler.LagConfig{ToleranceNs: a.opts.LagTolerance.Nanoseconds(), WindowNs: a.opts.LagWindow.Nanoseconds(),
		OutageNs: func() int64 { return int64(a.opts.OutageFactor * float64(states.NominalNs())) }, Deferred: true, Part: part}
	if ser != nil {
		cfg.OnPair = ser.add
	}
	return cfg
}

// outageOf is the outage threshold of state channel s: a frame whose
// latest state is older is paired across an outage.
func (a *Analysis) outageOf(s *channel) int64 {
	return int64(a.opts.OutageFactor * float64(s.stream.PeriodNs()))
}

// pairState picks the state channel a frame channel belongs to: the one
// sharing the longest name prefix (vr/r1/camera/front → vr/r1/state).
func pairState(f *channel, states []*channel) *channel {
	var best *channel
	bestN := -1
	for _, s := range states {
		n := commonPrefix(f.rep.Name, s.rep.Name)
		if n > bestN {
			best, bestN = s, n
		}
	}
	return best
}

func commonPrefix(a, b string) int { return livecheck.CommonPrefix(a, b) }

// undecodable describes record r that failed its schema with err.
func undecodable(r *logfmt.Record, err error) *Undecodable {
	u := &Undecodable{RecvMonoNs: r.RecvMonoNs, RecvWallNs: r.RecvWallNs, Reason: err.Error()}
	if de, ok := errors.AsType[*codec.DecodeError](err); ok {
		u.Offset = de.Offset
	}
	return u
}

// whyUndecodable reads the first undecodable record of each channel that
// had one in r (the metadata scan saw only that it had no stamp) and
// decodes it again: the report says where and why it failed.
func (a *Analysis) whyUndecodable(r *logfmt.Reader, ids []*channel) error {
	for id, ch := range ids {
		if ch == nil || ch.badMono == 0 {
			continue
		}
		mono := ch.badMono
		ch.badMono = 0
		if ch.rep.FirstUndecodable != nil || ch.codec == nil {
			continue
		}
		it := r.Records(logfmt.Filter{Channels: []uint16{uint16(id)}, Start: mono, End: mono + 1})
		for it.Next() {
			rec := it.Record()
			if rec.HasStamp {
				continue
			}
			err := ch.stampErr(rec)
			if err == nil { // the recorder's stamp failed on what the payload does not say (a zenoh timestamp)
				err = errors.New("no stamp recorded: the transport's stamp the declaration names was missing")
			}
			ch.rep.FirstUndecodable = undecodable(rec, err)
			break
		}
		it.Close()
		if err := it.Err(); err != nil {
			return err
		}
	}
	return nil
}

// stampErr is why rec's payload gives no stamp under ch's schema.
func (ch *channel) stampErr(rec *logfmt.Record) error {
	if sc, declared := ch.codec.(*schema.Codec); declared {
		_, _, err := sc.Recheck(rec)
		return err
	}
	_, _, err := ch.codec.Stamp(rec.Header, rec.Payload)
	return err
}
