// Package record is the `record` command: capture zenoh and iceoryx2
// streams into a .vrlog log.
package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder"
)

// Command returns the record command.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "record zenoh key expressions and iceoryx2 services into a .vrlog log",
		ArgsUsage: " ",
		Description: `Subscribes to zenoh key expressions (-k, wildcards allowed) and iceoryx2
publish-subscribe services (-s), or to everything with --all (every zenoh key,
and every iceoryx2 service, also those that appear later), and writes every
sample's raw bytes with the recorder's receive stamps (wall and monotonic) and,
where the codec decodes them, the simulator's capture t_ns and seq, into a
chunked, zstd-compressed, indexed log. Channels whose payload vrlog cannot
decode are recorded raw. The simulator's time service (vr/*/time) is probed
once a second and the clock-sync exchanges are stored in the log.

Crash safety: a record reaches the file within --flush-interval and the disk
within a second more (--sync interval); after kill -9 or power loss, 'vrlog
recover' restores everything but those last moments.
SIGINT or SIGTERM finishes the log cleanly (index and footer) and exits 0.
A full disk stops the recording with exit 3, leaving a readable log.

Status: a live table on a terminal (messages, Hz, MB/s, skips, restarts,
recorder drops per channel); a plain line every 10 s otherwise; --quiet for none.

EXAMPLES:
   record -o session.vrlog -k 'vr/r1/state' -s vr/r1/camera/front --duration 60s
   record -o bug-1234.vrlog --all --note "controller oscillates after 20 s"
   record -o ring.vrlog --all --split-duration 1m --max-files 10
   record -o s.vrlog -k 'vr/**' --compression 'vr/*/camera/*=none' --compression 'vr/*/state=zstd-3'

` + cliutil.ExitCodesHelp,
		Flags: append(zenohflags.Flags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "log `FILE` (.vrlog); with splitting, FILE_000.vrlog, FILE_001.vrlog, ..."},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "overwrite an existing log"},
			&cli.StringSliceFlag{Name: "key", Aliases: []string{"k"}, Usage: "zenoh key `EXPR` to record (repeatable; wildcards * and ** allowed)"},
			&cli.StringSliceFlag{Name: "service", Aliases: []string{"s"}, Usage: "iceoryx2 pub-sub `SERVICE` to record (repeatable; * and ** patterns also record services that appear later)"},
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "record every zenoh key and every iceoryx2 pub-sub service, including new ones"},
			&cli.DurationFlag{Name: "duration", Aliases: []string{"d"}, Usage: "stop after this long (default: until SIGINT/SIGTERM)"},
			&cli.StringFlag{Name: "split-size", Usage: "start a new file after about `SIZE` bytes (e.g. 512M, 2G)"},
			&cli.DurationFlag{Name: "split-duration", Usage: "start a new file after this long"},
			&cli.IntFlag{Name: "max-files", Usage: "with splitting, keep only the newest `N` files (a ring)"},
			&cli.StringSliceFlag{Name: "compression", Usage: "`[CHANNEL=]none|zstd[-LEVEL]` per channel glob, last match wins (default zstd-1)"},
			&cli.DurationFlag{Name: "flush-interval", Value: time.Second, Usage: "longest time a record stays in memory (what kill -9 can lose)"},
			&cli.StringFlag{Name: "sync", Value: "interval", Usage: "fdatasync policy: interval (every second: a power loss loses about a second), close (once, at the end: a power loss may lose up to 30 s), flush (every chunk) or none"},
			&cli.StringFlag{Name: "note", Usage: "`TEXT` stored in the log's metadata (e.g. the bug ticket)"},
			&cli.StringSliceFlag{Name: "time-service", Usage: "zenoh `SELECTOR` of clock-sync time services (default vr/*/time)"},
			&cli.DurationFlag{Name: "probe-interval", Value: time.Second, Usage: "clock-sync probe period (0 disables)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no status output"},
		),
		Action: run,
	}
}

