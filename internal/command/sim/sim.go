// Package sim is the `sim` command (`vrlog sim`, `sim`): the bundled
// simulator of package simulator, configured from flags; --log writes what
// it published, the ground truth for tests.
package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/simulator"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/outfile"
	"github.com/vrlog/vrlog/transport/iceoryx2"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Command returns the sim command.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "sim",
		Usage: "run the bundled simulator: states over zenoh, camera frames over iceoryx2, with optional faults",
		Description: `Publishes vrsdk.State/1 samples on zenoh key vr/ROBOT/state and vrsdk.Frame/1
frames on iceoryx2 service vr/ROBOT/camera/NAME (frame header as user header,
pixels as payload), each stamped with the simulator's capture t_ns (the
time of its simulation step, a fixed period apart) and a per-topic seq, and
answers clock-sync queries on vr/ROBOT/time.

Faults (all optional, reproducible with --seed):
   --drop-every N       never publish every Nth sample of each stream (seq gaps)
   --drop-random P      never publish a sample with probability P
   --restart-after T    stop all publishers after T, stay away --outage D, then
                        come back with seq from 0 (a publisher restart)
   --pause AT:FOR       stall publishing AT after the first sample, for FOR (seq
                        continues: an outage without skips)
   --jitter SIGMA       Gaussian jitter of the capture instants
   --clock-offset D     the simulator's clock runs D ahead of this host's
   --frame-lag D        frames carry capture stamps D older than their tick

EXAMPLES:
   sim --duration 10s
   sim --listen tcp/127.0.0.1:7447 --no-multicast --drop-every 50 \
       --restart-after 5s --outage 3s --log truth.jsonl
   sim --width 1920 --height 1080 --frame-hz 240 --frame-ring 8 \
       --frame-content gradient

` + cliutil.ExitCodesHelp,
		Flags: append(zenohflags.Flags(),
			&cli.StringFlag{Name: "robot", Value: "r1", Usage: "robot `NAME` in keys and services"},
			&cli.StringSliceFlag{Name: "camera", Value: cli.NewStringSlice("front"), Usage: "camera `NAME` (repeatable; none with --camera '')"},
			&cli.Float64Flag{Name: "state-hz", Value: 25, Usage: "state rate"},
			&cli.Float64Flag{Name: "frame-hz", Value: 30, Usage: "frame rate per camera"},
			&cli.UintFlag{Name: "width", Value: 640, Usage: "frame width in pixels"},
			&cli.UintFlag{Name: "height", Value: 480, Usage: "frame height in pixels"},
			&cli.StringFlag{Name: "pixel-encoding", Value: "rgb8", Usage: "rgb8, bgr8, rgba8, bgra8, mono8 or mono16"},
			&cli.StringFlag{Name: "frame-content", Value: "noise", Usage: "what frames show: noise (a moving gradient with noise in every byte: barely compressible) or gradient (smooth, mild noise: ~1.15x smaller at the recorder's zstd-1, about half the size at zstd's high levels)"},
			&cli.IntFlag{Name: "frame-ring", Usage: "render `N` frames up front and publish them in turn (a frame then costs one copy, not a paint: for driving a recorder past the painting rate); 0 paints every frame"},
			&cli.IntFlag{Name: "sensors", Value: 4, Usage: "sensor entries per state (4 makes 200-byte states)"},
			&cli.DurationFlag{Name: "duration", Usage: "stop this long after starting, --start-delay included (0: until SIGINT/SIGTERM)"},
			&cli.DurationFlag{Name: "start-delay", Value: time.Second, Usage: "wait this long after declaring publishers before the first sample (lets subscribers connect)"},
			&cli.IntFlag{Name: "drop-every", Usage: "skip publishing every `N`th sample"},
			&cli.Float64Flag{Name: "drop-random", Usage: "skip publishing with probability `P`"},
			&cli.DurationFlag{Name: "restart-after", Usage: "restart the publishers after `T`"},
			&cli.DurationFlag{Name: "outage", Value: 2 * time.Second, Usage: "how long a restart keeps the publishers away"},
			&cli.StringFlag{Name: "pause", Usage: "stall publishing `AT:FOR` (AT after the first sample), e.g. 3s:500ms"},
			&cli.DurationFlag{Name: "jitter", Usage: "Gaussian jitter `SIGMA` of capture instants"},
			&cli.DurationFlag{Name: "clock-offset", Usage: "simulator clock minus this host's clock"},
			&cli.DurationFlag{Name: "frame-lag", Usage: "frames' capture stamps are this much older than their tick"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed for --drop-random and --jitter"},
			&cli.StringFlag{Name: "log", Usage: "write every published sample (channel, seq, t_ns, sha256) as JSON lines to `FILE` (a device or FIFO is written in place)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing --log file"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no periodic status lines"},
		),
		Action: run,
	}
}

