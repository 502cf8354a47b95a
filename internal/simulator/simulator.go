// Package simulator is the bundled robot simulator behind `vrlog sim`: it
// publishes a robot's State samples over zenoh and camera Frames over
// iceoryx2, stamped with capture t_ns and per-topic seq through the codec,
// serves a clock-sync time service, and injects faults on request (seq
// gaps, a restart after an outage, a pause, jitter, clock offset, stale
// frames) so that record and analyze have something true to find. Truth
// receives what it published, the ground truth for tests.
package simulator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/transport/clock"
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

// Config is what to simulate (the sim command's flags).
type Config struct {
	Robot         string
	Cameras       []string
	StateHz       float64
	FrameHz       float64
	Width, Height uint32
	Encoding      codec.PixelEncoding
	Sensors       int
	DropEvery     int           // never publish every Nth sample of each stream
	DropRandom    float64       // never publish a sample with this probability
	RestartAfter  time.Duration // restart the publishers after this long
	Outage        time.Duration // how long a restart keeps them away
	PauseAt       time.Duration // stall publishing PauseAt after the first sample,
	PauseFor      time.Duration // for PauseFor
	Jitter        time.Duration // Gaussian jitter of capture instants
	ClockOffset   time.Duration // the simulator's clock minus this host's
	FrameLag      time.Duration // frames' stamps are this much older than their tick
	Seed          uint64
	StartDelay    time.Duration // after declaring publishers, before the first sample
	// Truth, if set, receives one JSON line per published sample.
	Truth io.Writer
	// Status, if set, receives a status line every 5 s and on a restart.
	Status func(string)
}

// Stats count what was published.
type Stats struct{ States, Frames uint64 }

// Run publishes until ctx ends (with one restart if configured) and
// returns what it published.
func Run(ctx context.Context, sess *zenoh.Session, node *iceoryx2.Node, cfg Config) (Stats, error) {
	s := &simulator{cfg: cfg, sess: sess, node: node, start: time.Now(), rng: rand.New(rand.NewPCG(cfg.Seed, 7))}
	if cfg.Truth != nil {
		s.truth = &truthLog{w: cfg.Truth}
	}
	err := s.run(ctx)
	return Stats{States: s.states.Load(), Frames: s.frames.Load()}, err
}

func (s *simulator) status(format string, args ...any) {
	if s.cfg.Status != nil {
		s.cfg.Status(fmt.Sprintf(format, args...))
	}
}

type simulator struct {
	cfg   Config
	sess  *zenoh.Session
	node  *iceoryx2.Node
	truth *truthLog
	start time.Time
	// runStart is the first tick of the current run (after --start-delay);
	// firstStart that of the first run, from which --pause counts.
	runStart, firstStart time.Time
	mu                   sync.Mutex // guards rng
	rng                  *rand.Rand
	states               atomic.Uint64
	frames               atomic.Uint64
}

// now is the simulator's clock: this host's wall clock plus --clock-offset.
func (s *simulator) now() int64 { return clock.WallNow() + s.cfg.ClockOffset.Nanoseconds() }

// stamp is the capture stamp of a sample due at tick: the simulation step
// it belongs to, on the simulator's clock, however late the publisher
// woke up to send it (that delay is part of the measured latency).
func (s *simulator) stamp(tick time.Time) int64 {
	return tick.UnixNano() + s.cfg.ClockOffset.Nanoseconds()
}

