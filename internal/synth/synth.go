// Package synth writes a synthetic simulator session straight into a log,
// with faults at known positions: the analyzer's test fixtures and
// benchmark logs come from it, reproducible byte for byte (the bundled
// sample log is recorded from the real simulator: scripts/mksample.sh).
// It models what a
// recorder sees: a robot's states (zenoh) and one camera's frames
// (iceoryx2), stamped on the simulator's clock, received a little later on
// the recorder's clocks, and written in arrival order.
package synth

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// Config describes a session. Seqs are per stream and start at 0; a restart
// starts them at 0 again.
type Config struct {
	Robot    string
	Start    time.Time     // simulator time of the first state
	Duration time.Duration // capture span, outage included
	StateHz  float64
	FrameHz  float64
	Width    uint32 // camera image size (rgb8)
	Height   uint32
	// DropStates / DropFrames: seqs of the first run that are never published
	// (seq gaps).
	DropStates []uint64
	DropFrames []uint64
	// RestartAt > 0: the simulator stops publishing after RestartAt and comes
	// back RestartAt+Outage later with seqs from 0.
	RestartAt time.Duration
	Outage    time.Duration
	// FrameLag: a frame is captured this long after the state tick it
	// follows (the camera pipeline's delay).
	FrameLag time.Duration
	// FrameDelay: frames arrive this much later after their capture stamp
	// than states do (on top of the camera stack's 2 ms): frames stamped
	// FrameDelay before they are published.
	FrameDelay time.Duration
	// Latency is the transport delay to the recorder; Jitter its ± spread.
	Latency time.Duration
	Jitter  time.Duration
	// ClockOffset is the simulator's clock minus the recorder's.
	ClockOffset time.Duration
	// ProbeEvery > 0 writes a clock-sync probe channel at that period.
	ProbeEvery time.Duration
	// GarbageStates: this many stray non-state payloads on the state key.
	GarbageStates int
	// RawHz > 0 adds a raw channel (unknown schema) at that rate.
	RawHz float64
	// RecorderDrops are frames the recorder counted as dropped: the frames
	// from seq 100 on (before a restart) are left out of the log, a seq gap as a recorder's
	// drops leave (and counted in the log's drops).
	RecorderDrops uint64
	Seed          uint64
	// StateStore, FrameStore: how the state and camera channels are
	// stored; nil: zstd.
	StateStore, FrameStore *logfmt.Compression
	// SealEvery > 0 seals the open chunk each time the receive clock
	// passes a multiple of it, as the recorder's flush timer does.
	SealEvery time.Duration
}

// Default is the bundled sample's session: 30 s of a 25 Hz state stream and
// a 30 Hz 32×24 camera, with two seq gaps on the states, one on the frames,
// a simulator restart whose outage freezes elapsed at 5.84 s until 21.77 s,
// 12 ms frame lag, probes every second, stray payloads and a raw channel.
func Default() Config {
	return Config{
		Robot: "r1", Start: time.Unix(1_764_446_400, 0), Duration: 30 * time.Second,
		StateHz: 25, FrameHz: 30, Width: 32, Height: 24,
		DropStates: []uint64{40, 41, 100}, DropFrames: []uint64{77},
		RestartAt: 5840 * time.Millisecond, Outage: 15930 * time.Millisecond,
		FrameLag: 12 * time.Millisecond, Latency: 300 * time.Microsecond, Jitter: 100 * time.Microsecond,
		ClockOffset: -250 * time.Microsecond, ProbeEvery: time.Second,
		GarbageStates: 3, RawHz: 1, RecorderDrops: 2, Seed: 1,
	}
}

// RecorderDropFrom is the first frame seq the recorder drops
// (Config.RecorderDrops).
const RecorderDropFrom = 100

// Channel names for a robot.
func StateKey(robot string) string  { return "vr/" + robot + "/state" }
func CameraKey(robot string) string { return "vr/" + robot + "/camera/front" }
func ProbeName(robot string) string { return "vrlog/clock/" + robot }
func RawKey(robot string) string    { return "vr/" + robot + "/diagnostics" }

// Truth is what was written, for tests to compare with.
type Truth struct {
	States, Frames       uint64 // records written (garbage included in States)
	Garbage              uint64
	Probes, Raw          uint64
	SkippedStates        uint64
	SkippedFrames        uint64
	StateGaps, FrameGaps int
	Restarts             int // per stream
	EpochNs              int64
}

type rec struct {
	logfmt.Record
}

