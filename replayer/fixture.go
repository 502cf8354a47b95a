package replayer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/replayctl"
	"github.com/vrlog/vrlog/transport/clock"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// check validates the fixture against the replayed outputs: the replay
// must not hear itself, and lockstep and capture need trigger channels.
func (f *fixtureConfig) check(outs []output) ([]bool, []string, error) {
	status := ""
	if f.Control != "" {
		status = replayctl.StatusKey(f.Control)
	}
	if f.Lockstep != "" {
		if k := selfMatch(f.lockstepPattern, outs, f.ClockKey, status); k != "" {
			return nil, nil, configErr("Lockstep", "%s matches %s, which this replay publishes: it would answer itself", f.Lockstep, k)
		}
	}
	for i, p := range f.capturePatterns {
		if k := selfMatch(p, outs); k != "" {
			return nil, nil, configErr("Capture", "%s matches %s, which this replay publishes: it would capture itself (the released records are in the response log anyway)", f.Capture[i], k)
		}
	}
	if f.Lockstep == "" && len(f.Capture) == 0 {
		return nil, nil, nil
	}
	return triggers(outs, f.Triggers)
}

// fixture is the running parts of a test fixture around the player.
type fixture struct {
	cfg      *fixtureConfig
	warn     io.Writer
	pubs     *publishers
	now      func() int64 // the schedule's clock: CLOCK_MONOTONIC, the recorder's
	trigger  []bool
	names    []string // the trigger channels' topics
	answers  *answers
	clock    *logClock
	capture  *capture
	control  *replayctl.Server
	waited   time.Duration // spent waiting for subscribers
	sess     *zenoh.Session
	captured *CaptureReport

	// lockstep bookkeeping, from the publishing goroutine (OnStep, OnLate)
	// and read after Run
	mu     sync.Mutex
	steps  uint64 // trigger waits that ended in an answer or a miss
	missed uint64
	inARow int
	late   []LateAnswer
	lateN  uint64
	dupN   uint64
	// untagged lockstep: after a missed step (lastMissed), an untagged
	// answer may be the missed one's, late: counted, said at the first
	unsure     bool
	lastMissed uint64
	untagged   uint64
	warnedNo   bool
	end        context.CancelCauseFunc // ends the player's run with a cause
}

// startFixture opens what must exist before the player is made: the
// answers' subscriber, the clock's publisher, the capture's recording.
func startFixture(cfg *fixtureConfig, s *session, pubs *publishers, sess *zenoh.Session, trigger []bool, names []string) (*fixture, error) {
	f := &fixture{cfg: cfg, warn: cfg.Warn, pubs: pubs, now: clock.Monotonic(), trigger: trigger, names: names, sess: sess}
	var err error
	var tap func(*zenoh.Sample)
	switch {
	case cfg.Lockstep != "" && captured(cfg.lockstepPattern, cfg.capturePatterns):
		f.answers = newAnswers(cfg.lockstepPattern)
		tap = f.answers.tap
	case cfg.Lockstep != "":
		if f.answers, err = subscribeAnswers(sess, cfg.lockstepPattern); err != nil {
			return f, err
		}
	}
	if cfg.ClockKey != "" {
		toUnix := func(k int64) int64 { return k + s.wallOffset } // receive clock: file 0's monotonic → its wall clock
		if cfg.Clock == ClockCapture {
			toUnix = func(k int64) int64 { return k }
		}
		if f.clock, err = newLogClock(sess, cfg.ClockKey, cfg.Clock == ClockCapture, cfg.ClockPerRecord, toUnix); err != nil {
			return f, err
		}
	}
	if len(cfg.Capture) > 0 {
		if f.capture, err = startCapture(sess, s.outs, trigger, cfg.Capture, cfg.Output, cfg.Force, cfg.Files, tap); err != nil {
			return f, err
		}
	}
	return f, nil
}

