// Package record is the `record` command: capture zenoh and iceoryx2
// streams into a .vrlog log.
package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
	"github.com/vrlog/vrlog/recctl"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/schema"
	"github.com/vrlog/vrlog/transport/zenoh"
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
chunked, compressed (states LZ4, frames zstd-1), indexed log. Channels whose payload vrlog cannot
decode are recorded raw. The simulator's time service (vr/*/time) is probed
once a second and the clock-sync exchanges are stored in the log.

Crash safety: a record reaches the file within --flush-interval and the disk
within a second more (--sync interval); after kill -9 or power loss, 'vrlog
recover' restores everything but those last moments.
SIGINT or SIGTERM finishes the log cleanly (index and footer) and exits 0.
Finishing writes what was received before the end, for at most
--drain-timeout (default 5s; 0: no limit): a recorder that fell behind (a
backlog of frames) then drops what is still queued, counts it as recorder
drops in the log (so published - recorded = drops stays exact), says so on
stderr (also with --quiet), finishes the log and exits 0 as usual. Signals
within 1s of the first are the same request (GNU timeout signals vrlog and
then its process group); a SIGINT or SIGTERM later than that stops at once
(exit 3, the unfinished log left as it is, for 'vrlog recover').
A full disk stops the recording with exit 3, leaving a readable log.

Your own messages (docs/schemas.md): --schemas FILE (or --schema for one
channel) says per key or service pattern how a payload is encoded
(protobuf from a .proto or a FileDescriptorSet, JSON, ROS 2 CDR from .msg
definitions, a fixed C struct) and where its capture stamp and counter
are; the declaration is stored in the log, so analyze, replay --restamp,
export, cat and the Python reader need nothing else. A zenoh sample with a
timestamp (the publisher's session has timestamping on, or a router adds
it) gives an undeclared channel its capture stamps.

A recording that captured nothing is not a success: when no data arrived,
or a -k/-s pattern matched no recorded channel, record says so and exits 1
(the log is kept, complete). Patterns are zenoh key expressions (* one
level, ** any levels, $* inside a level; docs/cli.md), for -k, -s and
--compression alike; a malformed pattern or endpoint is exit 2.

Compression: iceoryx2 channels (frames) are stored zstd-1 by default, the
others LZ4 (zenoh states, and the recorder's own channels: heartbeat,
clock probes). States are a small share of a log's bytes and
are read back record by record (replay, export, cut, Python), which LZ4
decodes about three times as fast as zstd (2.4x smaller against zstd-1's
3.8x on 200-byte states). --compression lz4, zstd, zstd-2..4 or none sets
it per channel (plain zstd is zstd-1); a block that does not shrink is
stored raw. A --compression pattern that matches no recorded channel is a
warning, not an error: the recording holds what was asked, stored as the
default.

Status: a live table on a terminal, fitted to its width and height
(messages, Hz, MB/s, skips, restarts, recorder drops per channel, and the
zenoh router or peers the session is connected to); otherwise a plain line
every 10 s, and one as soon as the session loses its connection or zenoh
has reconnected it (it does so by itself; recording goes on). --quiet
prints none of them.

Across hosts (docs/deployment.md): --mode client --connect tcp/ROUTER:7447,
or --zenoh-config deploy/client.json5, records through a zenoh router.

