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
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
)

// Command returns the replay command.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "republish a log over zenoh and iceoryx2 at the original pacing, into a controller under test",
		ArgsUsage: "FILE.vrlog [FILE.vrlog ...]",
		Description: `Publishes every data channel of the log on its original transport and name:
zenoh keys with the recorded encoding and attachment, iceoryx2 services with the
recorded type details and user header, so subscribers open them unchanged.
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

FAULTS (--inject, repeatable; reproducible with --seed):
   drop=P          drop each record with probability P
   outage=AT:FOR   publish nothing from AT for FOR (log time from the start)
   restart=AT      from AT on, seq restarts at 0 (decodable channels)
   jitter=SIGMA    add normal jitter (sigma) to each deadline, order kept per channel
   lag=D           delay frame channels by D relative to states

EXAMPLES:
   replay run.vrlog
   replay --rate 2 --loop 3 --channel 'vr/r1/**' run.vrlog
   replay --restamp --prefix test --inject drop=0.05 --seed 7 run.vrlog
   replay --start 10 --duration 5 --start-paused run.vrlog
   replay --rate max --quiet --json run.vrlog > timing.json

` + cliutil.ExitCodesHelp,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "channel", Aliases: []string{"c"}, Usage: "replay channels whose name or topic matches `NAME|GLOB` (* within a level, ** across); repeatable; default all data channels"},
			&cli.StringSliceFlag{Name: "remap", Usage: "publish topic or channel `FROM` as TO (FROM/** remaps a prefix); repeatable"},
			&cli.StringFlag{Name: "prefix", Usage: "prepend `P/` to every published key and service"},
			&cli.StringFlag{Name: "clock", Value: "receive", Usage: "pace by `receive` (recorder monotonic stamps) or capture (simulator t_ns)"},
			&cli.StringFlag{Name: "rate", Value: "1", Usage: "speed `FACTOR`, or max (as fast as the transports take it)"},
			&cli.IntFlag{Name: "loop", Value: 1, Usage: "play `N` times; 0 = forever"},
			&cli.StringFlag{Name: "start", Usage: "begin at `T`: seconds from the log start, or RFC 3339"},
			&cli.StringFlag{Name: "end", Usage: "stop before `T`: seconds from the log start, or RFC 3339"},
			&cli.StringFlag{Name: "duration", Usage: "play `D` of log time from --start"},
			&cli.StringFlag{Name: "delay", Usage: "wait `D` after creating the publishers, before the first record"},
			&cli.BoolFlag{Name: "start-paused", Usage: "start paused (space or → on a terminal)"},
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
			&cli.DurationFlag{Name: "spin", Usage: "fix the sleep-then-spin margin (default adaptive, 200µs..2ms)"},
		}, zenohflags.Flags()...),
		Action: run,
	}
}

// config is the parsed command line.
type config struct {
	files              []string
	clock              clockKind
	rate               float64
	rateMax            bool
	startSpec, endSpec string
	duration, delay    time.Duration
	faults             player.Faults
	injects            []string
	patterns           []*regexp.Regexp
	patternSrc         []string
	remap              *remapper
	tolerant, jsonOut  bool
	quiet              bool
}