// options fills the player options the fixture needs.
func (f *fixture) options(o *player.Options) {
	o.Now = f.now
	if f.answers != nil {
		o.Lockstep = &player.Lockstep{Trigger: f.trigger, Answers: f.answers.ch, Timeout: f.cfg.LockstepTimeout,
			OnStep: f.step, OnLate: f.onLate}
	}
	if n := f.cfg.WaitSubscribers; n > 0 || f.cfg.WaitController {
		o.Ready = func(ctx context.Context) error {
			t0 := time.Now()
			defer func() { f.waited = time.Since(t0) }()
			if f.cfg.WaitController {
				if err := waitForController(ctx, f.sess, f.cfg.Lockstep, f.cfg.WaitTimeout, f.warn); err != nil {
					return err
				}
			}
			if n == 0 {
				return nil
			}
			timeout := f.cfg.WaitTimeout
			if timeout > 0 && f.cfg.WaitController {
				timeout = max(time.Millisecond, timeout-time.Since(t0)).Round(time.Millisecond) // one bound for both waits
			}
			return waitForSubscribers(ctx, f.pubs, n, timeout, f.warn)
		}
	}
}

// warnf writes one line to the warning writer.
func (f *fixture) warnf(format string, args ...any) { warnf(f.warn, format, args...) }

// step is the player's OnStep: it counts the missed steps, warns on the
// first one, and ends the run with ErrMissedSteps (or ErrNoAnswer) once
// the bounds are crossed.
func (f *fixture) step(s player.Step) {
	if s.Ended {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps++
	if s.Answered {
		f.inARow = 0
		if !s.Tagged && f.unsure {
			f.untagged++
			if f.untagged == 1 {
				f.warnf("warning: lockstep: %s seq %d was released by an untagged answer after seq %d missed its %v timeout: that answer may be the missed step's, come late, and every later pairing one step off (answers that echo vrlog.seq=SEQ in their attachment are paired exactly; docs/replay.md, \"Pairing answers\")",
					f.pubs.outs[s.Channel].Topic, s.Seq, f.lastMissed, f.cfg.LockstepTimeout)
			}
		}
		return
	}
	f.missed++
	f.unsure, f.lastMissed = true, s.Seq
	f.inARow++
	answered := f.steps - f.missed
	if f.missed == 1 {
		why := "answers came, but not within the timeout"
		if f.answers.received.Load() == 0 {
			why = "nothing was received on " + f.cfg.Lockstep + " yet: is the controller running, and answering on that key?"
		}
		f.warnf("warning: lockstep: no answer to %s seq %d within %v, a missed step (%s)", f.pubs.outs[s.Channel].Topic, s.Seq, f.cfg.LockstepTimeout, why)
	}
	c := f.cfg
	var bound string
	switch {
	case c.MaxMissedInARow > 0 && f.inARow >= c.MaxMissedInARow:
		bound = fmt.Sprintf("%d trigger records in a row went out unanswered after the %v timeout", f.inARow, c.LockstepTimeout)
	case c.MaxMissed > 0 && f.missed >= uint64(c.MaxMissed):
		bound = fmt.Sprintf("%d missed steps (no answer within %v), the most allowed", f.missed, c.LockstepTimeout)
	default:
		return
	}
	if answered == 0 {
		f.end(kindf(ErrNoAnswer, "lockstep %s: no answer at all: %s (is the controller running, and answering on that key?)", c.Lockstep, bound))
		return
	}
	f.end(kindf(ErrMissedSteps, "lockstep %s: %s, after %d answered: the controller stopped answering", c.Lockstep, bound, answered))
}

// maxLateListed bounds the late answers the report lists (all are counted).
const maxLateListed = 100

// onLate is the player's OnLate: each late answer is said and counted, a
// duplicate counted and said once.
func (f *fixture) onLate(l player.Late) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l.Duplicate {
		if f.dupN++; f.dupN == 1 {
			f.warnf("warning: lockstep: seq %d was answered again: duplicate answers are counted (duplicates), never taken for another trigger's", l.Tag)
		}
		return
	}
	f.lateN++
	if len(f.late) < maxLateListed {
		f.late = append(f.late, LateAnswer{Seq: l.Tag, Current: l.Current})
	}
	f.warnf("warning: lockstep: late answer for seq %d dropped (seq %d is the trigger now)", l.Tag, l.Current)
}

