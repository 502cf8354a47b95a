// Package view defines `vrlog view`: logs or live streams served to
// Foxglove over its WebSocket protocol (package viewer).
package view

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/foxws"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/replayer"
	"github.com/vrlog/vrlog/viewer"
)

// Command is `vrlog view`.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "view",
		Usage:     "watch logs or live streams in Foxglove (Foxglove WebSocket server)",
		ArgsUsage: "[LOG...]",
		Description: `Serves one or several logs (merged as replay merges them) or, with --live,
the live zenoh and iceoryx2 streams, to Foxglove over the Foxglove WebSocket
protocol (subprotocols foxglove.sdk.v1 and foxglove.websocket.v1). In
Foxglove: Open connection, Foxglove WebSocket, ws://127.0.0.1:8765.

Channels look as in an MCAP export (the same encodings, docs/viewing.md):
frames as foxglove.RawImage (Image panel), each state as JSON (Raw Message,
Plot) and its pose as foxglove.PoseInFrame on "<channel>:pose" (3D panel),
the recorder's own channels as JSON.

A log plays on its own clock: the clients get each record at its receive
time (unix ns) and time messages on the same clock. Playback starts at the
log's start when a client first subscribes; Foxglove (foxglove.sdk.v1)
then steers it: play, pause, speed, seek anywhere in the log (answered from
the index).

It listens on 127.0.0.1 only unless --addr says otherwise: anyone who can
connect sees the data. Each client has its own bounded queue
(--client-queue): a client that falls behind loses frames first, then
states, counted and shown; nobody else waits, and a live view never slows
the transports (bounded subscriptions that drop, counted, when full). A
client that takes nothing for --write-timeout is disconnected. The status
line (stderr, every 10 s off a terminal) shows the clients, what each
subscribed to, bytes/s and drops per client.

EXAMPLES:
   vrlog view bug-1234.vrlog
   vrlog view part1.vrlog part2.vrlog --channel 'vr/r1/**' --start 20
   vrlog view --live --all
   vrlog view --live -k 'vr/r1/**' -s 'vr/r1/camera/*' --addr 0.0.0.0:8765

` + cliutil.ExitCodesHelp,
		Flags: append(zenohflags.Flags(),
			&cli.BoolFlag{Name: "live", Usage: "serve the live streams (-k, -s, --all) instead of logs"},
			&cli.StringSliceFlag{Name: "key", Aliases: []string{"k"}, Usage: "--live: zenoh key expression `PATTERN` to serve (repeatable)"},
			&cli.StringSliceFlag{Name: "service", Aliases: []string{"s"}, Usage: "--live: iceoryx2 pub-sub `SERVICE` name or pattern to serve (repeatable; a pattern also serves services that appear later)"},
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "--live: every zenoh key and every iceoryx2 pub-sub service, including new ones"},
			&cli.StringSliceFlag{Name: "channel", Aliases: []string{"c"}, Usage: "logs: serve the channels whose name or topic matches `PATTERN` (repeatable; default all)"},
			&cli.StringFlag{Name: "start", Usage: "logs: begin at `T`: seconds from the log start, or RFC 3339"},
			&cli.StringFlag{Name: "end", Usage: "logs: end before `T`"},
			&cli.StringFlag{Name: "duration", Usage: "logs: serve `D` of log time from --start"},
			&cli.Float64Flag{Name: "speed", Value: 1, Usage: "logs: playback speed `FACTOR` until a client changes it"},
			&cli.StringFlag{Name: "addr", Value: viewer.DefaultAddr, Usage: "listen on `HOST:PORT` (0.0.0.0 to let other machines connect)"},
			&cli.IntFlag{Name: "client-queue", Value: 128, Usage: "`MiB` of messages queued per client before its frames, then states, are dropped (128: 0.7 s of 1080p30 rgb8)"},
			&cli.IntFlag{Name: "max-clients", Value: 16, Usage: "clients served at once (`N`)"},
			&cli.DurationFlag{Name: "write-timeout", Value: 10 * time.Second, Usage: "disconnect a client that takes nothing for this long"},
			&cli.BoolFlag{Name: "no-poses", Usage: "leave out the '<channel>:pose' channels"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no status output"},
		),
		Action: run,
	}
}

