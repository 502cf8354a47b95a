package player

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/sampler"
)

// Rec is one record handed to the player by a Source, and by the player to
// the Sink. The player copies Header, Payload and SourceID; the Source may
// reuse them after emit returns.
type Rec struct {
	Channel   int   // index into Options.Channels
	Key       int64 // log time in ns on the pacing clock (receive mono or capture t_ns)
	CaptureNs int64 // capture t_ns (valid if HasStamp): restamp's reference
	Seq       uint64
	HasStamp  bool
	Header    []byte
	Payload   []byte
	// SourceID and SourceSN are the transport's source info as recorded
	// (zenoh: publisher id and sequence number), valid if HasSourceSN: a
	// Sink republishes them so a replayed channel carries the original's
	// sequence facts (a raw channel's only seq).
	SourceID    []byte
	SourceSN    uint64
	HasSourceSN bool
	// Pass is the loop pass (from 0), set by the player for the Sink; a
	// Source leaves it alone.
	Pass int
}

// Source yields the records of one pass in publishing order (non-decreasing
// Key, except for the capture clock's disorder within ReorderWindow). Pass
// is called once per loop pass, from the reader goroutine; it stops early,
// returning nil, when emit returns false.
type Source interface {
	Pass(ctx context.Context, emit func(*Rec) bool) error
}

