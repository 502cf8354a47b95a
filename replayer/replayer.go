package replayer

import (
	"context"
	"errors"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/schema"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Replayer is one opened replay: its logs, publishers and fixture, ready
// to Run once. Its player is reachable (Player) for keys and controls.
type Replayer struct {
	cfg     Config
	fc      *fixtureConfig
	s       *session
	sess    *zenoh.Session
	ownSess bool
	pubs    *publishers
	fx      *fixture
	p       *player.Player
	opts    player.Options
	span    time.Duration
	ran     bool
	closed  bool
}

// Open opens the logs, selects the channels and the window, creates every
// publisher (so that subscribers can discover them before the first
// record) and the fixture's parts (the answers' subscriber, the clock, the
// capture, the control channel). Errors are a *ConfigError or of the kinds
// ErrInput, ErrOutput and ErrTransport.
func Open(cfg Config) (*Replayer, error) {
	c, fc, err := check(cfg)
	if err != nil {
		return nil, err
	}
	r := &Replayer{cfg: c, fc: fc}
	fc.Config = &r.cfg
	if r.s, err = open(&r.cfg, make([]bool, len(r.cfg.Remaps))); err != nil {
		return nil, err
	}
	if err := r.start(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// start makes the publishers, the fixture and the player.
func (r *Replayer) start() error {
	c, s := &r.cfg, r.s
	trigger, names, err := r.fc.check(s.outs)
	if err != nil {
		return err
	}
	r.span = s.span()
	if err := c.Faults.Within(r.span); err != nil {
		return &ConfigError{Field: "Faults", Err: err}
	}
	chans := make([]player.Channel, len(s.outs))
	for i, o := range s.outs {
		cd, _ := schema.Lookup(&logfmt.Channel{Name: o.Name, Schema: o.Schema, Meta: o.Meta})
		chans[i] = player.Channel{Name: o.Name, Schema: o.Schema, Frame: o.Frame, Codec: cd}
	}
	loops := max(c.Loops, 1)
	if c.Forever {
		loops = 0
	}
	r.opts = player.Options{Channels: chans, Rate: c.Rate, RateMax: c.RateMax, Loops: loops,
		Delay: c.Delay, StartPaused: c.StartPaused, Origin: s.src.start, Restamp: c.Restamp,
		Faults: c.Faults, Seed: c.Seed, MaxQueueBytes: c.ReadAheadBytes, ReadAhead: c.ReadAhead, Length: r.span}
	if s.src.hasEnd {
		r.opts.Span = time.Duration(s.src.end - s.src.start)
	}
	if c.Clock == ClockCapture {
		r.opts.ReorderWindow = c.ReorderWindow
	}
	if c.Spin > 0 {
		r.opts.SpinMin, r.opts.SpinMax = c.Spin, c.Spin
	}
	if c.Session != nil {
		r.sess = c.Session
	} else if needsZenoh(s.outs) || r.fc.needsSession() {
		if r.sess, err = zenoh.Open(c.Zenoh); err != nil {
			return kindf(ErrTransport, "zenoh session: %w", err)
		}
		r.ownSess = true
	}
	// Express (no batching) unless at rate max; in lockstep always: each
	// record waits for the answer to the one before.
	r.pubs, err = openPublishers(s.outs, r.sess, transportOptions{express: !c.RateMax || c.Lockstep != "", block: c.BlockIceoryx, warn: c.Warn})
	if err != nil {
		return err
	}
	if r.fx, err = startFixture(r.fc, s, r.pubs, r.sess, trigger, names); err != nil {
		r.fx.abort()
		r.fx = nil
		return err
	}
	r.fx.options(&r.opts)
	if r.p, err = player.New(s.src, r.fx, r.opts); err != nil {
		return &ConfigError{Field: "Player", Err: err}
	}
	return r.fx.serve(r.p, r.sess, r.span)
}

// Player is the replay's engine, for keys and controls (pause, step, rate,
// seek, stop) from any goroutine.
func (r *Replayer) Player() *player.Player { return r.p }

// Span is the played window's log time.
func (r *Replayer) Span() time.Duration { return r.span }

// Control is the control channel's name ("" without one).
func (r *Replayer) Control() string { return r.cfg.Control }

// Run replays until the window was played (every pass), ctx ends, the
// player is stopped or the fixture fails the run, then lingers, finishes
// the response log and reports. The report is valid whenever Run ran; the
// error says why the run failed: ErrInput (damage met without Tolerant),
// ErrNoSubscribers, ErrControllerGone, ErrMissedSteps, ErrNoAnswer,
// ErrCapturedNothing, ErrOutput, ErrTransport, ErrInterrupted (ctx ended).
// A stop through the player (Player().Stop, the control channel's stop)
// is an end asked for: no error.
func (r *Replayer) Run(ctx context.Context) (*Report, error) {
	if r.ran {
		return nil, errors.New("replayer: Run called twice")
	}
	r.ran = true
	pctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	r.fx.end = end
	stopWatch := r.fx.watch(pctx)
	sum, perr := r.p.Run(pctx)
	stopWatch()
	cause := context.Cause(pctx)
	if (errors.Is(cause, context.Canceled) && ctx.Err() == nil) || (ctx.Err() != nil && errors.Is(cause, ctx.Err())) {
		cause = nil // a stop asked for, or ctx's end: the summary says interrupted
	}
	// Linger, so subscribers drain, also when a stop (or SIGINT) cut a
	// lockstep wait: the controller may have answered the trigger just
	// released, and the capture should hold that answer.
	if perr == nil && (!sum.Interrupted || (sum.CutWait && cause == nil)) && r.cfg.Linger > 0 {
		time.Sleep(r.cfg.Linger)
	}
	rep := buildReport(&r.cfg, r.s, sum, r.opts)
	if cause != nil { // the fixture ended the run (its controller is gone, no answers): no interruption
		rep.Interrupted, rep.EndedBy = false, cause.Error()
	}
	if !r.cfg.RateMax {
		rep.Rate = r.p.Status().Rate // the rate at the end (a key or the control channel may have changed it)
	}
	rep.addFixture(r.fx) // before finish: the lockstep counts
	out := r.outcome(sum, perr, cause)
	ferr := r.fx.finish(&out)
	rep.Capture = r.fx.captured
	rep.Outcome = out
	cerr := r.pubs.Close()
	r.pubs = nil
	switch {
	case perr != nil:
		var ce *logfmt.CorruptionError
		var ke *kindError
		switch {
		case errors.As(perr, &ce):
			return rep, kindf(ErrInput, "%w (replayed up to the damage; a tolerant replay skips it)", perr)
		case errors.As(perr, &ke):
			return rep, perr
		}
		return rep, kinded(ErrTransport, perr)
	case ctx.Err() != nil:
		return rep, kindf(ErrInterrupted, "interrupted")
	case cause != nil:
		return rep, cause
	case ferr != nil:
		return rep, ferr
	case cerr != nil:
		return rep, kinded(ErrTransport, cerr)
	case rep.Lockstep != nil && rep.Lockstep.Answered == 0 && rep.Lockstep.Missed > 0:
		return rep, kindf(ErrNoAnswer, "lockstep %s: no answer at all: each of the %d trigger records went out unanswered after the %g s timeout (is the controller running, and answering on that key?)",
			rep.Lockstep.Key, rep.Lockstep.Missed, rep.Lockstep.TimeoutS)
	case rep.Capture != nil && len(rep.Capture.Missed) > 0:
		return rep, kindf(ErrCapturedNothing, "captured nothing on %s (the response log %s holds the released records)",
			joinComma(rep.Capture.Missed), rep.Capture.Output)
	}
	return rep, nil
}

// outcome is how the run ended, for the response log.
func (r *Replayer) outcome(sum *player.Summary, perr, cause error) Outcome {
	o := Outcome{Schema: logfmt.OutcomeSchema, Lockstep: r.cfg.Lockstep != "", Late: sum.Late}
	var skipped uint64
	for i, ch := range sum.Channels {
		if r.fx.trigger == nil || !r.fx.trigger[i] {
			continue
		}
		o.Released += ch.Sent
		o.Answered += ch.Answered
		o.Missed += ch.Missed
		skipped += ch.Dropped + ch.OutageSkip
	}
	damaged := false
	for _, in := range r.s.inputs {
		damaged = damaged || in.r.TornTail() != nil || len(in.r.SkippedChunks()) > 0
	}
	switch {
	case perr != nil:
		o.Reason = perr.Error()
	case cause != nil:
		o.Reason = cause.Error()
	case sum.Stopped:
		o.Reason = "stopped before the end"
	case sum.Interrupted:
		o.Reason = "interrupted"
	case damaged:
		o.Reason = "played around damage (skipped chunks or a torn tail)"
	default:
		o.Finished = true
	}
	if o.Finished {
		o.Triggers = o.Released + skipped
	} else if !r.cfg.Forever && r.fx.trigger != nil {
		o.Triggers = r.s.countTriggers(r.fx.trigger) * uint64(max(r.cfg.Loops, 1))
	}
	return o
}

// InputDamage says what each damaged input was read around: a torn tail,
// skipped chunks, damage read around without loss (logfmt.Damage.Lines).
func (r *Replayer) InputDamage() []logfmt.Damage {
	var out []logfmt.Damage
	for _, in := range r.s.inputs {
		if d := in.r.Damage(); len(d.Lines()) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// Close releases everything Open made and Run did not; it may be called
// more than once.
func (r *Replayer) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	if r.fx != nil && !r.ran {
		r.fx.abort()
	}
	if r.fx != nil && r.fx.control != nil && !r.ran {
		r.fx.control.Close()
	}
	if r.pubs != nil {
		errs = append(errs, r.pubs.Close())
	}
	if r.ownSess && r.sess != nil {
		errs = append(errs, r.sess.Close())
	}
	if r.s != nil {
		r.s.close()
	}
	return errors.Join(errs...)
}

func joinComma(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}