// run publishes until ctx ends, with one restart if configured.
func (s *simulator) run(ctx context.Context) error {
	status := time.NewTicker(5 * time.Second)
	defer status.Stop()
	for runNo := 0; ; runNo++ {
		runCtx, cancel := context.WithCancel(ctx)
		if s.cfg.RestartAfter > 0 && runNo == 0 {
			runCtx, cancel = context.WithTimeout(ctx, s.cfg.StartDelay+s.cfg.RestartAfter)
		}
		errc := make(chan error, 8)
		var wg sync.WaitGroup
		q, err := s.sess.DeclareQueryable(TimeKey(s.cfg.Robot), s.answerTime)
		if err != nil {
			cancel()
			return fmt.Errorf("time service: %w", err)
		}
		start := func(f func(context.Context) error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := f(runCtx); err != nil {
					errc <- err
					cancel()
				}
			}()
		}
		s.runStart = time.Now()
		if runNo == 0 {
			s.runStart = s.runStart.Add(s.cfg.StartDelay)
			s.firstStart = s.runStart
		}
		start(s.publishStates)
		for i, cam := range s.cfg.Cameras {
			start(func(ctx context.Context) error { return s.publishFrames(ctx, uint32(i+1), cam) })
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
	wait:
		for {
			select {
			case <-done:
				break wait
			case <-status.C:
				s.status("%s: %d states, %d frames", time.Since(s.start).Round(time.Second), s.states.Load(), s.frames.Load())
			}
		}
		q.Close()
		cancel()
		select {
		case err := <-errc:
			return err
		default:
		}
		if ctx.Err() != nil || runNo > 0 || s.cfg.RestartAfter <= 0 {
			return nil
		}
		s.status("restarting: publishers away for %s, then seq from 0", s.cfg.Outage)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.cfg.Outage):
		}
	}
}

func (s *simulator) answerTime(q zenoh.Query) []zenoh.Reply {
	t2 := q.RecvWallNs + s.cfg.ClockOffset.Nanoseconds()
	return []zenoh.Reply{{Key: TimeKey(s.cfg.Robot), Payload: codec.AppendTimeReply(nil, codec.TimeReply{T2Ns: t2, T3Ns: s.now()}),
		Encoding: "application/octet-stream"}}
}

// ticker calls f at hz with absolute deadlines (no drift), applying pause,
// jitter and drops; f gets the seq and its tick (the jittered deadline).
func (s *simulator) ticker(ctx context.Context, hz float64, f func(seq uint64, tick time.Time) error) error {
	period := time.Duration(float64(time.Second) / hz)
	next := s.runStart
	// The pause comes once per session, AT after the first sample; in a
	// restart's outage it has nothing to stall.
	pauseAt := s.firstStart.Add(s.cfg.PauseAt)
	pending := s.cfg.PauseFor > 0 && !pauseAt.Before(s.runStart)
	for seq := uint64(0); ; seq++ {
		if pending && !time.Now().Before(pauseAt) {
			pending = false
			next = next.Add(s.cfg.PauseFor)
		}
		at := next
		if s.cfg.Jitter > 0 {
			s.mu.Lock()
			at = at.Add(time.Duration(s.rng.NormFloat64() * float64(s.cfg.Jitter)))
			s.mu.Unlock()
		}
		t := time.NewTimer(time.Until(at))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		next = next.Add(period)
		if s.drop(seq) {
			continue
		}
		if err := f(seq, at); err != nil {
			return err
		}
	}
}

func (s *simulator) drop(seq uint64) bool {
	if s.cfg.DropEvery > 0 && seq%uint64(s.cfg.DropEvery) == uint64(s.cfg.DropEvery-1) {
		return true
	}
	if s.cfg.DropRandom > 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.rng.Float64() < s.cfg.DropRandom
	}
	return false
}