// Sink publishes one record (r.Channel, r.Header, r.Payload and the source
// info). It is called from one goroutine, in order; r is valid only during
// the call.
type Sink interface {
	Publish(r *Rec) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(r *Rec) error

// Publish calls f.
func (f SinkFunc) Publish(r *Rec) error { return f(r) }

// Channel is what the player needs to know of an output channel.
type Channel struct {
	Name   string
	Schema string // codec schema; "" or unknown = raw (never restamped)
	Frame  bool   // a frame stream (lag applies to it)
	// Codec restamps the channel's records (nil: the built-in codec of
	// Schema, if any): a declared schema's (schema.Lookup).
	Codec codec.Codec
}

// Options configure a Player. The zero value of each field gives its default.
type Options struct {
	Channels []Channel
	// Rate is the speed factor (default 1); RateMax publishes as fast as
	// the sink takes records, without deadlines.
	Rate    float64
	RateMax bool
	// Loops is the number of passes; 0 = forever.
	Loops int
	// Ready, if set, is waited for at the start of Run, before Delay (e.g.
	// until the controller's subscribers are there); commands are applied
	// meanwhile. Its error ends Run.
	Ready func(ctx context.Context) error
	// Delay waits before the first record.
	Delay time.Duration
	// StartPaused waits for Resume (or Step) before the first record.
	StartPaused bool
	// Origin is the log time of offset 0 (the replay window's start): fault
	// times and the position are relative to it. Default: the first key.
	Origin int64
	// Span is the window's length in log time (progress, loop period);
	// default: measured per pass.
	Span time.Duration
	// Restamp shifts every stamp of decodable records by one constant so
	// the first stamped record's capture t_ns maps to the wall time at which
	// it is published.
	Restamp bool
	Faults  Faults
	Seed    uint64
	// ReorderWindow is how far back in Key a record may arrive after a
	// later one (capture clock); such records are re-sorted.
	ReorderWindow time.Duration
	// Read-ahead bounds: records, bytes, log time (defaults 65536, 64 MiB, 2 s).
	MaxQueueMsgs  int
	MaxQueueBytes int
	ReadAhead     time.Duration
	// SpinMin, SpinMax bound the adaptive sleep-then-spin margin: how long
	// before a deadline the fine sleep ends and the spin starts (defaults
	// 10 µs, 250 µs). Equal values fix it.
	SpinMin, SpinMax time.Duration
	// Length is the log time from Origin to the window's end, the bound of
	// a seek (0: unknown, seeks are not bounded above).
	Length time.Duration
	// Lockstep, if set, holds the replay after each record of a trigger
	// channel until the controller answers (lockstep.go).
	Lockstep *Lockstep
	// Now is the monotonic clock in ns (default: Go's monotonic clock);
	// WallNow the wall clock in unix ns (default time.Now).
	Now     func() int64
	WallNow func() int64
}

func (o Options) withDefaults() (Options, error) {
	if o.RateMax {
		o.Rate = 1
	}
	if o.Rate == 0 {
		o.Rate = 1
	}
	if !(o.Rate > 0) || math.IsInf(o.Rate, 0) {
		return o, fmt.Errorf("player: rate %v must be > 0", o.Rate)
	}
	if o.Loops < 0 {
		return o, fmt.Errorf("player: loops %d must be >= 0", o.Loops)
	}
	if o.MaxQueueMsgs <= 0 {
		o.MaxQueueMsgs = 65536
	}
	if o.MaxQueueBytes <= 0 {
		o.MaxQueueBytes = 64 << 20
	}
	if o.ReadAhead <= 0 {
		o.ReadAhead = 2 * time.Second
	}
	if o.SpinMin <= 0 {
		o.SpinMin = 10 * time.Microsecond
	}
	if o.SpinMax <= 0 {
		o.SpinMax = 250 * time.Microsecond
	}
	o.SpinMax = max(o.SpinMax, o.SpinMin)
	if o.Now == nil {
		base := time.Now()
		o.Now = func() int64 { return int64(time.Since(base)) }
	}
	if o.WallNow == nil {
		o.WallNow = func() int64 { return time.Now().UnixNano() }
	}
	return o, nil
}

// ChannelStats is one channel's outcome.
type ChannelStats struct {
	Name       string
	Sent       uint64 // records handed to the sink
	Bytes      uint64 // header + payload bytes sent
	Dropped    uint64 // records not sent: drop=P
	OutageSkip uint64 // records not sent: inside an outage
	Reseq      uint64 // records whose seq or source sn was rewritten (restart)
	RestampErr uint64 // stamped-schema records left unshifted (payload does not decode)
	Steps      uint64 // records published by Step (no error sample)
	Answered   uint64 // lockstep: trigger records the controller answered
	Missed     uint64 // lockstep: trigger records released after the timeout, unanswered
	// Err holds actual minus scheduled publish time, ns.
	Err sampler.Histogram
}

// Summary is the result of Run.
type Summary struct {
	Channels       []ChannelStats
	Passes         int
	Elapsed        time.Duration // first publish to last
	RestampDelta   int64         // ns added by Restamp (valid if HasRestamp)
	HasRestamp     bool
	Interrupted    bool // the context was cancelled or Stop was called
	Stopped        bool // Stop was called: an end asked for (q, the control channel's stop), not a failure
	PeakQueueMsgs  int
	PeakQueueBytes int
	SpinMargin     time.Duration // the margin at the end
	Late           uint64        // lockstep: late answers (Lockstep)
	Duplicates     uint64        // lockstep: answers naming a trigger already answered
	// CutWait: the run ended (Stop, or the context) while a trigger record
	// waited for its answer: the controller may still answer it.
	CutWait bool
}

// Status is a snapshot for progress lines.
type Status struct {
	Position time.Duration // log time of the last published record, from Origin
	Span     time.Duration // window length (0 if unknown)
	Pass     int           // 0-based
	Sent     uint64
	Rate     float64
	RateMax  bool
	Paused   bool
	Starting bool   // Options.Ready has not returned yet
	Waiting  bool   // a lockstep record waits for the controller's answer
	Finished bool   // Run has returned
	Steps    uint64 // records published by steps
	Skipped  uint64 // records not published: drop and outage faults
	Answered uint64 // lockstep: answered trigger records
	Missed   uint64 // lockstep: trigger records whose answer timed out
	Late     uint64 // lockstep: answers that named an earlier trigger (Lockstep)
	// RestampDelta is the constant Restamp adds (valid if HasRestamp).
	RestampDelta int64
	HasRestamp   bool
}

type cmdKind int

const (
	cmdToggle cmdKind = iota
	cmdPause
	cmdResume
	cmdStep
	cmdRate
	cmdStop
	cmdSeek
)

type command struct {
	kind  cmdKind
	rate  float64
	n     int         // cmdStep: records
	at    int64       // cmdSeek: log time from Origin, ns
	pause bool        // cmdStep: pause first when playing (a control request)
	done  chan Status // Do's reply, when it took effect; nil for keys
}

// Player runs one replay. Control methods are safe from any goroutine.
type Player struct {
	o    Options
	src  Source
	sink Sink
	ctl  chan command

	status   sync.Mutex
	st       Status
	clk      clockState // guarded by status
	finished atomic.Bool
	end      chan struct{} // closed when Run returns
}

// New validates the options.
func New(src Source, sink Sink, o Options) (*Player, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := validateFaults(&o.Faults); err != nil {
		return nil, err
	}
	if err := o.Lockstep.validate(len(o.Channels)); err != nil {
		return nil, err
	}
	p := &Player{o: o, src: src, sink: sink, ctl: make(chan command, 64), end: make(chan struct{})}
	p.st = Status{Span: o.Span, Rate: o.Rate, RateMax: o.RateMax, Paused: o.StartPaused, Starting: o.Ready != nil}
	p.clk = clockState{frozen: o.Origin, origin: o.Origin, rate: o.Rate}
	return p, nil
}

func validateFaults(f *Faults) error {
	if f.Drop < 0 || f.Drop > 1 || math.IsNaN(f.Drop) {
		return fmt.Errorf("%w: drop %v not in [0, 1]", ErrBadInject, f.Drop)
	}
	if f.Jitter < 0 {
		return fmt.Errorf("%w: jitter %v < 0", ErrBadInject, f.Jitter)
	}
	return nil
}

func (p *Player) send(c command) {
	select {
	case p.ctl <- c:
	default: // a flood of keys: drop the excess
	}
}

// TogglePause pauses or resumes.
func (p *Player) TogglePause() { p.send(command{kind: cmdToggle}) }

// Pause pauses playback.
func (p *Player) Pause() { p.send(command{kind: cmdPause}) }

// Resume resumes playback; the next record is due after its gap to the
// last published one, at the current rate.
func (p *Player) Resume() { p.send(command{kind: cmdResume}) }

// Step publishes the next record now, when paused (ignored otherwise).
func (p *Player) Step() { p.send(command{kind: cmdStep, n: 1}) }

// SetRate changes the rate from now on (ignored at rate max).
func (p *Player) SetRate(r float64) {
	if r > 0 && !math.IsInf(r, 0) {
		p.send(command{kind: cmdRate, rate: r})
	}
}

// Stop ends the replay after the current record.
func (p *Player) Stop() { p.send(command{kind: cmdStop}) }

// Status returns a snapshot.
func (p *Player) Status() Status {
	p.status.Lock()
	defer p.status.Unlock()
	return p.st
}

// Rate returns the current rate.
func (p *Player) Rate() float64 { return p.Status().Rate }

// mheap orders msgs by effective time, then by arrival.
type mheap []*msg

func (h mheap) Len() int { return len(h) }
func (h mheap) Less(i, j int) bool {
	if h[i].e != h[j].e {
		return h[i].e < h[j].e
	}
	return h[i].idx < h[j].idx
}
func (h mheap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mheap) Push(x any)   { *h = append(*h, x.(*msg)) }
func (h *mheap) Pop() any {
	old := *h
	m := old[len(old)-1]
	*h = old[:len(old)-1]
	return m
}

// run is the state of one Run.
type run struct {
	*Player
	ctx   context.Context
	q     *queue
	h     mheap
	stats []ChannelStats
	rng   *rand.Rand

	// pacing
	rate       float64
	anchorKey  int64
	anchorMono int64
	anchored   bool
	paused     bool
	margin     int64
	sleeper    *preciseSleeper
	firstPub   int64
	lastPub    int64
	lastPubE   int64
	published  bool
	stopped    bool
	havePos    bool  // lastPubE is the position: a record was published, or a seek moved it
	pubPass    int   // pass of the last published record
	pubOffset  int64 // its pass offset

	// control
	skipped     uint64        // records not published by a fault
	stepsLeft   int           // records still to step
	stepWaiters []chan Status // Do(step) replies, due when stepsLeft is 0
	seeks       int           // seeks so far (a wait ends on one)

	// lockstep
	waiting      bool     // a trigger record waits for its answer
	held         bool     // an answer (or timeout) came at holdAt
	holdAt       int64    // the next record is due no earlier
	lateN        uint64   // late answers so far
	dupN         uint64   // duplicate answers so far
	answeredTags []uint64 // the last answeredRing triggers answered
	answeredNext int      // the oldest of them, once full
	cutWait      bool     // the end came while a trigger waited (Summary.CutWait)

	// input
	inputDone  bool
	inErr      error
	lastBase   int64
	pulled     uint64
	cancelRead context.CancelFunc
	readers    sync.WaitGroup
	peakN      int
	peakB      int
	prevPass   passStats // the pass before the current one (a seek may go back to it)
	minShift   int64     // most negative shift of e below base, incl. reorder window
	pass       int
	passOffset int64
	passFirst  int64
	passLast   int64
	passCount  uint64
	havePass   bool
	origin     int64
	haveOrigin bool

	// faults
	lastE       []int64
	haveLastE   []bool
	reseq       []renumber // restart=AT: payload seq, per channel
	resn        []renumber // restart=AT: source sn, per channel
	state       codec.State
	tmp         []byte
	codecs      []codec.Codec
	restampD    int64
	haveRestamp bool
}

// Run replays until the source is exhausted (all loops), ctx is
// cancelled, Stop is called or the sink fails. The summary is valid in
// every case; the error is the source's or the sink's.
func (p *Player) Run(ctx context.Context) (*Summary, error) {
	o := &p.o
	r := &run{Player: p, ctx: ctx, rate: o.Rate, paused: o.StartPaused,
		stats:  make([]ChannelStats, len(o.Channels)),
		rng:    rand.New(rand.NewPCG(o.Seed, 0x7265706c6179)), // "replay"
		margin: int64(o.SpinMin),
	}
	n := len(o.Channels)
	r.lastE, r.haveLastE = make([]int64, n), make([]bool, n)
	r.reseq, r.resn = make([]renumber, n), make([]renumber, n)
	r.codecs = make([]codec.Codec, n)
	for i, c := range o.Channels {
		r.stats[i].Name = c.Name
		if c.Codec != nil {
			r.codecs[i] = c.Codec
		} else if cd, ok := codec.Lookup(c.Schema); ok {
			r.codecs[i] = cd
		}
	}
	f := &o.Faults
	r.minShift = -int64(o.ReorderWindow)
	if f.Jitter > 0 {
		r.minShift -= 4 * int64(f.Jitter)
	}
	if f.Lag < 0 {
		r.minShift += int64(f.Lag)
	}
	if o.Origin != 0 {
		r.origin, r.haveOrigin = o.Origin, true
	}

	r.startReader(0, 0, false)
	r.sleeper = newPreciseSleeper(o.Now)
	err := r.loop()
	r.sleeper.close()
	r.stopReader()
	r.finish()

	s := &Summary{Channels: r.stats, Passes: r.pass + 1, RestampDelta: r.restampD, HasRestamp: r.haveRestamp,
		Interrupted: r.stopped || ctx.Err() != nil, Stopped: r.stopped, PeakQueueMsgs: r.peakN, PeakQueueBytes: r.peakB,
		SpinMargin: time.Duration(r.margin), Late: r.lateN, Duplicates: r.dupN, CutWait: r.cutWait}
	if !r.havePass {
		s.Passes = 0
	}
	if r.published {
		s.Elapsed = time.Duration(r.lastPub - r.firstPub)
	}
	if err == nil && r.inErr != nil && !errors.Is(r.inErr, context.Canceled) {
		err = r.inErr
	}
	return s, err
}

// startReader starts the reader goroutine on a fresh queue at pass (at
// log time from, when seek).
func (r *run) startReader(pass int, from int64, seek bool) {
	ctx, cancel := context.WithCancel(r.ctx)
	q := newQueue(r.o.MaxQueueMsgs, r.o.MaxQueueBytes, int64(r.o.ReadAhead))
	r.q, r.cancelRead = q, cancel
	r.readers.Add(1)
	go func() {
		defer r.readers.Done()
		r.read(ctx, q, pass, from, seek)
	}()
}

// stopReader stops the reader goroutine and waits for it.
func (r *run) stopReader() {
	r.cancelRead()
	r.q.stop()
	r.readers.Wait()
	r.peakN, r.peakB = max(r.peakN, r.q.peakN), max(r.peakB, r.q.peakB)
}

// read is the reader goroutine: every pass from pass0 into q, the first
// from log time from when seek.
func (r *run) read(ctx context.Context, q *queue, pass0 int, from int64, seek bool) {
	var err error
	for pass := pass0; r.o.Loops == 0 || pass < r.o.Loops; pass++ {
		count := 0
		stopped := false
		emit := func(rec *Rec) bool {
			m := q.get(rec)
			m.pass, m.Rec.Pass = pass, pass
			if !q.push(m) {
				stopped = true
				return false
			}
			count++
			return true
		}
		if seek && pass == pass0 {
			err = r.src.(Seeker).PassFrom(ctx, from, emit)
			count = max(count, 1) // a seek to the end of a pass goes on with the next
		} else {
			err = r.src.Pass(ctx, emit)
		}
		if err != nil || stopped || count == 0 || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil && err == nil {
		err = ctx.Err()
	}
	q.finish(err)
}

// pull moves one msg from the queue into the heap; false at the end.
func (r *run) pull() bool {
	if r.inputDone {
		return false
	}
	m, err := r.q.pop()
	if m == nil {
		r.inputDone, r.inErr = true, err
		return false
	}
	if m.pass != r.pass || !r.havePass {
		if r.havePass {
			r.prevPass = passStats{r.pass, r.passOffset, r.passFirst, r.passLast, r.passCount}
			r.passOffset += r.passPeriod()
		}
		r.pass, r.havePass = m.pass, true
		r.passFirst, r.passLast, r.passCount = m.Key, m.Key, 0
	}
	if !r.haveOrigin {
		r.origin, r.haveOrigin = m.Key, true
	}
	r.passFirst = min(r.passFirst, m.Key)
	r.passLast = max(r.passLast, m.Key)
	r.passCount++
	m.base = m.Key + r.passOffset
	m.idx = r.pulled
	r.pulled++
	r.lastBase = max(r.lastBase, m.base)
	if r.pulled == 1 {
		r.lastBase = m.base
	}
	if !r.admit(m) {
		r.q.put(m)
		return true
	}
	heap.Push(&r.h, m)
	return true
}

// passPeriod is the log time from one pass's start to the next's.
func (r *run) passPeriod() int64 {
	if r.o.Span > 0 {
		return int64(r.o.Span)
	}
	span := r.passLast - r.passFirst
	if r.passCount > 1 {
		return span + span/int64(r.passCount-1)
	}
	return max(span, int64(time.Second))
}

// admit applies drop/outage/restart/jitter/lag; false = not published.
func (r *run) admit(m *msg) bool {
	f := &r.o.Faults
	st := &r.stats[m.Channel]
	off := m.Key - r.origin
	if f.Drop > 0 {
		if r.rng.Float64() < f.Drop {
			st.Dropped++
			r.skipped++
			return false
		}
	}
	for _, w := range f.Outages {
		if off >= int64(w.At) && off < int64(w.At+w.For) {
			st.OutageSkip++
			r.skipped++
			return false
		}
	}
	e := m.base
	if f.Jitter > 0 {
		j := r.rng.NormFloat64() * float64(f.Jitter)
		j = max(-4*float64(f.Jitter), min(4*float64(f.Jitter), j))
		e += int64(j)
	}
	if f.Lag != 0 && r.o.Channels[m.Channel].Frame {
		e += int64(f.Lag)
	}
	if f.Jitter > 0 || f.Lag != 0 {
		if r.haveLastE[m.Channel] {
			e = max(e, r.lastE[m.Channel])
		}
		r.lastE[m.Channel], r.haveLastE[m.Channel] = e, true
	}
	m.e = e
	if f.RestartAt > 0 {
		r.restart(m, off)
	}
	return true
}

// restart applies restart=AT to m's payload seq and source sn.
func (r *run) restart(m *msg, off int64) {
	c, at := m.Channel, int64(r.o.Faults.RestartAt)
	changed := false
	if m.HasStamp && r.codecs[c] != nil {
		if seq, ok := r.reseq[c].next(m.Seq, m.pass, off, at); ok &&
			setSeq(r.o.Channels[c].Schema, m.Header, m.Payload, seq, &r.state, &r.tmp) {
			m.Seq, changed = seq, true
		}
	}
	if m.HasSourceSN {
		if sn, ok := r.resn[c].next(m.SourceSN, m.pass, off, at); ok {
			m.SourceSN, changed = sn, true
		}
	}
	if changed {
		r.stats[c].Reseq++
	}
}

// renumber is restart=AT's state for one counter of one channel.
type renumber struct {
	last, base    uint64
	haveLast, set bool
	off           bool // the log restarted by itself after AT: left alone
}

// next is v's new value (ok false: v stays as it is): v - v0, v0 being the
// counter's first value at or after offset at.
func (n *renumber) next(v uint64, pass int, off, at int64) (uint64, bool) {
	if n.haveLast && pass == 0 && v < n.last && n.set {
		n.off = true // the log restarts by itself
	}
	n.last, n.haveLast = v, true
	if off < at || n.off {
		return v, false
	}
	if !n.set {
		n.base, n.set = v, true
	}
	if v < n.base {
		return v, false
	}
	return v - n.base, true
}

// ready reports whether the heap's top can go: no record still to come
// can be due before it.
func (r *run) ready() bool {
	if len(r.h) == 0 {
		return false
	}
	return r.inputDone || r.h[0].e <= r.lastBase+r.minShift
}

// setStatus changes the status and brings the clock reading up to date.
func (r *run) setStatus(f func(*Status)) {
	r.status.Lock()
	f(&r.st)
	r.clk = r.clock()
	r.status.Unlock()
}

// sync brings the clock reading up to date after a schedule change.
func (r *run) sync() { r.setStatus(func(*Status) {}) }

func (r *run) loop() error {
	o := &r.o
	if o.Ready != nil {
		if err := r.waitReady(); err != nil || r.stopped || r.ctx.Err() != nil {
			return err
		}
	}
	startMono := o.Now()
	if o.Delay > 0 && !o.StartPaused {
		if r.sleepUntil(startMono+int64(o.Delay), true) {
			return nil
		}
	}
	for {
		if r.stopped || r.ctx.Err() != nil {
			return nil
		}
		for !r.ready() && r.pull() {
		}
		if len(r.h) == 0 {
			return nil
		}
		m := r.h[0]
		if r.paused {
			if r.stepsLeft == 0 {
				if !r.waitCommand() {
					return nil
				}
				continue
			}
			heap.Pop(&r.h)
			ch, seq := m.Channel, m.Seq // m is recycled once published
			if err := r.publish(m, 0, false); err != nil {
				return err
			}
			r.await(ch, seq, r.lastPub)
			r.stepped(ch)
			continue
		}
		if !r.anchored {
			r.anchorKey, r.anchorMono, r.anchored = m.e, o.Now(), true
			if r.o.Delay > 0 && r.o.StartPaused {
				r.anchorMono += int64(o.Delay)
			}
			r.sync()
		}
		if r.poll() { // commands and cancellation, once per record
			if r.stopped || r.ctx.Err() != nil {
				return nil
			}
			continue
		}
		var deadline int64
		timed := !o.RateMax
		if timed {
			deadline = r.anchorMono + int64(float64(m.e-r.anchorKey)/r.rate)
			deadline = r.hold(m, deadline)
		}
		if !m.prepared {
			r.prepare(m, deadline)
		}
		if timed && r.sleepUntil(deadline, false) {
			if r.stopped || r.ctx.Err() != nil {
				return nil
			}
			continue // a command changed the schedule
		}
		heap.Pop(&r.h)
		ch, seq := m.Channel, m.Seq
		if err := r.publish(m, deadline, timed); err != nil {
			return err
		}
		r.await(ch, seq, r.lastPub)
	}
}

// prepare restamps m (once), before its deadline.
func (r *run) prepare(m *msg, deadline int64) {
	m.prepared = true
	if !r.o.Restamp || r.codecs[m.Channel] == nil {
		return
	}
	if !r.haveRestamp {
		if !m.HasStamp {
			return
		}
		at := r.o.WallNow()
		if !r.o.RateMax {
			at += deadline - r.o.Now()
		}
		r.restampD, r.haveRestamp = at-m.CaptureNs, true
		r.setStatus(func(s *Status) { s.RestampDelta, s.HasRestamp = r.restampD, true })
	}
	cd := r.codecs[m.Channel]
	err := cd.Restamp(m.Header, m.Payload, r.restampD)
	if rs, ok := cd.(codec.Resizer); ok && errors.Is(err, codec.ErrResize) {
		// the stamp grew (a protobuf varint, a JSON number): publish the
		// restamped copy
		var p []byte
		if p, err = rs.RestampResized(m.Header, m.Payload, r.restampD); err == nil {
			m.Payload = p
		}
	}
	if err != nil {
		r.stats[m.Channel].RestampErr++
	}
}

func (r *run) publish(m *msg, deadline int64, timed bool) error {
	if !m.prepared {
		r.prepare(m, r.o.Now())
	}
	r.drainAnswers(m.Channel, m.Seq)
	now := r.o.Now()
	err := r.sink.Publish(&m.Rec)
	st := &r.stats[m.Channel]
	if err != nil {
		r.q.put(m)
		return fmt.Errorf("publish %s: %w", st.Name, err)
	}
	if timed {
		st.Err.Add(now - deadline)
	}
	st.Sent++
	st.Bytes += uint64(len(m.Header) + len(m.Payload))
	if !r.published {
		r.firstPub, r.published = now, true
	}
	r.lastPub, r.lastPubE, r.havePos = now, m.e, true
	r.pubPass, r.pubOffset = m.pass, m.base-m.Key
	pos, pass := m.e-r.pubOffset-r.origin, m.pass
	skipped := r.skipped
	if r.trigger(m.Channel) {
		r.waiting = true // the log's clock stands still from the release on (await)
	}
	waiting := r.waiting
	r.setStatus(func(s *Status) {
		s.Position, s.Pass, s.Skipped, s.Waiting = time.Duration(pos), pass, skipped, waiting
		s.Sent++
	})
	r.q.put(m)
	return nil
}

// position is the log time the anchor maps now to.
func (r *run) position(now int64) int64 {
	return r.anchorKey + int64(float64(now-r.anchorMono)*r.rate)
}

// apply handles a command and answers its Do (a step when its records
// are out); it reports whether the schedule changed.
func (r *run) apply(c command) bool {
	changed := r.applyOne(c)
	if c.done != nil && c.kind != cmdStep {
		c.done <- r.Status()
	}
	return changed
}

func (r *run) applyOne(c command) bool {
	now := r.o.Now()
	switch c.kind {
	case cmdStop:
		r.stopped = true
		return true
	case cmdToggle:
		if r.paused {
			return r.applyOne(command{kind: cmdResume})
		}
		return r.applyOne(command{kind: cmdPause})
	case cmdPause:
		if r.paused {
			return false
		}
		r.paused = true
		r.setStatus(func(s *Status) { s.Paused = true })
		return true
	case cmdResume:
		if !r.paused {
			return false
		}
		r.paused = false
		// The next record is due after its gap to the last published one
		// (or to where a seek moved the position).
		if r.havePos {
			r.anchorKey, r.anchorMono, r.anchored = r.lastPubE, now, true
		} else {
			r.anchored = false
		}
		r.setStatus(func(s *Status) { s.Paused = false })
		return true
	case cmdRate:
		if r.o.RateMax {
			return false
		}
		if r.anchored && !r.paused {
			r.anchorKey, r.anchorMono = r.position(now), now
		}
		r.rate = c.rate
		r.setStatus(func(s *Status) { s.Rate = c.rate })
		return true
	case cmdStep:
		return r.step(c)
	case cmdSeek:
		r.seek(c.at, now)
		return true
	}
	return false
}

// waitCommand blocks while paused with nothing to step; false when the
// run must end.
func (r *run) waitCommand() bool {
	for r.paused && r.stepsLeft == 0 {
		select {
		case <-r.ctx.Done():
			return false
		case c := <-r.ctl:
			r.apply(c)
			if r.stopped {
				return false
			}
		}
	}
	return true
}

// poll applies pending commands without blocking (rate max).
func (r *run) poll() bool {
	changed := false
	for {
		select {
		case <-r.ctx.Done():
			return true
		case c := <-r.ctl:
			changed = r.apply(c) || changed
		default:
			return changed
		}
	}
}

// coarseLead is how long before the fine sleep a Go timer wakes the
// publishing goroutine: more than the millisecond a Go timer can be late.
const coarseLead = 2 * time.Millisecond

// sleepUntil waits for deadline: far from it, on a Go timer that commands
// and cancellation interrupt; within coarseLead of deadline - margin, an
// absolute clock_nanosleep to deadline - margin; then a spin on the clock
// for the margin, which absorbs the wake-up latency the OS delivers. It
// returns true when interrupted: ctx cancelled or a command changed the
// schedule (the caller recomputes). delayOnly ignores the schedule commands
// except stop (the initial --delay).
func (r *run) sleepUntil(deadline int64, delayOnly bool) bool {
	now := r.o.Now()
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for rem := deadline - now; rem > r.margin+int64(coarseLead); rem = deadline - now {
		d := time.Duration(rem - r.margin - int64(coarseLead))
		if t == nil {
			t = time.NewTimer(d)
		} else {
			t.Reset(d)
		}
		select {
		case <-r.ctx.Done():
			return true
		case c := <-r.ctl:
			if delayOnly {
				if c.kind == cmdStop {
					r.stopped = true
					return true
				}
				r.apply(c)
			} else if r.apply(c) {
				return true
			}
		case <-t.C:
		}
		now = r.o.Now()
	}
	if target := deadline - r.margin; target > now {
		r.sleeper.sleep(target)
		r.adapt(r.o.Now() - target)
	}
	for r.o.Now() < deadline {
	}
	return false
}

// adapt moves the spin margin toward the 95th percentile of the fine
// sleep's wake-up overshoot (a stochastic quantile estimate: up 19 steps
// when the overshoot exceeds the margin, down one otherwise), between
// SpinMin and SpinMax. An overshoot beyond SpinMax (the thread was
// preempted) says nothing a bounded spin could absorb and is left out, so a
// loaded machine does not make replay spin more.
func (r *run) adapt(over int64) {
	const step = 1_000 // ns
	switch {
	case over > int64(r.o.SpinMax):
		return
	case over > r.margin:
		r.margin += 19 * step
	default:
		r.margin -= step
	}
	r.margin = min(max(r.margin, int64(r.o.SpinMin)), int64(r.o.SpinMax))
}