Snapshot mode (--snapshot DURATION): capture the moment something went
wrong instead of everything. The last DURATION of every channel stays in
memory, in compressed chunks, within --snapshot-bytes (default 512M: the
chunks held, those being written out included; the process needs that plus
the recorder's own working set, some 300 MiB at 1080p30, and up to 512 MiB
while a snapshot is written: Go's heap is held to --snapshot-bytes + 512M),
and nothing is written until a trigger:
   SIGUSR1                          kill -USR1 PID
   a zenoh query                    vrlog snapshot NAME, or any zenoh get on
                                    vrlog/record/NAME/snapshot (NAME: --name,
                                    default the -o file's name); the reply is
                                    the file written
   --snapshot-on CHECK=[CHANNEL=]VALUE
                                    a sample that fails one of analyze's
                                    checks, watched live: max-skips,
                                    max-restarts, max-outage, max-lag (the
                                    same channels, patterns and wording)
Each trigger writes one log, OUT_TIME_CAUSE.vrlog (OUT the -o file without
.vrlog, TIME the trigger's, UTC), holding DURATION before the trigger and
--after after it, verified and renamed into place; its metadata says what
triggered it and when, and the recording's session epoch, so elapsed reads
as the controller's own (analyze shows it). A trigger while that window is
open extends it: one file. While a window is open it is written as it
comes to OUT_TIME_CAUSE.vrlog.partial (the part before the trigger at once),
and what is in that journal leaves memory: --snapshot-bytes bounds the part
before the trigger, and the --after part is held in full whatever the rate
while the disk keeps up (when it does not, the oldest part before the
trigger gives way first, then the after part is cut short, and the log says
so with the numbers); the first time the buffer fills, record says what it
holds at the current rate ("512 MiB holds about 2.6 s of the current 186
MB/s; a window of 30s before the trigger needs about 5.2 GiB in memory"), and again when that
changes by a tenth. A window closes once every stream still receiving has
what was captured up to its end (3 s at most past it: frames received late
are waited for). The snapshot is then
written from the journal. A --snapshot-on max-outage also fires when a stream
stops for good. kill -9 leaves the journal of an open window, which 'vrlog
recover' restores, and a snapshot being finished leaves its temporary name
(.OUT_TIME_CAUSE.vrlog.tmp-*) as well: keep the journal, delete the
temporary file; earlier snapshots are untouched. A --snapshot-on check that matches no recorded
channel is said once the channels are known, and fails the recording at its
end (exit 1).

A service that matches -s or --all but cannot be opened (e.g. its
max_subscribers are all taken) is never skipped in silence: it is printed on
stderr at once (also with --quiet), shown in the status, stored in the log as
a channel error ('vrlog info' and 'analyze' show it), and record exits 3 at the
end, after finishing the log with everything else. A service that allows a
smaller subscriber buffer than the recorder wants (iceoryx2's default allows
2) is recorded with that buffer, with a warning on stderr and in the log.

EXAMPLES:
   record -o session.vrlog -k 'vr/r1/state' -s vr/r1/camera/front \
       --duration 60s
   record -o bug-1234.vrlog --all --note "controller oscillates after 20 s"
   record -o ring.vrlog --all --split-duration 1m --max-files 10
   record -o s.vrlog -k 'vr/**' --compression 'vr/*/camera/*=none' \
       --compression 'vr/*/state=zstd-3'
   record -o bug.vrlog --all --snapshot 30s --after 5s \
       --snapshot-on max-restarts=0 \
       --snapshot-on 'max-outage=vr/*/state=200ms'

` + cliutil.ExitCodesHelp,
		Flags: append(append(zenohflags.Flags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "log `FILE` (.vrlog); with splitting, FILE_000.vrlog, FILE_001.vrlog, ..."},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "overwrite an existing log"},
			&cli.StringSliceFlag{Name: "key", Aliases: []string{"k"}, Usage: "zenoh key expression `PATTERN` to record (repeatable; * one level, ** any levels)"},
			&cli.StringSliceFlag{Name: "service", Aliases: []string{"s"}, Usage: "iceoryx2 pub-sub `SERVICE` name or pattern to record (repeatable; a pattern also records services that appear later)"},
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "record every zenoh key and every iceoryx2 pub-sub service, including new ones"},
			&cli.DurationFlag{Name: "duration", Aliases: []string{"d"}, Usage: "stop after recording this long, counted from when the transports are open (default: until SIGINT/SIGTERM)"},
			&cli.StringFlag{Name: "split-size", Usage: "start a new file after about `SIZE` bytes (e.g. 512M, 2G)"},
			&cli.StringFlag{Name: "queue-bytes", Value: "512M", Usage: "memory each subscription (each -k key expression, each iceoryx2 service) may hold of samples received and not yet written (`SIZE`, at least 64M); beyond it new samples are dropped and counted. Not in it: the log writer's chunks in flight and compressors (docs/BENCHMARKS.md \"record\": about 250–375 MB more at 1080p zstd-4)"},
			&cli.DurationFlag{Name: "split-duration", Usage: "start a new file when the next record would make this one span this long of receive time"},
			&cli.IntFlag{Name: "max-files", Usage: "with splitting, keep only the newest `N` files (a ring)"},
			&cli.StringFlag{Name: "schemas", Usage: "`FILE` of declarations of payloads vrlog did not define, one a line: PATTERN ENCODING key=value... (protobuf, json, ros2msg, cstruct; where the stamp and the counter are: docs/schemas.md); stored in the log"},
			&cli.StringSliceFlag{Name: "schema", Usage: "one declaration, as a line of --schemas: `'PATTERN ENCODING key=value...'` (repeatable; after the file's; the last that matches a channel wins)"},
			&cli.StringSliceFlag{Name: "compression", Usage: "`[CHANNEL=]none|lz4|zstd[-LEVEL]`, CHANNEL a key expression; last match wins (default: zstd-1 for iceoryx2 frames, lz4 for zenoh states)"},
			&cli.DurationFlag{Name: "flush-interval", Value: time.Second, Usage: "longest time a record stays in memory (what kill -9 can lose)"},
			&cli.DurationFlag{Name: "drain-timeout", Value: recorder.DefaultDrainTimeout, Usage: "at the end (--duration, SIGINT), write what is still queued for at most this long, then drop the rest, counted as recorder drops (0: no limit)"},
			&cli.StringFlag{Name: "sync", Value: "interval", Usage: "fdatasync policy: interval (every second: a power loss loses about a second), close (once, at the end: a power loss may lose up to 30 s), flush (every chunk) or none"},
			&cli.StringFlag{Name: "note", Usage: "`TEXT` stored in the log's metadata (e.g. the bug ticket)"},
			&cli.StringSliceFlag{Name: "time-service", Usage: "zenoh `SELECTOR` of clock-sync time services (default vr/*/time)"},
			&cli.DurationFlag{Name: "probe-interval", Value: time.Second, Usage: "clock-sync probe period (0 disables)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no status output"},
			&cli.DurationFlag{Name: "clock-offset", Hidden: true, Usage: "test only: the recorder's wall stamps run this far ahead of this host's clock (a second host on one machine)"},
		), append(append(controlFlags(), viewFlags()...), snapshotFlags()...)...),
		Action: run,
	}
}

func run(c *cli.Context) error {
	if c.NArg() > 0 {
		return cliutil.Usage("unexpected argument %q: name keys with -k and services with -s", c.Args().First())
	}
	if err := cliutil.NonNegative(c, "duration", "split-duration", "flush-interval", "probe-interval", "snapshot"); err != nil {
		return err
	}
	out := c.String("output")
	if out == "-" {
		return cliutil.Usage("record -o -: a recording cannot go to standard output as '-' (a live log takes a path); use -o /dev/stdout, written sequentially onto a pipe")
	}
	if out == "" {
		out = "vrlog-" + time.Now().UTC().Format("20060102T150405Z") + ".vrlog"
	}
	zc, err := zenohflags.Config(c)
	if err != nil {
		return err
	}
	cfg := recorder.Config{
		Output: out, Force: c.Bool("force"), ZenohKeys: c.StringSlice("key"), IceoryxServices: c.StringSlice("service"),
		All: c.Bool("all"), Zenoh: zc, SplitDuration: c.Duration("split-duration"), MaxFiles: c.Int("max-files"),
		FlushInterval: c.Duration("flush-interval"), DrainTimeout: c.Duration("drain-timeout"), Note: c.String("note"), TimeKeys: c.StringSlice("time-service"),
		ProbeInterval: c.Duration("probe-interval"), ClockOffset: c.Duration("clock-offset"), Idle: c.Bool("idle"),
	}
	if cfg.ProbeInterval == 0 {
		cfg.ProbeInterval = -1
	}
	switch {
	case cfg.DrainTimeout < 0:
		return cliutil.Usage("--drain-timeout %s: want a duration, 0 for no limit", cfg.DrainTimeout)
	case cfg.DrainTimeout == 0:
		cfg.DrainTimeout = -1 // no limit
	}
	if len(cfg.ZenohKeys) == 0 && len(cfg.IceoryxServices) == 0 && !cfg.All {
		return cliutil.Usage("nothing to record: give -k KEY, -s SERVICE or --all (see --help)")
	}
	for _, f := range []struct {
		flag string
		pats []string
	}{{"-k", cfg.ZenohKeys}, {"-s", cfg.IceoryxServices}, {"--time-service", cfg.TimeKeys}} {
		for _, p := range f.pats {
			if _, err := keyexpr.Parse(p); err != nil {
				return cliutil.Usage("%s: %v", f.flag, err)
			}
		}
	}
	q, err := parseSize(c.String("queue-bytes"))
	if err != nil || q < 64<<20 || q > 1<<40 {
		return cliutil.Usage("--queue-bytes %q: want a size from 64M to 1T", c.String("queue-bytes"))
	}
	cfg.QueueBytes = int(q)
	if s := c.String("split-size"); s != "" {
		if cfg.SplitSize, err = parseSize(s); err != nil {
			return cliutil.Usage("--split-size: %v", err)
		}
	}
	if cfg.MaxFiles < 0 {
		return cliutil.Usage("--max-files %d: want N >= 0", cfg.MaxFiles)
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
	if c.IsSet("sync") && outfile.InPlace(out) {
		// A device, FIFO or socket is written in place and sequentially:
		// there is nothing to fdatasync.
		fmt.Fprintf(c.App.ErrWriter, "record: %s is not a regular file: --sync %s does not apply (written in place, not synced)\n", out, c.String("sync"))
	}
	for _, s := range c.StringSlice("compression") {
		cc, err := parseCompression(s)
		if err != nil {
			return cliutil.Usage("--compression: %v", err)
		}
		cfg.Compression = append(cfg.Compression, cc)
	}
	if err := snapshotConfig(c, &cfg); err != nil {
		return err
	}
	if cfg.Schemas, err = parseSchemas(c); err != nil {
		return err
	}
	name, err := controlName(c, &cfg)
	if err != nil {
		return err
	}

	// Frames arrive as fresh allocations at hundreds of MB/s: a soft memory
	// limit makes the GC keep up instead of letting the heap double.
	if os.Getenv("GOMEMLIMIT") == "" {
		limit := int64(512 << 20)
		if cfg.Snapshot != nil {
			// The buffer is live data, on top of the recording's own.
			limit = cfg.Snapshot.MaxBytes + 512<<20
		}
		debug.SetMemoryLimit(limit)
	}
	cliutil.Graceful(c) // SIGINT or SIGTERM finishes the log
	ctx := c.Context
	cfg.Duration = c.Duration("duration") // counted from when the transports are open

	var mu sync.Mutex // status and snapshot lines come from two goroutines
	errw := lockedWriter{&mu, c.App.ErrWriter}
	quiet := c.Bool("quiet")
	if cfg.Snapshot != nil {
		snapshotReports(c, &cfg, name, errw)
	}
	mountControl(c, &cfg, name, errw)
	stopView, err := startView(c, &cfg, errw)
	if err != nil {
		return err
	}
	defer stopView()
	cfg.OnProblem = func(p recorder.ChannelStatus) {
		if p.Error != "" {
			fmt.Fprintf(errw, "record: ERROR: %s %s is not recorded: %s\n", p.Transport, p.Name, p.Error)
		} else {
			fmt.Fprintf(errw, "record: warning: %s %s: %s\n", p.Transport, p.Name, p.Warning)
		}
	}
	st := newStatus(c.App.ErrWriter)
	if !quiet {
		cfg.OnStatus = func(s recorder.Status) { mu.Lock(); defer mu.Unlock(); st.show(s) }
		switch {
		case cfg.Idle: // once its control plane is up: a name taken is said, not armed
			cfg.OnStart = func() {
				fmt.Fprintf(errw, "record: armed, writing nothing until 'vrlog rec start %s' (Ctrl-C to stop)\n", name)
			}
		case cfg.Snapshot == nil:
			cfg.OnOpen = func() { fmt.Fprintf(errw, "record: writing %s (Ctrl-C to stop)\n", out) }
		}
	}
	sum, err := record(ctx, cfg)
	if sum != nil && !quiet {
		st.final(*sum)
		verb := "wrote"
		if err != nil {
			verb = "left" // what is there up to the failure, which the error below says
		}
		if err != nil && !regular(out) {
			verb = "stopped writing" // a device, FIFO or socket: nothing is left to check
		}
		for _, f := range sum.Files {
			fmt.Fprintf(errw, "record: %s %s\n", verb, f)
		}
	}
	if sum != nil && sum.DrainDrops > 0 {
		fmt.Fprintf(errw, "record: WARNING: --drain-timeout %s reached with %d records still queued (the writer was slower than the stream): dropped, and counted as recorder drops in the log\n",
			cfg.DrainTimeout, sum.DrainDrops)
	}
	switch {
	case err == nil && sum != nil && len(sum.Failed()) > 0:
		var names []string
		for _, f := range sum.Failed() {
			names = append(names, f.Name)
		}
		return cliutil.Runtime(fmt.Errorf("not recorded, could not be opened (see above; stored in the log as channel errors): %s",
			strings.Join(names, ", ")))
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return cliutil.Output(err)
	case errors.Is(err, zenoh.ErrInvalid), errors.Is(err, recctl.ErrNameTaken):
		return cliutil.Usage("%v", err)
	case cfg.Snapshot != nil && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EFBIG) || errors.Is(err, syscall.EDQUOT)):
		return cliutil.Runtime(fmt.Errorf("disk full: %w; that snapshot was not written (nothing half-written is left), the others are complete", err))
	case (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EFBIG) || errors.Is(err, syscall.EDQUOT)) && !regular(out):
		return cliutil.Runtime(fmt.Errorf("%w: the stream ended early, without the log's footer (a reader of it has an incomplete log)", err))
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EFBIG), errors.Is(err, syscall.EDQUOT):
		return cliutil.Runtime(fmt.Errorf("disk full: %w; the log holds everything up to the last complete chunk (check with 'vrlog verify', repair with 'vrlog recover')", err))
	default:
		return cliutil.Runtime(err)
	}
	for _, p := range recorder.UnusedCompression(cfg, sum) {
		fmt.Fprintf(errw, "record: warning: --compression %q matched no recorded channel\n", p)
	}
	if cfg.Idle && len(sum.Files) == 0 {
		fmt.Fprintf(errw, "record: never started (idle until the end): nothing written\n")
		return nil
	}
	if err := captureCheck(cfg, sum); err != nil {
		return err
	}
	if cfg.Snapshot != nil {
		return snapshotCheck(sum, errw)
	}
	return nil
}

// record runs the recorder until ctx ends; in snapshot mode SIGUSR1
// takes a snapshot meanwhile.
func record(ctx context.Context, cfg recorder.Config) (*recorder.Summary, error) {
	r, err := recorder.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Snapshot != nil {
		onSIGUSR1(r)
	}
	return r.Wait()
}

// captureCheck fails a recording that captured nothing, or nothing on one
// of its -k/-s patterns (exit 1): a CI job must not take an empty log for
// a recorded session. The log is kept, complete.
func captureCheck(cfg recorder.Config, sum *recorder.Summary) error {
	missed := recorder.Missed(cfg, sum)
	if len(missed) == 0 {
		return nil
	}
	if missed[0] == "nothing" {
		what := []string{}
		for _, k := range cfg.ZenohKeys {
			what = append(what, "-k "+k)
		}
		for _, s := range cfg.IceoryxServices {
			what = append(what, "-s "+s)
		}
		if cfg.All {
			what = append(what, "--all")
		}
		where := ""
		if eps := append(append([]string{}, cfg.Zenoh.Connect...), cfg.Zenoh.Listen...); len(eps) > 0 {
			where = " (zenoh endpoints " + strings.Join(eps, ", ") + ")"
		}
		return cliutil.CheckFailed(fmt.Errorf("captured nothing in %s of recording on %s%s: no publisher reached the recorder; the log %s holds no data (check the keys, the services and the endpoints)",
			sum.Elapsed.Round(100*time.Millisecond), strings.Join(what, " "), where, strings.Join(sum.Files, ", ")))
	}
	return cliutil.CheckFailed(fmt.Errorf("%s captured nothing (recorded: %s); the log is kept", strings.Join(missed, ", "), strings.Join(recorder.Recorded(sum), ", ")))
}

// lockedWriter serializes the lines of several goroutines.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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

// parseCompression reads [CHANNEL=]none|lz4|zstd|zstd-LEVEL, CHANNEL a
// key expression.
func parseCompression(s string) (recorder.ChannelCompression, error) {
	pat, val := "", s
	if i := strings.LastIndexByte(s, '='); i >= 0 {
		pat, val = s[:i], s[i+1:]
		if _, err := keyexpr.Parse(pat); err != nil {
			return recorder.ChannelCompression{}, err
		}
	}
	c := recorder.ChannelCompression{Pattern: pat}
	switch {
	case val == "none":
		c.Compression = logfmt.Compression{Kind: logfmt.CompressionNone}
	case val == "lz4":
		c.Compression = logfmt.Compression{Kind: logfmt.CompressionLZ4}
	case val == "zstd":
		c.Compression = logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}
	case strings.HasPrefix(val, "zstd-"):
		l, err := strconv.Atoi(val[5:])
		if err != nil || l < 1 || l > 4 {
			return c, fmt.Errorf("%q: zstd levels are 1 (fastest) to 4 (best)", s)
		}
		c.Compression = logfmt.Compression{Kind: logfmt.CompressionZstd, Level: l}
	default:
		return c, fmt.Errorf("%q: want none, lz4, zstd or zstd-1..4", s)
	}
	return c, nil
}

// regular reports whether the recording's output is a regular file (links
// followed): a device, FIFO or socket holds no log to verify or recover.
func regular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// parseSchemas reads --schemas and --schema: a declaration that does not
// parse, or names a field its schema lacks, is a usage error naming the
// line (or the flag) and the field.
func parseSchemas(c *cli.Context) (schema.Set, error) {
	var set schema.Set
	if f := c.String("schemas"); f != "" {
		s, err := schema.ParseFile(f)
		if err != nil {
			return nil, cliutil.Usage("--schemas: %v", err)
		}
		set = s
	}
	for _, line := range c.StringSlice("schema") {
		d, err := schema.Parse(line, ".", "--schema")
		if err != nil {
			return nil, cliutil.Usage("%v", err)
		}
		set = append(set, d)
	}
	return set, nil
}