// watch ends the run with ErrControllerGone as soon as a trigger channel
// that had a subscriber (zenoh's matching status, iceoryx2's subscriber
// count: the controller's) has none, and says so at once.
func (f *fixture) watch(ctx context.Context) (stop func()) {
	if f.answers == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	tokenDone := make(chan struct{})
	if f.cfg.WaitController {
		go func() { defer close(tokenDone); f.watchToken(ctx) }()
	} else {
		close(tokenDone)
	}
	go func() {
		defer close(done)
		had := make([]bool, len(f.trigger))
		t := time.NewTicker(watchPoll)
		defer t.Stop()
		for {
			for i, trig := range f.trigger {
				if !trig {
					continue
				}
				n, err := f.pubs.subscribers(i)
				if err != nil {
					continue
				}
				if n > 0 {
					had[i] = true
				} else if had[i] {
					f.warnf("lockstep: %s lost its subscriber: the controller is gone", f.pubs.outs[i].Topic)
					f.end(kindf(ErrControllerGone, "lockstep %s: trigger channel %s lost its subscriber (the controller died or left) after %d answered steps",
						f.cfg.Lockstep, f.pubs.outs[i].Topic, f.answered()))
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done; <-tokenDone }
}

// watchToken ends the run once the controller's liveliness token (which
// WaitController waited for) is gone: a recorder of the trigger keys
// would hide the lost subscriber.
func (f *fixture) watchToken(ctx context.Context) {
	t := time.NewTicker(tokenPoll)
	defer t.Stop()
	seen, gone := false, 0 // the wait for it runs meanwhile
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tokens, err := f.sess.LiveTokens(f.cfg.Lockstep, 250*time.Millisecond)
		if err != nil || ctx.Err() != nil {
			continue
		}
		if len(tokens) > 0 || !seen {
			seen, gone = seen || len(tokens) > 0, 0
			continue
		}
		if gone++; gone < 2 { // twice in a row: a query a loaded machine answered late is no death
			continue
		}
		f.warnf("lockstep: the controller's liveliness token on %s is gone: the controller is gone", f.cfg.Lockstep)
		f.end(kindf(ErrControllerGone, "lockstep %s: the controller's liveliness token is gone (the controller died or left) after %d answered steps",
			f.cfg.Lockstep, f.answered()))
		return
	}
}

// watchPoll is how often the trigger channels' subscribers are looked at;
// tokenPoll the controller's liveliness token (a zenoh query each time).
const (
	watchPoll = 20 * time.Millisecond
	tokenPoll = 100 * time.Millisecond
)

func (f *fixture) answered() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.steps - f.missed
}

// serve starts what works on the player: the control channel and the
// clock's ticks.
func (f *fixture) serve(p *player.Player, sess *zenoh.Session, span time.Duration) error {
	if f.clock != nil {
		f.clock.start(p, f.cfg.ClockRate)
	}
	if f.cfg.Control == "" {
		return nil
	}
	var err error
	if f.control, err = replayctl.Serve(sess, f.cfg.Control, p, span); err != nil {
		return kindf(ErrTransport, "control channel %s: %w", f.cfg.Control, err)
	}
	return nil
}

// Publish implements player.Sink: the record, with the clock just before
// it and its release booked for the capture (stamped before the publish:
// the controller cannot have it earlier).
func (f *fixture) Publish(r *player.Rec) error {
	if f.clock != nil {
		f.clock.record(r)
	}
	var mono, wall int64
	if f.capture != nil {
		mono, wall = f.now(), clock.WallNow()
	}
	if err := f.pubs.Publish(r); err != nil {
		return err
	}
	if f.capture != nil {
		f.capture.release(r, mono, wall)
	}
	return nil
}

// finish stops the clock, finishes the response log with the replay's
// outcome and closes the rest; the error is the first failure of a part
// (the capture's, the clock's).
func (f *fixture) finish(out *Outcome) error {
	var errs []error
	if f.clock != nil {
		errs = append(errs, f.clock.close())
	}
	if f.capture != nil {
		f.capture.outcome(out)
		sum, err := f.capture.finish()
		if err != nil {
			errs = append(errs, kindf(ErrOutput, "capture: %w", err))
		} else if sum != nil {
			f.captured = f.capture.report(f.cfg.Output)
		}
	}
	if f.control != nil {
		f.control.Close()
	}
	if f.answers != nil {
		f.answers.close()
	}
	return errors.Join(errs...)
}

// abort releases what startFixture opened when the replay cannot start.
func (f *fixture) abort() {
	if f == nil {
		return
	}
	if f.capture != nil {
		f.capture.finish()
	}
	if f.clock != nil {
		f.clock.close()
	}
	if f.answers != nil {
		f.answers.close()
	}
}