func run(c *cli.Context) error {
	cfg := simulator.Config{
		Robot: c.String("robot"), StateHz: c.Float64("state-hz"), FrameHz: c.Float64("frame-hz"),
		Width: uint32(c.Uint("width")), Height: uint32(c.Uint("height")), Sensors: c.Int("sensors"),
		DropEvery: c.Int("drop-every"), DropRandom: c.Float64("drop-random"), RestartAfter: c.Duration("restart-after"),
		Outage: c.Duration("outage"), Jitter: c.Duration("jitter"), ClockOffset: c.Duration("clock-offset"),
		FrameLag: c.Duration("frame-lag"), Seed: c.Uint64("seed"), StartDelay: c.Duration("start-delay"),
	}
	for _, cam := range c.StringSlice("camera") {
		if cam != "" {
			cfg.Cameras = append(cfg.Cameras, cam)
		}
	}
	var err error
	if cfg.Encoding, err = codec.ParsePixelEncoding(c.String("pixel-encoding")); err != nil {
		return cliutil.Usage("--pixel-encoding: %v", err)
	}
	if cfg.FrameContent, err = simulator.ParseFrameContent(c.String("frame-content")); err != nil {
		return cliutil.Usage("--frame-content: %v", err)
	}
	if cfg.FrameRing = c.Int("frame-ring"); cfg.FrameRing < 0 || cfg.FrameRing > 1024 {
		return cliutil.Usage("--frame-ring %d: want 0..1024", cfg.FrameRing)
	}
	if err := checkNumbers(c); err != nil {
		return err
	}
	if cfg.StateHz <= 0 || cfg.FrameHz <= 0 || cfg.Sensors < 0 || cfg.Sensors > codec.MaxSensors {
		return cliutil.Usage("rates must be positive and --sensors within 0..65535")
	}
	if p := c.String("pause"); p != "" {
		at, dur, _ := strings.Cut(p, ":")
		a, err1 := time.ParseDuration(at)
		d, err2 := time.ParseDuration(dur)
		if err1 != nil || err2 != nil {
			return cliutil.Usage("--pause %q: want AT:FOR, e.g. 3s:500ms", p)
		}
		cfg.PauseAt, cfg.PauseFor = a, d
	}
	zc, err := zenohflags.Config(c)
	if err != nil {
		return err
	}

	cliutil.Graceful(c) // SIGINT or SIGTERM stops publishing and closes --log
	ctx := c.Context
	if d := c.Duration("duration"); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	// --log is read while the simulator runs (tests wait for its lines):
	// written in place, like a recording, every error checked.
	var truth *outfile.Live
	if p := c.String("log"); p != "" {
		if truth, err = outfile.CreateLive(p, outfile.Options{Force: c.Bool("force")}); err != nil {
			return cliutil.Output(fmt.Errorf("--log: %w", err))
		}
		defer truth.Close()
		cfg.Truth = truth
	}
	sess, err := zenoh.Open(zc)
	if err != nil {
		return zenohflags.OpenError(zenoh.Named(err))
	}
	defer sess.Close()
	node, err := iceoryx2.NewNode("vrlog-sim-" + cfg.Robot)
	if err != nil {
		return cliutil.Runtime(fmt.Errorf("iceoryx2: %w", err))
	}
	defer node.Close()

	quiet := c.Bool("quiet")
	if !quiet {
		cfg.Status = func(s string) { fmt.Fprintln(c.App.ErrWriter, "sim: "+s) }
		fmt.Fprintf(c.App.ErrWriter, "sim: robot %s: states on zenoh %s at %g Hz, %d camera(s) on iceoryx2 %s at %g Hz (%dx%d %s), time service %s\n",
			cfg.Robot, simulator.StateKey(cfg.Robot), cfg.StateHz, len(cfg.Cameras), simulator.CameraService(cfg.Robot, "*"), cfg.FrameHz,
			cfg.Width, cfg.Height, cfg.Encoding, simulator.TimeKey(cfg.Robot))
	}
	st, err := simulator.Run(ctx, sess, node, cfg)
	if !quiet {
		fmt.Fprintf(c.App.ErrWriter, "sim: stopped: %d states, %d frames published\n", st.States, st.Frames)
	}
	if err != nil {
		return cliutil.Runtime(err)
	}
	if truth != nil {
		return cliutil.Runtime(truth.Finish())
	}
	return nil
}
