// Package replay is the `replay` command: it republishes the channels of one
// or more .vrlog files over zenoh and iceoryx2 at the original pacing (or
// faster, or with faults injected) into a controller under test. The pacing
// engine is package player; this package wires it to the log and the
// transports.
package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/cpulatency"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Command returns the replay command.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "republish a log over zenoh and iceoryx2 at the original pacing, into a controller under test",
		ArgsUsage: "FILE.vrlog [FILE.vrlog ...]",
		Description: `Publishes every data channel of the log on its original transport and name:
zenoh keys with the recorded encoding, attachment and source info (publisher
id and sequence number: a replayed channel shows the original's skips and
restarts), iceoryx2 services with the recorded type details and user header,
so subscribers open them unchanged.
Internal channels (clock-sync probes) are never published. Several files are
merged by receive time.

Pacing follows the recorder's monotonic receive stamps (default: what the
controller saw, jitter and outages included) or the simulator's capture t_ns
(--clock capture). Deadlines are absolute on the monotonic clock: no drift.
At the end it prints, per channel, the records sent and the timing error
(actual publish time minus scheduled time) p50 / p99 / max; --json prints the
same as JSON (docs/replay.md).

TIMES: --start, --end are offsets in seconds from the log start ("12.5") or
absolute RFC 3339 times; --duration, --delay and fault times take seconds or Go
durations ("1.5", "300ms").

KEYS (on a terminal): space pause/resume, → step one record (while paused),
↑/↓ rate ×1.1 / ÷1.1, q quit.

A TEST FIXTURE for a controller under test (docs/replay.md):
   --wait-for-subscribers N  start when every zenoh key has a matching
                   subscriber and every iceoryx2 service N subscribers;
                   --wait-timeout D makes a missing one exit 3, naming it
   --control NAME  take pause, resume, step [N], seek T, rate R, status and
                   stop over zenoh on vrlog/replay/NAME/control (` + "`vrlog ctl`" + `,
                   or any zenoh client); status on vrlog/replay/NAME/status.
                   Off a terminal, --start-paused waits for a resume there
                   (NAME default)
   --clock-key K   publish the log's time on K (vrlog.ReplayClock/1,
                   docs/wire-format.md) at --clock-rate and/or with every
                   record (--clock-per-record)
   --lockstep KEY  release each record of the trigger channels (--trigger,
                   default the state channels) only after the controller
                   answered on KEY, or --lockstep-timeout passed (a missed step;
                   some are reported, gate them with analyze --max-reaction;
                   no answer at all is exit 1)
   --capture PATTERN -o response.vrlog
                   record the controller's outputs (zenoh keys and iceoryx2
                   services PATTERN matches) with the released triggers, on
                   one clock: ` + "`analyze --max-reaction`" + ` gates the reaction

FAULTS (--inject, repeatable; reproducible with --seed; AT is log time from
the played window's start, and an AT at or after its end is exit 2):
   drop=P          drop each record with probability P
   outage=AT:FOR   publish nothing from AT for FOR (log time from the start)
   restart=AT      from AT on, seq restarts at 0 (decodable channels' seq, and
                   zenoh source sequence numbers), up to a restart in the log
   jitter=SIGMA    add normal jitter (sigma) to each deadline, order kept per channel
   lag=D           delay frame channels by D relative to states

EXAMPLES:
   replay run.vrlog
   replay --rate 2 --loop 3 --channel 'vr/r1/**' run.vrlog
   replay --restamp --prefix test --inject drop=0.05 --seed 7 run.vrlog
   replay --start 10 --duration 5 --start-paused run.vrlog
   replay --rate max --quiet --json run.vrlog > timing.json
   replay run.vrlog --wait-for-subscribers 1 --wait-timeout 30s --lockstep vr/r1/cmd \
          --capture vr/r1/cmd -o response.vrlog --control ci

` + cliutil.ExitCodesHelp + `
   replay: 0 also when ended with q or the control channel's stop; 1 when a
   --capture pattern captured nothing (the response log is kept); 3 when
   --wait-timeout passed without the subscribers, or on SIGINT/SIGTERM.`,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "channel", Aliases: []string{"c"}, Usage: "replay the data channels whose name or topic matches `PATTERN`, a key expression (* one level, ** any levels); repeatable; default all"},
			&cli.StringSliceFlag{Name: "remap", Usage: "publish the channels whose topic or name `FROM` (a pattern) matches as TO; FROM/**=TO/** keeps what ** matched; repeatable"},
			&cli.StringFlag{Name: "prefix", Usage: "prepend `P/` to every published key and service"},
			&cli.StringFlag{Name: "clock", Value: "receive", Usage: "pace by `receive` (recorder monotonic stamps) or capture (simulator t_ns)"},
			&cli.StringFlag{Name: "rate", Value: "1", Usage: "speed `FACTOR`, or max (as fast as the transports take it)"},
			&cli.IntFlag{Name: "loop", Value: 1, Usage: "play `N` times; 0 = forever"},
			&cli.StringFlag{Name: "start", Usage: "begin at `T`: seconds from the log start, or RFC 3339"},
			&cli.StringFlag{Name: "end", Usage: "stop before `T`: seconds from the log start, or RFC 3339"},
			&cli.StringFlag{Name: "duration", Usage: "play `D` of log time from --start"},
			&cli.StringFlag{Name: "delay", Usage: "wait `D` after creating the publishers, before the first record"},
			&cli.BoolFlag{Name: "start-paused", Usage: "start paused: resume with space or → on a terminal, over the control channel off one"},
			&cli.IntFlag{Name: "wait-for-subscribers", Usage: "start only when every zenoh key has a matching subscriber and every iceoryx2 service `N` subscribers"},
			&cli.DurationFlag{Name: "wait-timeout", Usage: "give up waiting for subscribers after `D` (exit 3, naming the channels still without); default no limit"},
			&cli.StringFlag{Name: "control", Usage: "take commands over zenoh on vrlog/replay/`NAME`/control and publish the status on vrlog/replay/NAME/status"},
			&cli.StringFlag{Name: "clock-key", Usage: "publish the log's time on zenoh key `KEY` (vrlog.ReplayClock/1)"},
			&cli.Float64Flag{Name: "clock-rate", Value: 100, Usage: "clock ticks per second (`HZ`; 0: only with records)"},
			&cli.BoolFlag{Name: "clock-per-record", Usage: "also publish the clock just before every record"},
			&cli.StringFlag{Name: "lockstep", Usage: "release each trigger record only after the controller answered on `KEYEXPR` (or the timeout passed)"},
			&cli.DurationFlag{Name: "lockstep-timeout", Value: time.Second, Usage: "how long a lockstep record waits for its answer before it counts as a missed step"},
			&cli.StringSliceFlag{Name: "trigger", Usage: "the channels lockstep holds and capture measures the reaction from (`PATTERN`, repeatable); default the state channels"},
			&cli.StringSliceFlag{Name: "capture", Usage: "record the controller's outputs: zenoh keys and iceoryx2 services `PATTERN` matches (repeatable; needs -o)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "--capture's response log `FILE`"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing -o"},
			&cli.BoolFlag{Name: "restamp", Usage: "shift every stamp of decodable payloads by one constant so the first record's t_ns is now"},
			&cli.StringSliceFlag{Name: "inject", Usage: "inject a fault `KIND=VALUE` (see FAULTS); repeatable"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random `SEED` for drop and jitter"},
			&cli.BoolFlag{Name: "tolerant", Usage: "replay what is intact of a truncated or corrupt log instead of failing"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON (schema vrlog.replay/1, docs/replay.md)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress output"},
			&cli.DurationFlag{Name: "linger", Value: 500 * time.Millisecond, Usage: "keep publishers open this long after the last record, so subscribers drain"},
			&cli.DurationFlag{Name: "reorder-window", Value: 100 * time.Millisecond, Usage: "with --clock capture: re-sort records arriving up to this much out of capture order"},
			&cli.IntFlag{Name: "read-ahead-bytes", Value: 64 << 20, Usage: "read-ahead queue bound in `BYTES`"},
			&cli.DurationFlag{Name: "read-ahead", Value: 2 * time.Second, Usage: "read-ahead queue bound in log time"},
			&cli.DurationFlag{Name: "spin", Usage: "fix the sleep-then-spin margin (default adaptive, 10µs..250µs)"},
			&cli.BoolFlag{Name: "low-latency", Usage: "keep every CPU out of deep idle while playing (PM QoS request of 0 µs on /dev/cpu_dma_latency, as cyclictest does; needs root): idle CPUs, above all a VM's, otherwise wake milliseconds late, for replay and its subscribers alike; costs power while it runs"},
		}, zenohflags.Flags()...),
		Action: run,
	}
}

