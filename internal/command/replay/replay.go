// Package replay is the `replay` command: it republishes the channels of one
// or more .vrlog files over zenoh and iceoryx2 at the original pacing (or
// faster, or with faults injected) into a controller under test. The replay
// itself is package replayer (its pacing engine package player); this
// package parses the flags, runs the keyboard UI and prints the report.
package replay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
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
	"github.com/vrlog/vrlog/replayctl"
	"github.com/vrlog/vrlog/replayer"
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
                   (NAME default replay-PID, printed on stderr)
   --clock-key K   publish the log's time on K (vrlog.ReplayClock/1,
                   docs/wire-format.md) at --clock-rate and/or with every
                   record (--clock-per-record)
   --lockstep KEY  release each record of the stimulus channels (--stimulus,
                   default the state channels) only after the controller
                   answered on KEY, or --lockstep-timeout passed (a missed step;
                   some are reported, gate them with analyze --max-reaction;
                   --max-missed-in-a-row N (default 3) in a row, or
                   --max-missed N in all, end the run with exit 1, as does
                   a stimulus key losing its subscriber (the controller died).
                   A controller pairs its answer to the stimulus by putting
                   "vrlog.seq=SEQ" (the state's seq) in the attachment; late
                   answers are then dropped and reported)
   --capture PATTERN -o response.vrlog
                   record the controller's outputs (zenoh keys and iceoryx2
                   services PATTERN matches) with the released stimuli, on
                   one clock: ` + "`analyze --max-reaction`" + ` gates the reaction
                   (the response log's JSON and metadata call them the
                   trigger channels, as before)

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
   replay run.vrlog --wait-for-subscribers 1 --wait-timeout 30s \
       --lockstep vr/r1/cmd \
       --capture vr/r1/cmd -o response.vrlog --control ci