func run(c *cli.Context) error {
	if c.NArg() > 0 {
		return cliutil.Usage("unexpected argument %q: name keys with -k and services with -s", c.Args().First())
	}
	out := c.String("output")
	if out == "" {
		out = "vrlog-" + time.Now().UTC().Format("20060102T150405Z") + ".vrlog"
	}
	cfg := recorder.Config{
		Output: out, Force: c.Bool("force"), ZenohKeys: c.StringSlice("key"), IceoryxServices: c.StringSlice("service"),
		All: c.Bool("all"), Zenoh: zenohflags.Config(c), SplitDuration: c.Duration("split-duration"), MaxFiles: c.Int("max-files"),
		FlushInterval: c.Duration("flush-interval"), Note: c.String("note"), TimeKeys: c.StringSlice("time-service"),
		ProbeInterval: c.Duration("probe-interval"),
	}
	if cfg.ProbeInterval == 0 {
		cfg.ProbeInterval = -1
	}
	if len(cfg.ZenohKeys) == 0 && len(cfg.IceoryxServices) == 0 && !cfg.All {
		return cliutil.Usage("nothing to record: give -k KEY, -s SERVICE or --all (see --help)")
	}
	var err error
	if s := c.String("split-size"); s != "" {
		if cfg.SplitSize, err = parseSize(s); err != nil {
			return cliutil.Usage("--split-size: %v", err)
		}
	}
	if cfg.MaxFiles > 0 && cfg.SplitSize == 0 && cfg.SplitDuration == 0 {
		return cliutil.Usage("--max-files needs --split-size or --split-duration")
	}
	switch c.String("sync") {
	case "close":
		cfg.Sync = logfmt.SyncOnClose
	case "none":
		cfg.Sync = logfmt.SyncNone
	case "flush":
		cfg.Sync = logfmt.SyncOnFlush
	case "interval":
		cfg.Sync = logfmt.SyncInterval
	default:
		return cliutil.Usage("--sync %q: want close, flush, interval or none", c.String("sync"))
	}
	for _, s := range c.StringSlice("compression") {
		cc, err := parseCompression(s)
		if err != nil {
			return cliutil.Usage("--compression: %v", err)
		}
		cfg.Compression = append(cfg.Compression, cc)
	}

	// Frames arrive as fresh allocations at hundreds of MB/s: a soft memory
	// limit makes the GC keep up instead of letting the heap double.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(512 << 20)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	signal.Ignore(syscall.SIGXFSZ) // a file size limit surfaces as EFBIG, handled like a full disk
	if d := c.Duration("duration"); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	errw := c.App.ErrWriter
	if errw == nil {
		errw = os.Stderr
	}
	quiet := c.Bool("quiet")
	tty := cliutil.IsTerminal(errw)
	var lastPlain time.Time
	var lines int
	if !quiet {
		cfg.OnStatus = func(s recorder.Status) {
			if tty {
				lines = drawTable(errw, s, lines)
			} else if time.Since(lastPlain) >= 10*time.Second {
				lastPlain = time.Now()
				fmt.Fprintln(errw, plainLine(s))
			}
		}
		fmt.Fprintf(errw, "record: writing %s (Ctrl-C to stop)\n", out)
	}
	sum, err := recorder.Run(ctx, cfg)
	if sum != nil && !quiet {
		if tty {
			lines = drawTable(errw, *sum, lines)
		}
		fmt.Fprintf(errw, "record: %s\n", plainLine(*sum))
		for _, f := range sum.Files {
			fmt.Fprintf(errw, "record: wrote %s\n", f)
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, logfmt.ErrExists):
		return cliutil.Usage("%v", err)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EFBIG), errors.Is(err, syscall.EDQUOT):
		return cliutil.Runtime(fmt.Errorf("disk full: %w; the log holds everything up to the last complete chunk (check with 'vrlog verify', repair with 'vrlog recover')", err))
	}
	return cliutil.Runtime(err)
}

func plainLine(s recorder.Status) string {
	var msgs, drops, skipped uint64
	for _, c := range s.Channels {
		msgs, drops, skipped = msgs+c.Msgs, drops+c.Drops, skipped+c.Skipped
	}
	return fmt.Sprintf("%s: %d channels, %d messages, %s written, %d missing by seq, %d dropped by the recorder",
		s.Elapsed.Round(time.Second), len(s.Channels), msgs, human(s.BytesWritten), skipped, drops)
}

// drawTable redraws the live status table in place on a terminal.
func drawTable(w io.Writer, s recorder.Status, prev int) int {
	var b strings.Builder
	if prev > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", prev)
	}
	chans := append([]recorder.ChannelStatus(nil), s.Channels...)
	sort.Slice(chans, func(i, j int) bool { return chans[i].Name < chans[j].Name })
	fmt.Fprintf(&b, "\x1b[2K%-36s %10s %8s %8s %8s %8s %8s %6s\n", "channel", "msgs", "Hz", "MB/s", "skipped", "restarts", "drops", "undec")
	for _, c := range chans {
		fmt.Fprintf(&b, "\x1b[2K%-36s %10d %8.1f %8.2f %8d %8d %8d %6d\n", trim(c.Name, 36), c.Msgs, c.Hz, c.MBps, c.Skipped, c.Restarts, c.Drops, c.Undecodable)
	}
	ratio := ""
	if s.BytesWritten > 0 {
		var raw uint64
		for _, c := range s.Channels {
			raw += c.Bytes
		}
		ratio = fmt.Sprintf(", compression %.2fx", float64(raw)/float64(s.BytesWritten))
	}
	fmt.Fprintf(&b, "\x1b[2K%s elapsed, %s written%s\n", s.Elapsed.Round(time.Second), human(s.BytesWritten), ratio)
	io.WriteString(w, b.String())
	return len(chans) + 2
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n+1:]
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// parseSize reads 1048576, 512K, 64M, 2G (powers of 1024).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	t := strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(s, "B"), "i"))
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1<<10, t[:len(t)-1]
	case strings.HasSuffix(t, "M"):
		mult, t = 1<<20, t[:len(t)-1]
	case strings.HasSuffix(t, "G"):
		mult, t = 1<<30, t[:len(t)-1]
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q: want a size such as 512M or 2G", s)
	}
	return v * mult, nil
}

// parseCompression reads [GLOB=]none|zstd|zstd-LEVEL.
func parseCompression(s string) (recorder.ChannelCompression, error) {
	glob, val := "", s
	if i := strings.LastIndexByte(s, '='); i >= 0 {
		glob, val = s[:i], s[i+1:]
	}
	c := recorder.ChannelCompression{Glob: glob}
	switch {
	case val == "none":
		c.Compression = logfmt.Compression{Kind: logfmt.CompressionNone}
	case val == "zstd":
		c.Compression = logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}
	case strings.HasPrefix(val, "zstd-"):
		l, err := strconv.Atoi(val[5:])
		if err != nil || l < 1 || l > 4 {
			return c, fmt.Errorf("%q: zstd levels are 1 (fastest) to 4 (best)", s)
		}
		c.Compression = logfmt.Compression{Kind: logfmt.CompressionZstd, Level: l}
	default:
		return c, fmt.Errorf("%q: want none, zstd or zstd-1..4", s)
	}
	return c, nil
}