func run(c *cli.Context) error {
	live := c.Bool("live")
	cfg := viewer.Config{Files: c.Args().Slice(), Addr: c.String("addr")}
	switch {
	case live && c.NArg() > 0:
		return cliutil.Usage("--live serves the live streams: no LOG argument (%q)", c.Args().First())
	case !live && c.NArg() == 0:
		return cliutil.Usage("give one or more logs to view, or --live with -k, -s or --all (see --help)")
	case !live && (len(c.StringSlice("key")) > 0 || len(c.StringSlice("service")) > 0 || c.Bool("all")):
		return cliutil.Usage("-k, -s and --all select live streams: add --live (and no LOG)")
	case live && (c.IsSet("channel") || c.IsSet("start") || c.IsSet("end") || c.IsSet("duration") || c.IsSet("speed")):
		return cliutil.Usage("--channel, --start, --end, --duration and --speed apply to logs, not to --live")
	}
	if sp := c.Float64("speed"); !(sp >= 0.01 && sp <= 1000) {
		return cliutil.Usage("--speed %v: want a factor from 0.01 to 1000", sp)
	}
	if q := c.Int("client-queue"); q < 1 || q > 1<<20 {
		return cliutil.Usage("--client-queue %d: want MiB from 1 to 1048576", q)
	}
	if n := c.Int("max-clients"); n < 1 || n > 1024 {
		return cliutil.Usage("--max-clients %d: want 1 to 1024", n)
	}
	if c.Duration("write-timeout") <= 0 {
		return cliutil.Usage("--write-timeout %s: want a duration > 0", c.Duration("write-timeout"))
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return cliutil.Usage("--addr %q: want HOST:PORT", cfg.Addr)
	}
	cfg.Speed = c.Float64("speed")
	cfg.Server = foxws.Options{QueueBytes: c.Int("client-queue") << 20, MaxClients: c.Int("max-clients"),
		WriteTimeout: c.Duration("write-timeout"), NoPoses: c.Bool("no-poses")}
	if live {
		zc, err := zenohflags.Config(c)
		if err != nil {
			return err
		}
		lv := &viewer.Live{ZenohKeys: c.StringSlice("key"), IceoryxServices: c.StringSlice("service"), All: c.Bool("all"), Zenoh: zc}
		if len(lv.ZenohKeys) == 0 && len(lv.IceoryxServices) == 0 && !lv.All {
			return cliutil.Usage("nothing to view live: give -k KEY, -s SERVICE or --all")
		}
		for _, f := range []struct {
			flag string
			pats []string
		}{{"-k", lv.ZenohKeys}, {"-s", lv.IceoryxServices}} {
			for _, p := range f.pats {
				if _, err := keyexpr.Parse(p); err != nil {
					return cliutil.Usage("%s: %v", f.flag, err)
				}
			}
		}
		cfg.Live = lv
	} else {
		var err error
		if cfg.Window, err = logfmt.ParseWindow(c.String("start"), c.String("end"), c.String("duration")); err != nil {
			return cliutil.WindowUsage(err)
		}
		if cfg.Channels, err = keyexpr.ParseSet(c.StringSlice("channel")); err != nil {
			return cliutil.Usage("--channel: %v", err)
		}
	}
	stderr := c.App.ErrWriter
	quiet := c.Bool("quiet")
	st := &statusLine{w: stderr, tty: cliutil.IsTerminal(stderr)}
	cfg.Warn = func(s string) { fmt.Fprintln(stderr, "view: "+s) }
	cfg.OnListen = func(addr string) {
		fmt.Fprintf(stderr, "view: serving on ws://%s (Foxglove: Open connection, Foxglove WebSocket)\n", addr)
	}
	if !quiet {
		cfg.OnStatus = st.show
		cfg.Server.OnClose = st.left
	}
	cliutil.Graceful(c) // SIGINT or SIGTERM closes the connections and ends it: exit 0
	err := viewer.Run(c.Context, cfg)
	if st.tty && !quiet {
		fmt.Fprintln(stderr) // below the status line
	}
	var ce *replayer.ConfigError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		field := map[string]string{"Files": "LOG", "Channels": "--channel", "Window": "--start/--end/--duration"}[ce.Field]
		return cliutil.Usage("%s: %v", field, ce.Err)
	case errors.Is(err, replayer.ErrInput):
		return cliutil.Input(err)
	}
	if live {
		return zenohflags.OpenError(err)
	}
	return cliutil.Runtime(err)
}

