// Package sim is the bundled simulator (`vrlog sim`, `sim`): it publishes a
// robot's State samples over zenoh and camera Frames over iceoryx2, stamped
// with capture t_ns and per-topic seq through the codec, serves a clock-sync
// time service, and injects faults on request (seq gaps, a restart after an
// outage, a pause, jitter, clock offset, stale frames) so that record and
// analyze have something true to find. --log writes what it published, the
// ground truth for tests.
package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/output"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/transport/iceoryx2"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// FrameTypes are the iceoryx2 type details of a camera service: the 48-byte
// frame header as user header, pixels as a u8 slice (docs/wire-format.md).
var FrameTypes = iceoryx2.TypeDetails{
	Payload:    iceoryx2.TypeDetail{Variant: iceoryx2.Dynamic, TypeName: "u8", Size: 1, Alignment: 1},
	UserHeader: iceoryx2.TypeDetail{Variant: iceoryx2.FixedSize, TypeName: "vrsdk::FrameHeader", Size: codec.FrameHeaderSize, Alignment: codec.FrameHeaderAlign},
}

// StateKey, CameraService and TimeKey name a robot's streams.
func StateKey(robot string) string           { return "vr/" + robot + "/state" }
func CameraService(robot, cam string) string { return "vr/" + robot + "/camera/" + cam }
func TimeKey(robot string) string            { return "vr/" + robot + "/time" }

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
   sim --listen tcp/127.0.0.1:7447 --no-multicast --drop-every 50 --restart-after 5s --outage 3s --log truth.jsonl

` + cliutil.ExitCodesHelp,
		Flags: append(zenohflags.Flags(),
			&cli.StringFlag{Name: "robot", Value: "r1", Usage: "robot `NAME` in keys and services"},
			&cli.StringSliceFlag{Name: "camera", Value: cli.NewStringSlice("front"), Usage: "camera `NAME` (repeatable; none with --camera '')"},
			&cli.Float64Flag{Name: "state-hz", Value: 25, Usage: "state rate"},
			&cli.Float64Flag{Name: "frame-hz", Value: 30, Usage: "frame rate per camera"},
			&cli.UintFlag{Name: "width", Value: 640, Usage: "frame width in pixels"},
			&cli.UintFlag{Name: "height", Value: 480, Usage: "frame height in pixels"},
			&cli.StringFlag{Name: "pixel-encoding", Value: "rgb8", Usage: "rgb8, bgr8, rgba8, bgra8, mono8 or mono16"},
			&cli.IntFlag{Name: "sensors", Value: 4, Usage: "sensor entries per state (4 makes 200-byte states)"},
			&cli.DurationFlag{Name: "duration", Usage: "stop after this long (0: until SIGINT/SIGTERM)"},
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
			&cli.StringFlag{Name: "log", Usage: "write every published sample (channel, seq, t_ns, sha256) as JSON lines to `FILE`"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no periodic status lines"},
		),
		Action: run,
	}
}

type config struct {
	robot         string
	cameras       []string
	stateHz       float64
	frameHz       float64
	width, height uint32
	enc           codec.PixelEncoding
	sensors       int
	dropEvery     int
	dropRandom    float64
	restartAfter  time.Duration
	outage        time.Duration
	pauseAt       time.Duration
	pauseFor      time.Duration
	jitter        time.Duration
	offset        time.Duration
	frameLag      time.Duration
	seed          uint64
	startDelay    time.Duration
}

func run(c *cli.Context) error {
	cfg := config{
		robot: c.String("robot"), stateHz: c.Float64("state-hz"), frameHz: c.Float64("frame-hz"),
		width: uint32(c.Uint("width")), height: uint32(c.Uint("height")), sensors: c.Int("sensors"),
		dropEvery: c.Int("drop-every"), dropRandom: c.Float64("drop-random"), restartAfter: c.Duration("restart-after"),
		outage: c.Duration("outage"), jitter: c.Duration("jitter"), offset: c.Duration("clock-offset"),
		frameLag: c.Duration("frame-lag"), seed: c.Uint64("seed"), startDelay: c.Duration("start-delay"),
	}
	for _, cam := range c.StringSlice("camera") {
		if cam != "" {
			cfg.cameras = append(cfg.cameras, cam)
		}
	}
	var err error
	if cfg.enc, err = codec.ParsePixelEncoding(c.String("pixel-encoding")); err != nil {
		return cliutil.Usage("--pixel-encoding: %v", err)
	}
	if cfg.stateHz <= 0 || cfg.frameHz <= 0 || cfg.sensors < 0 || cfg.sensors > codec.MaxSensors {
		return cliutil.Usage("rates must be positive and --sensors within 0..65535")
	}
	if p := c.String("pause"); p != "" {
		at, dur, _ := strings.Cut(p, ":")
		a, err1 := time.ParseDuration(at)
		d, err2 := time.ParseDuration(dur)
		if err1 != nil || err2 != nil {
			return cliutil.Usage("--pause %q: want AT:FOR, e.g. 3s:500ms", p)
		}
		cfg.pauseAt, cfg.pauseFor = a, d
	}

	cliutil.Graceful(c) // SIGINT or SIGTERM stops publishing and closes --log
	ctx := c.Context
	if d := c.Duration("duration"); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}

	zc, err := zenohflags.Config(c)
	if err != nil {
		return err
	}
	var truth *truthLog
	if p := c.String("log"); p != "" {
		f, err := output.Create(p, output.Options{Force: true})
		if err != nil {
			return cliutil.Output(fmt.Errorf("--log: %w", err))
		}
		defer f.Abort()
		truth = &truthLog{f: f}
	}

	sess, err := zenoh.Open(zc)
	if err != nil {
		return zenohflags.OpenError(fmt.Errorf("zenoh: %w", err))
	}
	defer sess.Close()
	node, err := iceoryx2.NewNode("vrlog-sim-" + cfg.robot)
	if err != nil {
		return cliutil.Runtime(fmt.Errorf("iceoryx2: %w", err))
	}
	defer node.Close()

	s := &simulator{cfg: cfg, sess: sess, node: node, truth: truth, start: time.Now(), rng: rand.New(rand.NewPCG(cfg.seed, 7))}
	if !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "sim: robot %s: states on zenoh %s at %g Hz, %d camera(s) on iceoryx2 %s at %g Hz (%dx%d %s), time service %s\n",
			cfg.robot, StateKey(cfg.robot), cfg.stateHz, len(cfg.cameras), CameraService(cfg.robot, "*"), cfg.frameHz, cfg.width, cfg.height, cfg.enc, TimeKey(cfg.robot))
	}
	err = s.run(ctx, c)
	if !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "sim: stopped: %d states, %d frames published\n", s.states.Load(), s.frames.Load())
	}
	if err != nil {
		return cliutil.Runtime(err)
	}
	return cliutil.Runtime(truth.close())
}
