// Package controller is the `controller` command: the bundled example
// controller under test (package internal/controller), for replay's
// test-fixture examples and tests.
package controller

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/controller"
	"github.com/vrlog/vrlog/internal/zenohflags"
)

// Command returns the controller command.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "controller",
		Usage: "run the bundled example controller: a PD loop on a robot's state, one command per state it processes",
		Description: `Subscribes to vrsdk.State/1 samples on --state and publishes, for each
state it processes, a 56-byte command on --command (layout in
docs/replay.md, "The example controller": its seq, the seq and t_ns of the
state it answers, a force) computed by a PD law on the position toward
--target, smoothed with the previous command. --delay adds a processing
time before each command: analyze of a replay --capture log reports it as
the reaction latency.

Deterministic: each command depends only on the states processed before
it. Like a real-time controller it processes the newest state it has; a
state that arrives while it is busy is superseded (counted) and gets no
command, so an open-loop replay faster than it makes the answered states
depend on the load, and a lockstep replay (--lockstep on --command) makes
it answer every state, the same way every run.

Runs until SIGINT or SIGTERM (or --duration), then prints what it did.

EXAMPLES:
   vrlog controller --state vr/r1/state --command vr/r1/cmd --delay 5ms
   vrlog controller --delay 20ms --target 1,0,0.5 \
       --connect tcp/127.0.0.1:7447

` + cliutil.ExitCodesHelp,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "state", Value: "vr/r1/state", Usage: "the state `KEY` to subscribe to"},
			&cli.StringFlag{Name: "command", Value: "vr/r1/cmd", Usage: "the `KEY` to publish commands on"},
			&cli.DurationFlag{Name: "delay", Usage: "processing time added before each command"},
			&cli.StringFlag{Name: "target", Value: "0,0,0", Usage: "the position to steer to, `X,Y,Z` in metres"},
			&cli.Float64Flag{Name: "kp", Value: 2, Usage: "proportional gain"},
			&cli.Float64Flag{Name: "kd", Value: 0.5, Usage: "derivative gain (on the state's velocity)"},
			&cli.Float64Flag{Name: "smooth", Value: 0.5, Usage: "weight of the previous command in each command, [0, 1)"},
			&cli.DurationFlag{Name: "duration", Usage: "stop after this long (0: until SIGINT/SIGTERM)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no start and end lines"},
		}, zenohflags.Flags()...),
		Action: run,
	}
}

func run(c *cli.Context) error {
	cfg := controller.Config{StateKey: c.String("state"), CommandKey: c.String("command"), Kp: c.Float64("kp"), Kd: c.Float64("kd"),
		Smooth: c.Float64("smooth"), Delay: c.Duration("delay")}
	var err error
	if cfg.Target, err = parseVec(c.String("target")); err != nil {
		return cliutil.Usage("--target: %v", err)
	}
	for _, g := range []string{"kp", "kd"} { // a NaN or Inf gain makes every command NaN
		if _, err := cliutil.Float(c, g, "a finite gain", func(float64) bool { return true }); err != nil {
			return err
		}
	}
	if !(cfg.Smooth >= 0 && cfg.Smooth < 1) || cfg.Delay < 0 || c.Duration("duration") < 0 {
		return cliutil.Usage("--smooth must be in [0, 1), --delay and --duration >= 0")
	}
	sess, err := zenohflags.Open(c)
	if err != nil {
		return err
	}
	defer sess.Close()
	cliutil.Graceful(c) // SIGINT or SIGTERM ends it with its summary
	ctx := c.Context
	if d := c.Duration("duration"); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	quiet := c.Bool("quiet")
	if !quiet {
		fmt.Fprintf(c.App.ErrWriter, "controller: states on %s, commands on %s, delay %v\n", cfg.StateKey, cfg.CommandKey, cfg.Delay)
	}
	st, err := controller.Run(ctx, sess, cfg)
	if !quiet {
		fmt.Fprintf(c.App.ErrWriter, "controller: %d states, %d commands, %d superseded, %d undecodable\n",
			st.States, st.Commands, st.Superseded, st.Undecodable)
	}
	return cliutil.Runtime(err)
}

func parseVec(s string) (codec.Vec3, error) {
	f := strings.Split(s, ",")
	if len(f) != 3 {
		return codec.Vec3{}, fmt.Errorf("%q: want X,Y,Z", s)
	}
	var v [3]float64
	for i, x := range f {
		var err error
		if v[i], err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil || math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
			return codec.Vec3{}, fmt.Errorf("%q: want X,Y,Z, finite numbers", s)
		}
	}
	return codec.Vec3{X: v[0], Y: v[1], Z: v[2]}, nil
}