// statusLine prints the viewer's status: a line redrawn in place on a
// terminal, a line every 10 s otherwise.
type statusLine struct {
	mu        sync.Mutex // show (the status goroutine), left (a client's)
	w         io.Writer
	tty       bool
	last      time.Time
	prevBytes map[string]uint64
	prevAt    time.Time
}

func (s *statusLine) show(st viewer.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	line := s.line(st, now)
	if s.tty {
		fmt.Fprintf(s.w, "\r\x1b[2K%s", line)
		return
	}
	if now.Sub(s.last) >= 10*time.Second {
		s.last = now
		fmt.Fprintln(s.w, line)
	}
}

// left says a client left, with its totals and, if the server closed
// it, why.
func (s *statusLine) left(c foxws.ClientStats, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	why := "left"
	if reason != "" {
		why = "disconnected (" + reason + ")"
	}
	nl := ""
	if s.tty {
		nl = "\r\x1b[2K"
	}
	fmt.Fprintf(s.w, "%sview: client %s %s: sent %d messages (%s), dropped %d (%d frames)\n", nl, c.Addr, why,
		c.SentMessages, ui.Bytes(int64(c.SentBytes)), c.Dropped, c.DroppedFrames)
}

// line is "view: 2 clients, 4 subscriptions, 12.1 MiB/s; playing at 1x;
// 127.0.0.1:5123 (sdk) 3 subs 11.9 MiB/s dropped 14 (14 frames)".
func (s *statusLine) line(st viewer.Status, now time.Time) string {
	var b strings.Builder
	subs := 0
	var rate float64
	dt := now.Sub(s.prevAt).Seconds()
	per := make([]string, 0, len(st.Clients))
	bytes := map[string]uint64{}
	for _, c := range st.Clients {
		subs += len(c.Subscriptions)
		bytes[c.Addr] = c.SentBytes
		r := 0.0
		if p, ok := s.prevBytes[c.Addr]; ok && dt > 0 {
			r = float64(c.SentBytes-p) / dt
		}
		rate += r
		sp := "v1"
		if c.Subprotocol == foxws.SubprotocolSDK {
			sp = "sdk"
		}
		d := ""
		if c.Dropped > 0 {
			d = fmt.Sprintf(" dropped %d (%d frames)", c.Dropped, c.DroppedFrames)
		}
		per = append(per, fmt.Sprintf("%s (%s) %d subs %s%s", c.Addr, sp, len(c.Subscriptions), ui.Rate(r), d))
	}
	sort.Strings(per)
	s.prevBytes, s.prevAt = bytes, now
	fmt.Fprintf(&b, "view: %d clients, %d subscriptions, %s", len(st.Clients), subs, ui.Rate(rate))
	if p := st.Playback; p != nil {
		fmt.Fprintf(&b, "; %s at %gx", p.Status, p.Speed)
	}
	if st.TransportDrops > 0 {
		fmt.Fprintf(&b, "; %d samples dropped by the subscriptions", st.TransportDrops)
	}
	for _, p := range per {
		b.WriteString("; " + p)
	}
	return b.String()
}