// config is the parsed command line.
type config struct {
	files             []string
	clock             clockKind
	rate              float64
	rateMax           bool
	window            logfmt.Window
	delay             time.Duration
	faults            player.Faults
	injects           []string
	patterns          *keyexpr.Set
	remaps            []*keyexpr.Remap
	remapUsed         []bool
	prefix            string
	tolerant, jsonOut bool
	quiet             bool
	zenoh             zenoh.Config
	fixture           fixtureConfig
}

// fixtureConfig is what makes the replay a test fixture (docs/replay.md).
type fixtureConfig struct {
	waitSubscribers int
	waitTimeout     time.Duration
	control         string
	clockKey        string
	clockRate       float64
	clockPerRecord  bool
	lockstep        string
	lockstepPattern keyexpr.Pattern
	lockstepTimeout time.Duration
	triggers        *keyexpr.Set
	capture         []string
	capturePatterns []keyexpr.Pattern
	output          string
	force           bool
	pausedOffTTY    bool // --start-paused off a terminal: resumed over the control channel
}

func parse(c *cli.Context) (*config, error) {
	if c.NArg() == 0 {
		return nil, cliutil.Usage("no input: give one or more .vrlog files (see --help)")
	}
	cfg := &config{files: c.Args().Slice(), tolerant: c.Bool("tolerant"), jsonOut: c.Bool("json"), quiet: c.Bool("quiet")}
	switch c.String("clock") {
	case "receive", "recv":
		cfg.clock = clockReceive
	case "capture":
		cfg.clock = clockCapture
	default:
		return nil, cliutil.Usage("--clock %q: want receive or capture", c.String("clock"))
	}
	if r := c.String("rate"); r == "max" {
		cfg.rateMax = true
	} else {
		f, err := strconv.ParseFloat(r, 64)
		if err != nil || !(f > 0) || f > 1e9 {
			return nil, cliutil.Usage("--rate %q: want a factor > 0 or max", r)
		}
		cfg.rate = f
	}
	if err := cliutil.NonNegative(c, "wait-timeout", "lockstep-timeout", "linger", "reorder-window", "read-ahead", "spin"); err != nil {
		return nil, err
	}
	if c.Int("read-ahead-bytes") < 0 || c.Int("wait-for-subscribers") < 0 {
		return nil, cliutil.Usage("--read-ahead-bytes and --wait-for-subscribers want N >= 0")
	}
	if c.Int("loop") < 0 {
		return nil, cliutil.Usage("--loop %d: want N >= 0 (0 = forever)", c.Int("loop"))
	}
	var err error
	if cfg.window, err = logfmt.ParseWindow(c.String("start"), c.String("end"), c.String("duration")); err != nil {
		return nil, cliutil.Usage("%v", err)
	}
	if s := c.String("delay"); s != "" {
		if cfg.delay, err = player.ParseDuration(s); err != nil || cfg.delay < 0 {
			return nil, cliutil.Usage("--delay %q: want seconds or a duration >= 0", s)
		}
	}
	for _, s := range c.StringSlice("inject") {
		if err := cfg.faults.ParseInject(s); err != nil {
			return nil, cliutil.Usage("--inject: %v", err)
		}
		cfg.injects = append(cfg.injects, s)
	}
	if cfg.patterns, err = keyexpr.ParseSet(c.StringSlice("channel")); err != nil {
		return nil, cliutil.Usage("--channel: %v", err)
	}
	for _, spec := range c.StringSlice("remap") {
		m, err := keyexpr.ParseRemap(spec)
		if err != nil {
			return nil, cliutil.Usage("--remap: %v", err)
		}
		cfg.remaps = append(cfg.remaps, m)
	}
	cfg.remapUsed = make([]bool, len(cfg.remaps))
	if p := strings.TrimSuffix(c.String("prefix"), "/"); p != "" {
		if pat, err := keyexpr.Parse(p); err != nil || !pat.Literal() {
			return nil, cliutil.Usage("--prefix %q: want levels of a name, without wildcards", c.String("prefix"))
		}
		cfg.prefix = p + "/"
	}
	if cfg.zenoh, err = zenohflags.Config(c); err != nil {
		return nil, err
	}
	if cfg.fixture, err = parseFixture(c); err != nil {
		return nil, err
	}
	return cfg, nil
}

