package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/replayctl"
	"github.com/vrlog/vrlog/transport/clock"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// defaultControl is the control channel's name when --start-paused off a
// terminal turns it on without --control.
const defaultControl = "default"

// parseFixture reads the flags that make the replay a test fixture for a
// controller (docs/replay.md, "A test fixture").
func parseFixture(c *cli.Context) (fixtureConfig, error) {
	f := fixtureConfig{waitSubscribers: c.Int("wait-for-subscribers"), waitTimeout: c.Duration("wait-timeout"),
		control: c.String("control"), clockKey: c.String("clock-key"), clockRate: c.Float64("clock-rate"),
		clockPerRecord: c.Bool("clock-per-record"), lockstep: c.String("lockstep"), lockstepTimeout: c.Duration("lockstep-timeout"),
		capture: c.StringSlice("capture"), output: c.String("output"), force: c.Bool("force")}
	switch {
	case f.waitSubscribers < 0:
		return f, cliutil.Usage("--wait-for-subscribers %d: want N >= 1 (iceoryx2 subscribers per service; zenoh keys need one match)", f.waitSubscribers)
	case f.waitTimeout < 0 || (f.waitTimeout > 0 && f.waitSubscribers == 0):
		return f, cliutil.Usage("--wait-timeout %v: want a duration > 0, with --wait-for-subscribers", f.waitTimeout)
	}
	if f.control != "" {
		if err := replayctl.CheckName(f.control); err != nil {
			return f, cliutil.Usage("--control: %v", err)
		}
	}
	if c.Bool("start-paused") && !keyboard(c.App.ErrWriter) {
		f.pausedOffTTY = true
		if f.control == "" {
			f.control = defaultControl
		}
	}
	if f.clockKey != "" {
		if p, err := keyexpr.Parse(f.clockKey); err != nil || !p.Literal() {
			return f, cliutil.Usage("--clock-key %q: want a zenoh key without wildcards", f.clockKey)
		}
		if !(f.clockRate >= 0) || f.clockRate > 10000 || (f.clockRate == 0 && !f.clockPerRecord) {
			return f, cliutil.Usage("--clock-rate %v: want ticks per second in (0, 10000], or 0 with --clock-per-record", f.clockRate)
		}
	} else if c.IsSet("clock-rate") || f.clockPerRecord {
		return f, cliutil.Usage("--clock-rate and --clock-per-record need --clock-key")
	}
	var err error
	if f.lockstep != "" {
		if f.lockstepPattern, err = keyexpr.Parse(f.lockstep); err != nil {
			return f, cliutil.Usage("--lockstep: %v", err)
		}
		if f.lockstepTimeout <= 0 {
			return f, cliutil.Usage("--lockstep-timeout %v: want a duration > 0", f.lockstepTimeout)
		}
	}
	for _, s := range f.capture {
		p, err := keyexpr.Parse(s)
		if err != nil {
			return f, cliutil.Usage("--capture: %v", err)
		}
		f.capturePatterns = append(f.capturePatterns, p)
	}
	switch {
	case len(f.capture) > 0 && f.output == "":
		return f, cliutil.Usage("--capture needs -o FILE, the response log")
	case len(f.capture) == 0 && f.output != "":
		return f, cliutil.Usage("-o %s: only --capture writes a file; give the patterns to capture", f.output)
	}
	if f.triggers, err = keyexpr.ParseSet(c.StringSlice("trigger")); err != nil {
		return f, cliutil.Usage("--trigger: %v", err)
	}
	if f.triggers.Len() > 0 && f.lockstep == "" && len(f.capture) == 0 {
		return f, cliutil.Usage("--trigger chooses the channels of --lockstep and --capture; give one of them")
	}
	return f, nil
}

// needsSession reports whether the fixture talks over zenoh.
func (f *fixtureConfig) needsSession() bool {
	return f.control != "" || f.clockKey != "" || f.lockstep != "" || len(f.capture) > 0
}

// check validates the fixture against the replayed outputs: the replay
// must not hear itself, and lockstep and capture need trigger channels.
func (f *fixtureConfig) check(outs []output) ([]bool, []string, error) {
	status := ""
	if f.control != "" {
		status = replayctl.StatusKey(f.control)
	}
	if f.lockstep != "" {
		if k := selfMatch(f.lockstepPattern, outs, f.clockKey, status); k != "" {
			return nil, nil, cliutil.Usage("--lockstep %s matches %s, which this replay publishes: it would answer itself", f.lockstep, k)
		}
	}
	for i, p := range f.capturePatterns {
		if k := selfMatch(p, outs); k != "" {
			return nil, nil, cliutil.Usage("--capture %s matches %s, which this replay publishes: it would capture itself (the released records are in the response log anyway)", f.capture[i], k)
		}
	}
	if f.lockstep == "" && len(f.capture) == 0 {
		return nil, nil, nil
	}
	why := "--lockstep"
	if f.lockstep == "" {
		why = "--capture"
	}
	flags, names, err := triggers(outs, f.triggers, why)
	if err != nil {
		return nil, nil, cliutil.Usage("%v", err)
	}
	return flags, names, nil
}