func parse(c *cli.Context) (*config, error) {
	if c.NArg() == 0 {
		return nil, cliutil.Usage("no input: give one or more .vrlog files (see --help)")
	}
	cfg := &config{files: c.Args().Slice(), tolerant: c.Bool("tolerant"), jsonOut: c.Bool("json"), quiet: c.Bool("quiet"),
		startSpec: c.String("start"), endSpec: c.String("end")}
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
	if c.Int("loop") < 0 {
		return nil, cliutil.Usage("--loop %d: want N >= 0 (0 = forever)", c.Int("loop"))
	}
	var err error
	for _, f := range []struct {
		name string
		dst  *time.Duration
	}{{"duration", &cfg.duration}, {"delay", &cfg.delay}} {
		if s := c.String(f.name); s != "" {
			if *f.dst, err = player.ParseDuration(s); err != nil || *f.dst < 0 {
				return nil, cliutil.Usage("--%s %q: want seconds or a duration >= 0", f.name, s)
			}
		}
	}
	if cfg.duration > 0 && cfg.endSpec != "" {
		return nil, cliutil.Usage("--end and --duration: give one")
	}
	for _, s := range c.StringSlice("inject") {
		if err := cfg.faults.ParseInject(s); err != nil {
			return nil, cliutil.Usage("--inject: %v", err)
		}
		cfg.injects = append(cfg.injects, s)
	}
	for _, p := range c.StringSlice("channel") {
		re, err := glob(p)
		if err != nil {
			return nil, cliutil.Usage("--channel %q: %v", p, err)
		}
		cfg.patterns, cfg.patternSrc = append(cfg.patterns, re), append(cfg.patternSrc, p)
	}
	if cfg.remap, err = newRemapper(c.StringSlice("remap"), c.String("prefix")); err != nil {
		return nil, cliutil.Usage("%v", err)
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
	used := make([]bool, len(cfg.patterns))
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
		stats := map[uint16]logfmt.ChannelStats{}
		for _, st := range r.Stats() {
			stats[st.Channel] = st
		}
		for _, ch := range r.Channels() {
			if ch.Transport == logfmt.TransportInternal {
				continue
			}
			st := stats[ch.ID]
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
			if len(cfg.patterns) > 0 {
				hit := false
				for i, re := range cfg.patterns {
					if re.MatchString(ch.Name) || re.MatchString(ch.Topic) {
						hit, used[i] = true, true
					}
				}
				if !hit {
					continue
				}
			}
			topic := cfg.remap.apply(ch.Name, ch.Topic)
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
	for i, u := range used {
		if !u {
			s.close()
			return nil, cliutil.Usage("--channel %q matches no data channel", cfg.patternSrc[i])
		}
	}
	if len(s.outs) == 0 {
		s.close()
		return nil, cliutil.Usage("nothing to replay: no data channel selected")
	}
	if first && cfg.clock == clockCapture {
		s.close()
		return nil, cliutil.Input(errors.New("--clock capture: no channel carries capture stamps"))
	}
	var err error
	s.src.start = s.logStart
	if cfg.startSpec != "" {
		if s.src.start, err = s.at(cfg, cfg.startSpec); err != nil {
			s.close()
			return nil, cliutil.Usage("--start: %v", err)
		}
	}
	switch {
	case cfg.endSpec != "":
		if s.src.end, err = s.at(cfg, cfg.endSpec); err != nil {
			s.close()
			return nil, cliutil.Usage("--end: %v", err)
		}
		s.src.hasEnd = true
	case cfg.duration > 0:
		s.src.end, s.src.hasEnd = s.src.start+int64(cfg.duration), true
	}
	if s.src.hasEnd && s.src.end <= s.src.start {
		s.close()
		return nil, cliutil.Usage("the window is empty: end is not after start")
	}
	return s, nil
}

// at converts a --start/--end value into a key.
func (s *session) at(cfg *config, v string) (int64, error) {
	if ns, err := codec.ParseSeconds(v); err == nil {
		return s.logStart + ns, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		return s.logStart + int64(d), nil
	}
	ns, err := codec.ParseRFC3339(v)
	if err != nil {
		return 0, fmt.Errorf("%q: want seconds from the log start or an RFC 3339 time", v)
	}
	if cfg.clock == clockCapture {
		return ns, nil
	}
	return ns - s.wallOffset, nil
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

	span := s.logEnd - s.src.start
	if s.src.hasEnd {
		span = min(s.src.end, s.logEnd) - s.src.start
	}
	chans := make([]player.Channel, len(s.outs))
	for i, o := range s.outs {
		chans[i] = player.Channel{Name: o.Name, Schema: o.Schema, Frame: o.Frame}
	}
	opts := player.Options{Channels: chans, Rate: cfg.rate, RateMax: cfg.rateMax, Loops: c.Int("loop"),
		Delay: cfg.delay, StartPaused: c.Bool("start-paused"), Origin: s.src.start, Restamp: c.Bool("restamp"),
		Faults: cfg.faults, Seed: c.Uint64("seed"), MaxQueueBytes: c.Int("read-ahead-bytes"), ReadAhead: c.Duration("read-ahead")}
	if s.src.hasEnd {
		opts.Span = time.Duration(s.src.end - s.src.start)
	}
	if cfg.clock == clockCapture {
		opts.ReorderWindow = c.Duration("reorder-window")
	}
	if d := c.Duration("spin"); d > 0 {
		opts.SpinMin, opts.SpinMax = d, d
	}

	zc := zenohflags.Config(c)
	pubs, err := openPublishers(s.outs, transportOptions{zenoh: zc, express: !cfg.rateMax, warn: stderr})
	if err != nil {
		pubs.Close()
		return cliutil.Runtime(err)
	}
	p, err := player.New(s.src, pubs, opts)
	if err != nil {
		pubs.Close()
		return cliutil.Usage("%v", err)
	}

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ui := startUI(ctx, p, stderr, cfg.quiet, time.Duration(span))
	sum, perr := p.Run(ctx)
	quit := ui.stop()
	if perr == nil && !sum.Interrupted {
		time.Sleep(c.Duration("linger"))
	}
	cerr := pubs.Close()

	rep := buildReport(cfg, s, sum, opts)
	if cfg.jsonOut {
		err = writeJSON(stdout, rep)
	} else {
		err = writeText(stdout, rep)
	}
	if err != nil {
		return cliutil.Runtime(err)
	}
	warnSkipped(stderr, s)
	switch {
	case perr != nil:
		var ce *logfmt.CorruptionError
		if errors.As(perr, &ce) {
			return cliutil.Input(fmt.Errorf("%w (replayed up to the damage; --tolerant skips it)", perr))
		}
		return cliutil.Runtime(perr)
	case cerr != nil:
		return cliutil.Runtime(cerr)
	case sum.Interrupted && !quit:
		return cliutil.Runtime(errors.New("interrupted"))
	}
	return nil
}

func warnSkipped(w io.Writer, s *session) {
	for _, in := range s.inputs {
		if tt := in.r.TornTail(); tt != nil {
			fmt.Fprintf(w, "replay: warning: %v (truncated; replayed the intact part)\n", tt)
		}
		for _, ce := range in.r.SkippedChunks() {
			fmt.Fprintf(w, "replay: warning: skipped damaged chunk: %v\n", ce)
		}
		for _, ce := range in.r.Warnings() {
			fmt.Fprintf(w, "replay: warning: %v (read around it, no record lost)\n", ce)
		}
	}
}

// fmtDur prints a duration in seconds with a precision that fits.
func fmtSec(d time.Duration) string {
	return strings.TrimSuffix(strconv.FormatFloat(d.Seconds(), 'f', 1, 64), ".0") + " s"
}