// session is the opened inputs, the selected outputs and the window.
type session struct {
	inputs     []*input
	outs       []output
	src        *logSource
	logStart   int64 // key of the log's first data record
	logEnd     int64
	wallOffset int64 // file 0's wall - mono
}

func (s *session) close() {
	for _, in := range s.inputs {
		in.r.Close()
	}
}

// open opens the files and selects channels and the window.
func open(cfg *config) (*session, error) {
	s := &session{src: &logSource{clock: cfg.clock}}
	var names []string        // the data channels there are, for errors
	index := map[string]int{} // transport/topic → output
	first := true
	for _, path := range cfg.files {
		r, err := logfmt.Open(path, logfmt.ReaderOptions{Tolerant: cfg.tolerant})
		if err != nil {
			s.close()
			return nil, cliutil.Input(err)
		}
		in := &input{path: path, r: r, out: map[uint16]int{}}
		s.inputs = append(s.inputs, in)
		if tt := r.TornTail(); tt != nil && !cfg.tolerant {
			s.close()
			return nil, cliutil.Input(fmt.Errorf("%w (truncated log; --tolerant replays the intact part)", tt))
		}
		w := wallMinusMono(r)
		if first {
			s.wallOffset = w
		}
		in.shift = w - s.wallOffset
		for _, ch := range r.Channels() {
			if ch.Transport == logfmt.TransportInternal {
				continue
			}
			if !slices.Contains(names, ch.Name) {
				names = append(names, ch.Name)
			}
			st := r.StatsOf(ch.ID)
			if st.Records > 0 {
				k0, k1 := st.FirstMonoNs+in.shift, st.LastMonoNs+in.shift
				if cfg.clock == clockCapture {
					k0, k1 = st.FirstCaptureNs, st.LastCaptureNs
				}
				if cfg.clock == clockReceive || st.HasCapture {
					if first || k0 < s.logStart {
						s.logStart = k0
					}
					if first || k1 > s.logEnd {
						s.logEnd = k1
					}
					if cfg.clock == clockCapture && s.src.captureOff == 0 {
						s.src.captureOff = st.FirstCaptureNs - (st.FirstMonoNs + in.shift)
					}
					first = false
				}
			}
			if cfg.patterns.Len() > 0 && !cfg.patterns.Match(ch.Name, ch.Topic) {
				continue
			}
			topic := cfg.topic(ch)
			k := ch.Transport.String() + "\x00" + topic
			oi, ok := index[k]
			if !ok {
				oi = len(s.outs)
				index[k] = oi
				avg := 0
				if st.Records > 0 {
					avg = int(st.RawBytes / st.Records)
				}
				s.outs = append(s.outs, output{Name: ch.Name, Transport: ch.Transport, Topic: topic, Schema: ch.Schema,
					Meta: ch.Meta, MaxRecord: avg + avg/4, Frame: isFrame(ch)})
			}
			in.out[ch.ID] = oi
			in.ids = append(in.ids, ch.ID)
		}
	}
	s.src.inputs = s.inputs
	if err := cfg.patterns.Unmatched("data channel", names); err != nil {
		s.close()
		return nil, cliutil.Usage("--channel %v", err)
	}
	for i, used := range cfg.remapUsed {
		if !used {
			s.close()
			return nil, cliutil.Usage("--remap %s: FROM matches no replayed channel (name or topic)", cfg.remaps[i])
		}
	}
	if len(s.outs) == 0 {
		s.close()
		return nil, cliutil.Usage("nothing to replay: the log has no data channel")
	}
	if first && cfg.clock == clockCapture {
		s.close()
		return nil, cliutil.Input(errors.New("--clock capture: no channel carries capture stamps"))
	}
	fromUnix := func(unix int64) int64 { return unix - s.wallOffset } // receive key: file 0's monotonic clock
	if cfg.clock == clockCapture {
		fromUnix = nil
	}
	win, err := cfg.window.Resolve(s.logStart, fromUnix)
	if err == nil && !win.Overlaps(s.logStart, s.logEnd) {
		err = fmt.Errorf("%w: it spans %s from its start", logfmt.ErrOutsideLog, time.Duration(s.logEnd-s.logStart))
	}
	if err != nil {
		s.close()
		return nil, cliutil.Usage("%v", err)
	}
	s.src.start, s.src.end, s.src.hasEnd = s.logStart, win.End, win.HasEnd
	if win.HasStart {
		s.src.start = win.Start
	}
	return s, nil
}