` + cliutil.ExitCodesHelp + `
   replay: 0 also when ended with q or the control channel's stop; 1 when a
   --capture pattern captured nothing (the response log is kept), or in
   lockstep when no step was answered, too many were missed or the
   controller went away; 3 when --wait-timeout passed without the
   subscribers (or the controller's token, --wait-for-controller), or on
   SIGINT/SIGTERM.`,
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
			&cli.DurationFlag{Name: "wait-timeout", Usage: "give up waiting for subscribers (or the controller) after `D` (exit 3, naming the channels still without); default no limit"},
			&cli.BoolFlag{Name: "wait-for-controller", Usage: "with --lockstep, also wait for the controller itself: a zenoh liveliness token on the --lockstep key, which the controller declares on its answer key (vrlog controller and peers/controller.py do); a recorder of the trigger keys is a matching subscriber too, so without it a replay may start before its controller"},
			&cli.StringFlag{Name: "control", Usage: "take commands over zenoh on vrlog/replay/`NAME`/control and publish the status on vrlog/replay/NAME/status"},
			&cli.StringFlag{Name: "clock-key", Usage: "publish the log's time on zenoh key `KEY` (vrlog.ReplayClock/1)"},
			&cli.Float64Flag{Name: "clock-rate", Value: 100, Usage: "clock ticks per second (`HZ`; 0: only with records)"},
			&cli.BoolFlag{Name: "clock-per-record", Usage: "also publish the clock just before every record"},
			&cli.StringFlag{Name: "lockstep", Usage: "release each trigger record only after the controller answered on `KEYEXPR` (or the timeout passed)"},
			&cli.DurationFlag{Name: "lockstep-timeout", Value: time.Second, Usage: "how long a lockstep record waits for its answer before it counts as a missed step"},
			&cli.IntFlag{Name: "max-missed", Usage: "end a lockstep run (exit 1) after `N` missed steps; 0: no limit"},
			&cli.IntFlag{Name: "max-missed-in-a-row", Value: replayer.DefaultMaxMissedInARow, Usage: "end a lockstep run (exit 1) after `N` missed steps in a row; 0: no limit"},
			&cli.StringSliceFlag{Name: "stimulus", Usage: "the stimulus channels: those lockstep holds and capture measures the reaction from (`PATTERN`, repeatable; it was --trigger); default the state channels"},
			&cli.StringSliceFlag{Name: "trigger", Hidden: true, Usage: "deprecated: --stimulus"},
			&cli.StringSliceFlag{Name: "capture", Usage: "record the controller's outputs: zenoh keys and iceoryx2 services `PATTERN` matches (repeatable; needs -o)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "--capture's response log `FILE`"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing -o"},
			&cli.BoolFlag{Name: "iox2-block", Usage: "never overwrite a slow iceoryx2 subscriber's frames: services are created without safe overflow and each frame waits until every subscriber has room (replay's pace then follows the slowest subscriber)"},
			&cli.BoolFlag{Name: "restamp", Usage: "shift every stamp of decodable payloads by one constant so the first record's t_ns is now"},
			&cli.StringSliceFlag{Name: "inject", Usage: "inject a fault `KIND=VALUE` (see FAULTS); repeatable"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random `SEED` for drop and jitter"},
			&cli.BoolFlag{Name: "tolerant", Usage: "replay what is intact of a truncated or corrupt log instead of failing"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON (schema vrlog.replay/1, docs/replay.md)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress output"},
			&cli.DurationFlag{Name: "linger", Value: 500 * time.Millisecond, Usage: "keep publishers open this long after the last record, so subscribers drain (also after a stop that cut a lockstep step: the capture then holds its answer)"},
			&cli.DurationFlag{Name: "reorder-window", Value: 100 * time.Millisecond, Usage: "with --clock capture: re-sort records arriving up to this much out of capture order"},
			&cli.IntFlag{Name: "read-ahead-bytes", Value: 64 << 20, Usage: "read-ahead queue bound in `BYTES`"},
			&cli.DurationFlag{Name: "read-ahead", Value: 2 * time.Second, Usage: "read-ahead queue bound in log time"},
			&cli.DurationFlag{Name: "spin", Usage: "fix the sleep-then-spin margin (default adaptive, 10µs..250µs)"},
			&cli.BoolFlag{Name: "low-latency", Usage: "keep every CPU out of deep idle while playing (PM QoS request of 0 µs on /dev/cpu_dma_latency, as cyclictest does; needs root): idle CPUs, above all a VM's, otherwise wake milliseconds late, for replay and its subscribers alike; costs power while it runs"},
		}, zenohflags.Flags()...),
		Action: run,
	}
}

// options is the parsed command line: the replay's Config and what the
// verb does around it.
type options struct {
	cfg        replayer.Config
	jsonOut    bool
	quiet      bool
	lowLatency bool
	// pausedOffTTY: --start-paused off a terminal, resumed over the control
	// channel (named for this process when --control is not given).
	pausedOffTTY bool
}

// flagOf names the flag of each replayer.Config field, for its errors.
var flagOf = map[string]string{
	"Files": "FILE", "Rate": "--rate", "Loops": "--loop", "Delay": "--delay", "WaitTimeout": "--wait-timeout",
	"LockstepTimeout": "--lockstep-timeout", "Linger": "--linger", "ReorderWindow": "--reorder-window",
	"ReadAhead": "--read-ahead", "Spin": "--spin", "ReadAheadBytes": "--read-ahead-bytes",
	"WaitSubscribers": "--wait-for-subscribers", "WaitController": "--wait-for-controller", "Prefix": "--prefix", "Control": "--control", "ClockKey": "--clock-key",
	"ClockRate": "--clock-rate/--clock-per-record", "Lockstep": "--lockstep", "MaxMissed": "--max-missed",
	"MaxMissedInARow": "--max-missed-in-a-row", "Capture": "--capture", "Output": "-o", "Triggers": "--stimulus",
	"Channels": "--channel", "Remaps": "--remap", "Clock": "--clock", "Window": "--start/--end/--duration",
	"Faults": "--inject", "Player": "replay",
}

// flagError turns a replayer.ConfigError into a usage error naming the
// flag: "--lockstep vr/*/state matches ...", where the message starts with
// the value; "--flag: why" otherwise.
func flagError(ce *replayer.ConfigError) error {
	msg, sep := ce.Err.Error(), " "
	if ce.Needs != "" || packagePrefix.MatchString(msg) || slices.Contains([]string{"Window", "Files", "Player", "Faults"}, ce.Field) {
		sep = ": "
	}
	msg = flagOf[ce.Field] + sep + msg
	if ce.Needs != "" {
		msg += " (needs " + flagOf[ce.Needs] + ")"
	}
	return cliutil.Usage("%s", msg)
}

// packagePrefix is an error message's leading "pkg: ".
var packagePrefix = regexp.MustCompile(`^[a-z0-9]+: `)

func parse(c *cli.Context) (*options, error) {
	if c.NArg() == 0 {
		return nil, cliutil.Usage("no input: give one or more .vrlog files (see --help)")
	}
	o := &options{jsonOut: c.Bool("json"), quiet: c.Bool("quiet"), lowLatency: c.Bool("low-latency")}
	cfg := &o.cfg
	*cfg = replayer.Config{Files: c.Args().Slice(), Tolerant: c.Bool("tolerant"), Loops: c.Int("loop"), Forever: c.Int("loop") == 0,
		StartPaused: c.Bool("start-paused"), Seed: c.Uint64("seed"), Restamp: c.Bool("restamp"),
		ReadAheadBytes: c.Int("read-ahead-bytes"), ReadAhead: c.Duration("read-ahead"), ReorderWindow: c.Duration("reorder-window"),
		Spin: c.Duration("spin"), Linger: c.Duration("linger"), Prefix: c.String("prefix"), BlockIceoryx: c.Bool("iox2-block")}
	switch c.String("clock") {
	case "receive", "recv":
		cfg.Clock = replayer.ClockReceive
	case "capture":
		cfg.Clock = replayer.ClockCapture
	default:
		return nil, cliutil.Usage("--clock %q: want receive or capture", c.String("clock"))
	}
	if r := c.String("rate"); r == "max" {
		cfg.RateMax = true
	} else {
		f, err := strconv.ParseFloat(r, 64)
		if err != nil || !(f > 0) || f > 1e9 {
			return nil, cliutil.Usage("--rate %q: want a factor > 0 or max", r)
		}
		cfg.Rate = f
	}
	if err := cliutil.NonNegative(c, "wait-timeout", "linger", "reorder-window", "read-ahead", "spin"); err != nil {
		return nil, err
	}
	if err := cliutil.Positive(c, "lockstep-timeout"); err != nil {
		return nil, err
	}
	for _, name := range []string{"read-ahead-bytes", "wait-for-subscribers", "max-missed", "max-missed-in-a-row"} {
		if c.Int(name) < 0 {
			return nil, cliutil.Usage("--%s %d: want N >= 0", name, c.Int(name))
		}
	}
	if c.Int("loop") < 0 {
		return nil, cliutil.Usage("--loop %d: want N >= 0 (0 = forever)", c.Int("loop"))
	}
	var err error
	if cfg.Window, err = logfmt.ParseWindow(c.String("start"), c.String("end"), c.String("duration")); err != nil {
		return nil, cliutil.WindowUsage(err)
	}
	if s := c.String("delay"); s != "" {
		if cfg.Delay, err = player.ParseDuration(s); err != nil || cfg.Delay < 0 {
			return nil, cliutil.Usage("--delay %q: want seconds or a duration >= 0", s)
		}
	}
	for _, s := range c.StringSlice("inject") {
		if err := cfg.Faults.ParseInject(s); err != nil {
			return nil, cliutil.Usage("--inject: %v", err)
		}
		cfg.Inject = append(cfg.Inject, s)
	}
	if cfg.Channels, err = keyexpr.ParseSet(c.StringSlice("channel")); err != nil {
		return nil, cliutil.Usage("--channel: %v", err)
	}
	for _, spec := range c.StringSlice("remap") {
		m, err := keyexpr.ParseRemap(spec)
		if err != nil {
			return nil, cliutil.Usage("--remap: %v", err)
		}
		cfg.Remaps = append(cfg.Remaps, m)
	}
	if cfg.Zenoh, err = zenohflags.Config(c); err != nil {
		return nil, err
	}
	if err := o.parseFixture(c); err != nil {
		return nil, err
	}
	return o, nil
}

// parseFixture reads the flags that make the replay a test fixture for a
// controller (docs/replay.md, "A test fixture").
func (o *options) parseFixture(c *cli.Context) error {
	cfg := &o.cfg
	cfg.WaitSubscribers, cfg.WaitTimeout, cfg.WaitController = c.Int("wait-for-subscribers"), c.Duration("wait-timeout"), c.Bool("wait-for-controller")
	cfg.Control, cfg.ClockKey, cfg.ClockPerRecord = c.String("control"), c.String("clock-key"), c.Bool("clock-per-record")
	if cfg.ClockKey != "" || c.IsSet("clock-rate") {
		cfg.ClockRate = c.Float64("clock-rate")
	}
	cfg.Capture, cfg.Output, cfg.Force = c.StringSlice("capture"), c.String("output"), c.Bool("force")
	if cfg.Lockstep = c.String("lockstep"); cfg.Lockstep != "" {
		cfg.LockstepTimeout = c.Duration("lockstep-timeout")
		if cfg.LockstepTimeout <= 0 {
			return cliutil.Usage("--lockstep-timeout %v: want a duration > 0", cfg.LockstepTimeout)
		}
		cfg.MaxMissed, cfg.MaxMissedInARow = c.Int("max-missed"), c.Int("max-missed-in-a-row")
	} else if c.IsSet("max-missed") || c.IsSet("max-missed-in-a-row") {
		return cliutil.Usage("--max-missed and --max-missed-in-a-row bound --lockstep's missed steps; give --lockstep")
	}
	var err error
	if c.IsSet("trigger") {
		cliutil.Warn(c, "--trigger is deprecated: it is --stimulus now (the channels lockstep holds; a trigger is what fires a snapshot); --trigger goes in a later release")
	}
	if cfg.Triggers, err = keyexpr.ParseSet(append(c.StringSlice("stimulus"), c.StringSlice("trigger")...)); err != nil {
		return cliutil.Usage("--stimulus: %v", err)
	}
	if cfg.StartPaused && !keyboard(c.App.ErrWriter) {
		o.pausedOffTTY = true
		if cfg.Control == "" {
			cfg.Control = replayer.DefaultControl(os.Getpid())
		}
	}
	return nil
}

// openError maps Open's errors to exit codes, naming flags.
func openError(err error) error {
	var ce *replayer.ConfigError
	switch {
	case errors.As(err, &ce):
		return flagError(ce)
	case errors.Is(err, replayer.ErrInput):
		return cliutil.Input(withFlags(cliutil.LogHint(err)))
	case errors.Is(err, fs.ErrExist):
		return cliutil.Output(fmt.Errorf("-o: %w", err))
	case errors.Is(err, replayer.ErrOutput):
		return cliutil.Output(err)
	}
	return zenohflags.OpenError(err)
}

// runError maps Run's errors to exit codes, naming flags.
func runError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, replayer.ErrNoAnswer), errors.Is(err, replayer.ErrMissedSteps):
		return cliutil.CheckFailed(fmt.Errorf("--%w (bounds: --lockstep-timeout, --max-missed-in-a-row, --max-missed)", err))
	case errors.Is(err, replayer.ErrControllerGone):
		return cliutil.CheckFailed(fmt.Errorf("--%w", err)) // "--lockstep KEY: ..."
	case errors.Is(err, replayer.ErrCapturedNothing):
		return cliutil.CheckFailed(fmt.Errorf("--capture %w", err))
	case errors.Is(err, replayer.ErrNoController):
		return cliutil.Runtime(fmt.Errorf("--wait-for-controller: %w", err))
	case errors.Is(err, replayer.ErrNoSubscribers):
		return cliutil.Runtime(fmt.Errorf("--wait-for-subscribers: %w", err))
	case errors.Is(err, replayer.ErrInput):
		return cliutil.Input(withFlags(err))
	}
	return cliutil.Runtime(err)
}

// withFlags names the flag where the library's message names the setting.
func withFlags(err error) error {
	return errors.New(strings.Replace(err.Error(), "a tolerant replay", "--tolerant", 1))
}

func run(c *cli.Context) error {
	o, err := parse(c)
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
	o.cfg.Warn = stderr
	rp, err := replayer.Open(o.cfg)
	if err != nil {
		return openError(err)
	}
	defer rp.Close()
	if name := rp.Control(); name != "" && (o.pausedOffTTY || !o.quiet) {
		how := ""
		if o.pausedOffTTY {
			how = "paused; resume with `vrlog ctl --replay " + name + " resume`, or "
		}
		fmt.Fprintf(stderr, "replay: %scommands on zenoh %s, status on %s\n", how, replayctl.ControlKey(name), replayctl.StatusKey(name))
	}
	if o.lowLatency {
		release, err := cpulatency.Hold(0)
		if err != nil {
			return cliutil.Runtime(fmt.Errorf("--low-latency: %w", err))
		}
		defer release()
	}

	cliutil.Graceful(c) // SIGINT or SIGTERM stops the replay and prints its report
	keys := startUI(rp.Player(), stderr, o.quiet, rp.Span())
	rep, rerr := rp.Run(c.Context)
	ctrlC := keys.stop()
	if rep == nil {
		return cliutil.Runtime(rerr)
	}
	rep.LowLatency = o.lowLatency
	if fixture := o.cfg.Lockstep != "" || len(o.cfg.Capture) > 0 || o.cfg.WaitSubscribers > 0; fixture && !o.cfg.BlockIceoryx && !o.quiet {
		for _, ch := range rep.Channels {
			if ch.Transport == "iceoryx2" && ch.Sent > 0 { // said once: iceoryx2 tells a publisher nothing of an overwrite
				fmt.Fprintf(stderr, "replay: note: %s: sent counts the frames handed to iceoryx2; what a slow subscriber's full buffer overwrote is not known to a publisher (--iox2-block never overwrites; docs/replay.md)\n", ch.Topic)
				break
			}
		}
	}
	if o.jsonOut {
		err = writeJSON(stdout, rep)
	} else {
		err = writeText(stdout, rep, cliutil.Width(c))
	}
	if err != nil {
		return cliutil.Runtime(err)
	}
	cliutil.WarnDamage(c, rp.InputDamage()...)
	if rerr == nil && ctrlC { // Ctrl-C in raw mode is a key, not SIGINT: an interrupt all the same
		return cliutil.Runtime(errors.New("interrupted"))
	}
	return runError(rerr)
}

// fmtSec prints a duration in seconds with a precision that fits.
func fmtSec(d time.Duration) string {
	return strings.TrimSuffix(strconv.FormatFloat(d.Seconds(), 'f', 1, 64), ".0") + " s"
}