// fixture is the running parts of a test fixture around the player.
type fixture struct {
	cfg      *fixtureConfig
	pubs     *publishers
	now      func() int64 // the schedule's clock: CLOCK_MONOTONIC, the recorder's
	trigger  []bool
	names    []string // the trigger channels' topics
	answers  *answers
	clock    *logClock
	capture  *capture
	control  *replayctl.Server
	waited   time.Duration // spent waiting for subscribers
	captured *captureReport
}

// startFixture opens what must exist before the player is made: the
// answers' subscriber, the clock's publisher, the capture's recording.
func startFixture(cfg *config, s *session, pubs *publishers, sess *zenoh.Session, trigger []bool, names []string) (*fixture, error) {
	f := &fixture{cfg: &cfg.fixture, pubs: pubs, now: clock.Monotonic(), trigger: trigger, names: names}
	fc := f.cfg
	var err error
	var tap func(string)
	switch {
	case fc.lockstep != "" && captured(fc.lockstepPattern, fc.capturePatterns):
		f.answers = tapAnswers(fc.lockstepPattern)
		tap = f.answers.tap
	case fc.lockstep != "":
		if f.answers, err = subscribeAnswers(sess, fc.lockstep); err != nil {
			return f, err
		}
	}
	if fc.clockKey != "" {
		toUnix := func(k int64) int64 { return k + s.wallOffset } // receive clock: file 0's monotonic → its wall clock
		if cfg.clock == clockCapture {
			toUnix = func(k int64) int64 { return k }
		}
		if f.clock, err = newLogClock(sess, fc.clockKey, cfg.clock == clockCapture, fc.clockPerRecord, toUnix); err != nil {
			return f, err
		}
	}
	if len(fc.capture) > 0 {
		if f.capture, err = startCapture(sess, s.outs, trigger, fc.capture, fc.output, fc.force, cfg.files, tap); err != nil {
			return f, cliutil.Output(err)
		}
	}
	return f, nil
}

// options fills the player options the fixture needs.
func (f *fixture) options(o *player.Options, warn io.Writer) {
	o.Now = f.now
	if f.answers != nil {
		o.Lockstep = &player.Lockstep{Trigger: f.trigger, Answers: f.answers.ch, Timeout: f.cfg.lockstepTimeout}
	}
	if n := f.cfg.waitSubscribers; n > 0 {
		o.Ready = func(ctx context.Context) error {
			t0 := time.Now()
			err := waitForSubscribers(ctx, f.pubs, n, f.cfg.waitTimeout, warn)
			f.waited = time.Since(t0)
			return err
		}
	}
}

// serve starts what works on the player: the control channel and the
// clock's ticks.
func (f *fixture) serve(p *player.Player, sess *zenoh.Session, span time.Duration, warn io.Writer, quiet bool) error {
	if f.clock != nil {
		f.clock.start(p, f.cfg.clockRate)
	}
	if f.cfg.control == "" {
		return nil
	}
	var err error
	if f.control, err = replayctl.Serve(sess, f.cfg.control, p, span); err != nil {
		return fmt.Errorf("--control %s: %w", f.cfg.control, err)
	}
	if f.cfg.pausedOffTTY || !quiet {
		how := ""
		if f.cfg.pausedOffTTY {
			how = "paused; resume with `vrlog ctl --replay " + f.cfg.control + " resume`, or "
		}
		fmt.Fprintf(warn, "replay: %scommands on zenoh %s, status on %s\n", how, replayctl.ControlKey(f.cfg.control), replayctl.StatusKey(f.cfg.control))
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

// finish stops the clock, finishes the response log and closes the rest;
// the error is the first failure of a part (the capture's, the clock's).
func (f *fixture) finish() error {
	var errs []error
	if f.clock != nil {
		errs = append(errs, f.clock.close())
	}
	if f.capture != nil {
		sum, err := f.capture.finish()
		if err != nil {
			errs = append(errs, fmt.Errorf("--capture: %w", err))
		} else if sum != nil {
			f.captured = f.capture.report(f.cfg.output)
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