func run(c *cli.Context) error {
	cfg, err := parse(c)
	if err != nil {
		return err
	}
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	s, err := open(cfg)
	if err != nil {
		return err
	}
	defer s.close()
	trigger, names, err := cfg.fixture.check(s.outs)
	if err != nil {
		return err
	}

	span := s.logEnd - s.src.start
	if s.src.hasEnd {
		span = min(s.src.end, s.logEnd) - s.src.start
	}
	if err := cfg.faults.Within(time.Duration(span)); err != nil {
		return cliutil.Usage("--inject: %v", err)
	}
	chans := make([]player.Channel, len(s.outs))
	for i, o := range s.outs {
		chans[i] = player.Channel{Name: o.Name, Schema: o.Schema, Frame: o.Frame}
	}
	opts := player.Options{Channels: chans, Rate: cfg.rate, RateMax: cfg.rateMax, Loops: c.Int("loop"),
		Delay: cfg.delay, StartPaused: c.Bool("start-paused"), Origin: s.src.start, Restamp: c.Bool("restamp"),
		Faults: cfg.faults, Seed: c.Uint64("seed"), MaxQueueBytes: c.Int("read-ahead-bytes"), ReadAhead: c.Duration("read-ahead"),
		Length: time.Duration(span)}
	if s.src.hasEnd {
		opts.Span = time.Duration(s.src.end - s.src.start)
	}
	if cfg.clock == clockCapture {
		opts.ReorderWindow = c.Duration("reorder-window")
	}
	if d := c.Duration("spin"); d > 0 {
		opts.SpinMin, opts.SpinMax = d, d
	}

	var sess *zenoh.Session
	if needsZenoh(s.outs) || cfg.fixture.needsSession() {
		if sess, err = zenoh.Open(cfg.zenoh); err != nil {
			return zenohflags.OpenError(fmt.Errorf("zenoh session: %w", err))
		}
		defer sess.Close()
	}
	// Express (no batching) unless at rate max; in lockstep always: each
	// record waits for the answer to the one before.
	pubs, err := openPublishers(s.outs, sess, transportOptions{express: !cfg.rateMax || cfg.fixture.lockstep != "", warn: stderr})
	if err != nil {
		pubs.Close()
		return zenohflags.OpenError(err)
	}
	fx, err := startFixture(cfg, s, pubs, sess, trigger, names)
	if err != nil {
		fx.abort()
		pubs.Close()
		if cliutil.Code(err) != cliutil.ExitRuntime {
			return err
		}
		return zenohflags.OpenError(err)
	}
	fx.options(&opts, progressWriter(stderr, cfg.quiet))
	p, err := player.New(s.src, fx, opts)
	if err != nil {
		fx.abort()
		pubs.Close()
		return cliutil.Usage("%v", err)
	}
	if err := fx.serve(p, sess, time.Duration(span), stderr, cfg.quiet); err != nil {
		fx.abort()
		pubs.Close()
		return cliutil.Runtime(err)
	}

	if c.Bool("low-latency") {
		release, err := cpulatency.Hold(0)
		if err != nil {
			fx.abort()
			pubs.Close()
			return cliutil.Runtime(fmt.Errorf("--low-latency: %w", err))
		}
		defer release()
	}

	cliutil.Graceful(c) // SIGINT or SIGTERM stops the replay and prints its report
	ctx := c.Context
	ui := startUI(ctx, p, stderr, cfg.quiet, time.Duration(span))
	sum, perr := p.Run(ctx)
	ctrlC := ui.stop()
	if perr == nil && !sum.Interrupted {
		time.Sleep(c.Duration("linger"))
	}
	ferr := fx.finish()
	cerr := pubs.Close()

	rep := buildReport(cfg, s, sum, opts)
	rep.LowLatency = c.Bool("low-latency")
	rep.addFixture(fx)
	if cfg.jsonOut {
		err = writeJSON(stdout, rep)
	} else {
		err = writeText(stdout, rep)
	}
	if err != nil {
		return cliutil.Runtime(err)
	}
	warnSkipped(c, s)
	switch {
	case perr != nil:
		var ce *logfmt.CorruptionError
		if errors.As(perr, &ce) {
			return cliutil.Input(fmt.Errorf("%w (replayed up to the damage; --tolerant skips it)", perr))
		}
		return cliutil.Runtime(perr)
	case ferr != nil:
		return cliutil.Runtime(ferr)
	case cerr != nil:
		return cliutil.Runtime(cerr)
	case sum.Interrupted && (!sum.Stopped || ctrlC): // q and the control channel's stop end it as asked: exit 0
		return cliutil.Runtime(errors.New("interrupted"))
	case rep.Lockstep != nil && rep.Lockstep.Answered == 0 && rep.Lockstep.Missed > 0:
		return cliutil.CheckFailed(fmt.Errorf("--lockstep %s: no answer at all: each of the %d trigger records was released after --lockstep-timeout %g s (is the controller running, and answering on that key?)",
			rep.Lockstep.Key, rep.Lockstep.Missed, rep.Lockstep.TimeoutS))
	case rep.Capture != nil && len(rep.Capture.Missed) > 0:
		return cliutil.CheckFailed(fmt.Errorf("--capture captured nothing on %s (the response log %s holds the released records)",
			strings.Join(rep.Capture.Missed, ", "), rep.Capture.Output))
	}
	return nil
}

// progressWriter is where waiting messages go: nowhere with --quiet.
func progressWriter(w io.Writer, quiet bool) io.Writer {
	if quiet {
		return nil
	}
	return w
}

func warnSkipped(c *cli.Context, s *session) {
	for _, in := range s.inputs {
		cliutil.WarnDamage(c, in.r.Damage())
	}
}

// fmtDur prints a duration in seconds with a precision that fits.
func fmtSec(d time.Duration) string {
	return strings.TrimSuffix(strconv.FormatFloat(d.Seconds(), 'f', 1, 64), ".0") + " s"
}