// Write generates the session into w.
func Write(w *logfmt.Writer, cfg Config) (Truth, error) {
	var tr Truth
	r := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	stateCh, err := w.AddChannel(logfmt.Channel{Name: StateKey(cfg.Robot), Transport: logfmt.TransportZenoh,
		Topic: StateKey(cfg.Robot), Schema: codec.SchemaState, Compression: store(cfg.StateStore),
		Meta: map[string]string{"zenoh.encoding": "application/octet-stream"}})
	if err != nil {
		return tr, err
	}
	frameCh, err := w.AddChannel(logfmt.Channel{Name: CameraKey(cfg.Robot), Transport: logfmt.TransportIceoryx2,
		Topic: CameraKey(cfg.Robot), Schema: codec.SchemaFrame, Compression: store(cfg.FrameStore),
		Meta: map[string]string{"iox2.payload.type_name": "u8", "iox2.payload.size": "1", "iox2.payload.alignment": "1",
			"iox2.payload.variant": "dynamic", "iox2.user_header.type_name": "vrsdk::FrameHeader", "iox2.user_header.size": "48",
			"iox2.user_header.alignment": "8", "iox2.user_header.variant": "fixed"}})
	if err != nil {
		return tr, err
	}
	var probeCh, rawCh uint16
	if cfg.ProbeEvery > 0 {
		if probeCh, err = w.AddChannel(logfmt.Channel{Name: ProbeName(cfg.Robot), Transport: logfmt.TransportInternal,
			Topic: "vr/" + cfg.Robot + "/time", Schema: codec.SchemaClockProbe}); err != nil {
			return tr, err
		}
	}
	if cfg.RawHz > 0 {
		if rawCh, err = w.AddChannel(logfmt.Channel{Name: RawKey(cfg.Robot), Transport: logfmt.TransportZenoh,
			Topic: RawKey(cfg.Robot), Schema: "", Meta: map[string]string{"zenoh.encoding": "application/json"}}); err != nil {
			return tr, err
		}
	}

	t0 := cfg.Start.UnixNano()
	tr.EpochNs = t0
	end := t0 + cfg.Duration.Nanoseconds()
	restartAt, resumeAt := int64(math.MaxInt64), int64(math.MaxInt64)
	if cfg.RestartAt > 0 {
		restartAt, resumeAt = t0+cfg.RestartAt.Nanoseconds(), t0+cfg.RestartAt.Nanoseconds()+cfg.Outage.Nanoseconds()
		tr.Restarts = 1
	}
	arrive := func(capture int64) (wall, mono int64) {
		d := cfg.Latency.Nanoseconds()
		if cfg.Jitter > 0 {
			d += r.Int64N(2*cfg.Jitter.Nanoseconds()+1) - cfg.Jitter.Nanoseconds()
		}
		wall = capture - cfg.ClockOffset.Nanoseconds() + d
		return wall, wall - 1_700_000_000_000_000_000 // a monotonic clock with its own origin
	}
	var recs []rec
	// stream emits ticks at hz from first, in two runs around the outage.
	stream := func(hz float64, first int64, drop []uint64, emit func(seq uint64, t int64)) (skipped uint64, gaps int) {
		period := int64(1e9 / hz)
		seq := uint64(0)
		lastDropped := false
		for t := first; t <= end; {
			if t > restartAt && t < resumeAt {
				t, seq = resumeAt+(first-t0), 0
				drop = nil
				continue
			}
			if slices.Contains(drop, seq) {
				skipped++
				if !lastDropped {
					gaps++
				}
				lastDropped = true
			} else {
				lastDropped = false
				emit(seq, t)
			}
			seq++
			t += period
		}
		return skipped, gaps
	}
	var st codec.State
	tr.SkippedStates, tr.StateGaps = stream(cfg.StateHz, t0, cfg.DropStates, func(seq uint64, t int64) {
		x := float64(t-t0) / 1e9
		st = codec.State{Seq: seq, TNs: t, EstimateTNs: t - 4_000_000,
			Position:    codec.Vec3{X: math.Sin(x), Y: math.Cos(x), Z: 0.85},
			Orientation: codec.Quat{Z: math.Sin(x / 2), W: math.Cos(x / 2)}, LinearVelocity: codec.Vec3{X: math.Cos(x), Y: -math.Sin(x)},
			AngularVelocity: codec.Vec3{Z: 0.5},
			Sensors:         []codec.Sensor{{ID: 1, TNs: t - 1_000_000}, {ID: 2, TNs: t - 2_500_000}, {ID: 3, TNs: t - 10_000_000}, {ID: 4, TNs: t - 500_000}}}
		wall, mono := arrive(t)
		recs = append(recs, rec{logfmt.Record{Channel: stateCh, RecvWallNs: wall, RecvMonoNs: mono, CaptureNs: t, Seq: seq, HasStamp: true,
			PublisherID: []byte("sim-" + cfg.Robot), Payload: codec.AppendState(nil, &st)}})
		tr.States++
	})
	pix := make([]byte, cfg.Width*cfg.Height*3)
	frame := func(seq uint64, t int64) {
		if seq >= RecorderDropFrom && seq < RecorderDropFrom+cfg.RecorderDrops && t < restartAt {
			return // published, and dropped by the recorder
		}
		h := codec.NewFrameHeader(seq, t, 1, cfg.Width, cfg.Height, codec.RGB8)
		for i := range pix {
			pix[i] = byte(i + int(seq)*3)
		}
		wall, mono := arrive(t + 2_000_000 + cfg.FrameDelay.Nanoseconds()) // frames take longer: 2 ms more through the camera stack
		recs = append(recs, rec{logfmt.Record{Channel: frameCh, RecvWallNs: wall, RecvMonoNs: mono, CaptureNs: t, Seq: seq, HasStamp: true,
			PublisherID: []byte("cam-front"), Header: codec.AppendFrameHeader(nil, &h), Payload: slices.Clone(pix)}})
		tr.Frames++
	}
	if cfg.FrameHz > 0 { // 0: no frames
		tr.SkippedFrames, tr.FrameGaps = stream(cfg.FrameHz, t0+cfg.FrameLag.Nanoseconds(), cfg.DropFrames, frame)
	}
	// Stray payloads on the state key: not states, kept raw and counted.
	for i := range cfg.GarbageStates {
		t := t0 + int64(i+1)*1_234_567_891
		wall, mono := arrive(t)
		recs = append(recs, rec{logfmt.Record{Channel: stateCh, RecvWallNs: wall, RecvMonoNs: mono,
			Payload: []byte(fmt.Sprintf(`{"debug": "stray message %d"}`, i))}})
		tr.States++
		tr.Garbage++
	}
	if cfg.ProbeEvery > 0 {
		for t := t0 + cfg.ProbeEvery.Nanoseconds()/2; t <= end; t += cfg.ProbeEvery.Nanoseconds() {
			if t > restartAt && t < resumeAt {
				continue // the time service is down with the simulator
			}
			t1 := t - cfg.ClockOffset.Nanoseconds() // recorder clock
			up := cfg.Latency.Nanoseconds() + r.Int64N(200_000)
			down := cfg.Latency.Nanoseconds() + r.Int64N(200_000)
			p := codec.ClockProbe{T1Ns: t1, T2Ns: t + up, T3Ns: t + up + 20_000, T4Ns: t1 + up + 20_000 + down}
			recs = append(recs, rec{logfmt.Record{Channel: probeCh, RecvWallNs: p.T4Ns, RecvMonoNs: p.T4Ns - 1_700_000_000_000_000_000,
				Payload: codec.AppendClockProbe(nil, p)}})
			tr.Probes++
		}
	}
	if cfg.RawHz > 0 {
		var sn uint64
		for t := t0; t <= end; t += int64(1e9 / cfg.RawHz) {
			if t > restartAt && t < resumeAt {
				continue
			}
			wall, mono := arrive(t)
			recs = append(recs, rec{logfmt.Record{Channel: rawCh, RecvWallNs: wall, RecvMonoNs: mono, HasPubSN: true, PublisherSN: sn,
				PublisherID: []byte("diag"), Payload: []byte(fmt.Sprintf(`{"cpu": %d}`, 20+sn%7))}})
			sn++
			tr.Raw++
		}
	}
	slices.SortStableFunc(recs, func(a, b rec) int { return cmp.Compare(a.RecvMonoNs, b.RecvMonoNs) })
	for i := range recs {
		if every := cfg.SealEvery.Nanoseconds(); every > 0 && i > 0 && recs[i].RecvMonoNs/every != recs[i-1].RecvMonoNs/every {
			if err := w.Seal(); err != nil {
				return tr, err
			}
		}
		if err := w.Write(&recs[i].Record); err != nil {
			return tr, err
		}
	}
	if cfg.RecorderDrops > 0 {
		w.AddDrops(frameCh, cfg.RecorderDrops)
	}
	return tr, nil
}

// store is a channel's storage: c, or zstd when c is nil.
func store(c *logfmt.Compression) logfmt.Compression {
	if c == nil {
		return logfmt.Compression{Kind: logfmt.CompressionZstd}
	}
	return *c
}

// ParseStore reads a storage name: none, lz4 or zstd (zstd-1).
func ParseStore(s string) (logfmt.Compression, error) {
	switch s {
	case "none":
		return logfmt.Compression{Kind: logfmt.CompressionNone}, nil
	case "lz4":
		return logfmt.Compression{Kind: logfmt.CompressionLZ4}, nil
	case "zstd":
		return logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}, nil
	}
	return logfmt.Compression{}, fmt.Errorf("%q: want none, lz4 or zstd", s)
}

// WriteFile creates path and writes the session into it.
func WriteFile(path string, cfg Config, opts logfmt.WriterOptions) (Truth, error) {
	w, err := logfmt.Create(path, opts)
	if err != nil {
		return Truth{}, err
	}
	tr, err := Write(w, cfg)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return tr, err
}