func (s *simulator) publishStates(ctx context.Context) error {
	key := StateKey(s.cfg.Robot)
	pub, err := s.sess.Publisher(key, zenoh.PublisherOptions{Encoding: "application/octet-stream", SourceInfo: true, Liveliness: true, Block: true})
	if err != nil {
		return fmt.Errorf("state publisher %s: %w", key, err)
	}
	defer pub.Close()
	st := codec.State{Sensors: make([]codec.Sensor, s.cfg.Sensors)}
	var buf []byte
	return s.ticker(ctx, s.cfg.StateHz, func(seq uint64, tick time.Time) error {
		t := s.stamp(tick)
		x := float64(time.Since(s.start)) / 1e9
		st.Seq, st.TNs, st.EstimateTNs = seq, t, t-4_000_000
		st.Position = codec.Vec3{X: math.Sin(x), Y: math.Cos(x), Z: 0.85}
		st.Orientation = codec.Quat{Z: math.Sin(x / 2), W: math.Cos(x / 2)}
		st.LinearVelocity = codec.Vec3{X: math.Cos(x), Y: -math.Sin(x)}
		st.AngularVelocity = codec.Vec3{Z: 0.5}
		for i := range st.Sensors {
			st.Sensors[i] = codec.Sensor{ID: uint32(i + 1), TNs: t - int64(i+1)*1_000_000}
		}
		buf = codec.AppendState(buf[:0], &st)
		if err := pub.Put(buf, nil); err != nil {
			return fmt.Errorf("publish %s seq %d: %w", key, seq, err)
		}
		s.states.Add(1)
		s.truth.add(key, seq, t, nil, buf)
		return nil
	})
}

func (s *simulator) publishFrames(ctx context.Context, camID uint32, cam string) error {
	service := CameraService(s.cfg.Robot, cam)
	h := codec.NewFrameHeader(0, 0, camID, s.cfg.Width, s.cfg.Height, s.cfg.Encoding)
	pub, err := s.node.Publisher(service, FrameTypes, iceoryx2.PublisherOptions{
		InitialMaxSliceLen: int(h.DataSize), Service: iceoryx2.ServiceConfig{SubscriberMaxBufferSize: 8, MaxPublishers: 4, MaxSubscribers: 16}})
	if err != nil {
		return fmt.Errorf("camera %s: %w", service, err)
	}
	defer pub.Close()
	pix := make([]byte, h.DataSize)
	var hdr []byte
	return s.ticker(ctx, s.cfg.FrameHz, func(seq uint64, tick time.Time) error {
		t := s.stamp(tick) - s.cfg.FrameLag.Nanoseconds()
		paint(pix, h.Stride, seq)
		h.Seq, h.TNs = seq, t
		hdr = codec.AppendFrameHeader(hdr[:0], &h)
		if _, err := pub.Send(hdr, pix); err != nil {
			return fmt.Errorf("publish %s seq %d: %w", service, seq, err)
		}
		s.frames.Add(1)
		s.truth.add(service, seq, t, hdr, pix)
		return nil
	})
}

// paint fills an image with a diagonal gradient that moves every frame plus
// low-amplitude sensor noise, so every frame differs and compresses about as
// much as a camera image does (a pure gradient would compress 400×).
func paint(pix []byte, stride uint32, seq uint64) {
	if stride == 0 {
		return
	}
	x := seq*0x9E3779B97F4A7C15 | 1 // xorshift state, different per frame
	for y := 0; y < len(pix)/int(stride); y++ {
		row := pix[y*int(stride) : (y+1)*int(stride)]
		base := byte(uint64(y) + seq*4)
		for i := 0; i < len(row); i += 8 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			n := x
			for k := i; k < min(i+8, len(row)); k++ {
				row[k] = base + byte(k/3) + byte(n&0x07)
				n >>= 8
			}
		}
	}
}

// truthLog is Config.Truth: one JSON line per published sample, the same
// fields as the Python subscriber peer writes.
type truthLog struct {
	mu sync.Mutex
	w  io.Writer
}

type truthLine struct {
	Channel       string `json:"channel"`
	Seq           uint64 `json:"seq"`
	TNs           int64  `json:"t_ns"`
	HeaderSHA256  string `json:"header_sha256"`
	PayloadSHA256 string `json:"payload_sha256"`
	Size          int    `json:"size"`
}

func (l *truthLog) add(ch string, seq uint64, t int64, header, payload []byte) {
	if l == nil {
		return
	}
	hs, ps := sha256.Sum256(header), sha256.Sum256(payload)
	b, _ := json.Marshal(truthLine{ch, seq, t, hex.EncodeToString(hs[:]), hex.EncodeToString(ps[:]), len(payload)})
	l.mu.Lock()
	l.w.Write(append(b, '\n')) // the caller's writer keeps the first error
	l.mu.Unlock()
}
