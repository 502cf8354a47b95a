package logfmt

import (
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cputime"
)

// The writer on real state records: payloads from the codec's encoder as
// the bundled simulator (internal/simulator) fills them, a 1 kHz robot
// state with four sensor stamps (200 bytes), received with the jitter of a
// real transport, and the raw zstd ceiling on exactly the bytes the writer
// compresses. Figures in docs/benchmarks-logfmt.md.

const (
	statePeriod = 1_000_000 // 1 kHz
	recvLatency = 300_000   // transport delay to the recorder
	recvJitter  = 100_000   // ± spread of that delay
	wallOrigin  = int64(1.764446400e18)
	monoOrigin  = int64(3_600e9) // the recorder's monotonic clock: another origin
)

// realStates returns n state records as the recorder receives them from
// the simulator: its state model (position, orientation and velocities of
// a robot driving a circle, sensors stamped 1–4 ms before the tick, the
// estimate 4 ms before), t_ns on its 1 kHz schedule and x from the time it
// actually published (a timer wakes 10–60 µs late), seq counting up;
// receive stamps a jittery transport delay later, wall and monotonic
// clocks read up to 100 ns apart, a zenoh publisher id and sequence
// number. Payloads are distinct buffers; the same seed gives the same
// records.
func realStates(n int, seed uint64) []Record {
	rng := rand.New(rand.NewPCG(seed, 0x57a7e))
	st := codec.State{Sensors: make([]codec.Sensor, 4)}
	rs := make([]Record, n)
	buf := make([]byte, 0, n*codec.StateSize(len(st.Sensors)))
	zid := []byte("\x9c\x1f\x03\x5e\x7a\x11\x40\x8b\xd2\x6e\x05\x33\xa8\xf4\x19\x62")
	for i := range rs {
		t := wallOrigin + int64(i)*statePeriod
		x := float64(int64(i)*statePeriod+10_000+rng.Int64N(50_000)) / 1e9
		st.Seq, st.TNs, st.EstimateTNs = uint64(i), t, t-4_000_000
		st.Position = codec.Vec3{X: math.Sin(x), Y: math.Cos(x), Z: 0.85}
		st.Orientation = codec.Quat{Z: math.Sin(x / 2), W: math.Cos(x / 2)}
		st.LinearVelocity = codec.Vec3{X: math.Cos(x), Y: -math.Sin(x)}
		st.AngularVelocity = codec.Vec3{Z: 0.5}
		for k := range st.Sensors {
			st.Sensors[k] = codec.Sensor{ID: uint32(k + 1), TNs: t - int64(k+1)*1_000_000}
		}
		start := len(buf)
		buf = codec.AppendState(buf, &st)
		wall := t + recvLatency + rng.Int64N(2*recvJitter+1) - recvJitter
		rs[i] = Record{Channel: 1, RecvWallNs: wall, RecvMonoNs: wall - wallOrigin + monoOrigin + rng.Int64N(100),
			HasStamp: true, CaptureNs: t, Seq: uint64(i), PublisherID: zid, HasPubSN: true, PublisherSN: uint64(i),
			Payload: buf[start:len(buf):len(buf)]}
	}
	return rs
}

// stateChunks is one lap of the real state ring cut into the writer's
// chunks: the ring holds exactly stateRingChunks chunks at the default
// chunk size, so every lap the writer compresses the same payload blocks
// and the same record metadata, and the raw benchmark compresses copies
// of those blocks.
type stateChunk struct {
	n       int    // records
	payload []byte // the channel's payload block
	meta    []byte // the record metadata section
}

const stateRingChunks = 3

var (
	realRingOnce sync.Once
	realRing     []Record
	realChunks   []stateChunk
)

func realStateRing() ([]Record, []stateChunk) {
	realRingOnce.Do(func() {
		rs := realStates(stateRingChunks*(4<<20)/200, 1)
		var b chunkBuilder
		b.reset()
		gi := b.addGroup(1, zstd1)
		first := 0
		for i := range rs {
			b.add(gi, &rs[i], nil)
			if b.raw >= 4<<20 {
				g := b.groups[gi]
				realChunks = append(realChunks, stateChunk{n: i + 1 - first, payload: clone(g.raw), meta: clone(b.meta)})
				first = i + 1
				if len(realChunks) == stateRingChunks {
					break
				}
				b.reset()
				gi = b.addGroup(1, zstd1)
			}
		}
		realRing = rs[:first]
	})
	return realRing, realChunks
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// reportRates reports records per wall second and per CPU second of the
// process since cpu0 (the one-core figure that holds on a busy machine).
func reportRates(b *testing.B, n int, cpu0 time.Duration) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 && cpu0 > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "records/cpu-s")
	}
}

// BenchmarkWriterRealState writes real state records to a file with the
// default options (zstd-1 payloads and metadata, 4 MiB chunks, GOMAXPROCS
// compression workers): run it with -cpu 1 and -cpu 2. The file goes
// through the page cache.
func BenchmarkWriterRealState(b *testing.B) { benchWriterRealState(b, false) }

// BenchmarkWriterRealStateDirect is WriterRealState with DirectIO, as the
// recorder writes its logs: the file bypasses the page cache, whose fresh
// pages cost this VM's kernel more CPU than zstd's metadata pass.
func BenchmarkWriterRealStateDirect(b *testing.B) { benchWriterRealState(b, true) }

// stateWarmLaps is how many laps of the ring the writer benchmarks write
// before timing: enough chunks to create and grow every chunk buffer the
// writer recycles (MaxChunksInFlight+1 at -cpu 1 and 2), so the figure is
// the writer's steady state, not its first seconds.
const stateWarmLaps = 2

func benchWriterRealState(b *testing.B, direct bool) {
	ring, _ := realStateRing()
	lap := ring[len(ring)-1].RecvMonoNs - ring[0].RecvMonoNs + statePeriod
	path := tempPath(b, "state.vrlog")
	w, err := Create(path, WriterOptions{Sync: SyncNone, FlushInterval: -1, DirectIO: direct})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.AddChannel(Channel{Name: "vr/r1/state", Transport: TransportZenoh, Schema: codec.SchemaState, Compression: zstd1}); err != nil {
		b.Fatal(err)
	}
	var payload int64
	for _, r := range ring {
		payload += int64(len(r.Payload))
	}
	var r Record
	write := func(i int) {
		k, l := i%len(ring), int64(i/len(ring))
		r = ring[k]
		// Later laps later in time; the chunks' metadata differs from the
		// first lap's only in the first record's absolute stamps.
		r.RecvMonoNs += l * lap
		r.RecvWallNs += l * lap
		r.CaptureNs += l * lap
		if err := w.Write(&r); err != nil {
			b.Fatal(err)
		}
	}
	warm := stateWarmLaps * len(ring)
	for i := range warm {
		write(i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	written := w.Stats().BytesWritten
	b.SetBytes(payload / int64(len(ring)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := warm; i < warm+b.N; i++ {
		write(i)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	reportRates(b, b.N, cpu0)
	st := w.Stats()
	b.ReportMetric(float64(st.BytesWritten-written)/float64(int64(b.N)*payload/int64(len(ring))), "ratio")
}

// BenchmarkRawZstdRealState is the writer's ceiling: zstd.EncodeAll at
// the writer's level on the very payload blocks and metadata sections the
// writer compresses, with one encoder per goroutine and GOMAXPROCS
// goroutines taking chunks in turn (one goroutine at -cpu 1).
func BenchmarkRawZstdRealState(b *testing.B) {
	_, chunks := realStateRing()
	// first[i] is the number of records before chunk i of the ring.
	first := make([]int, len(chunks)+1)
	payload := 0
	for i, c := range chunks {
		first[i+1] = first[i] + c.n
		payload += len(c.payload)
	}
	recs := first[len(chunks)]
	// start is the first record of the i-th chunk compressed.
	start := func(i int) int { return i/len(chunks)*recs + first[i%len(chunks)] }
	b.SetBytes(int64(payload / recs))
	// The encoders and their output buffers are warmed on the ring before
	// timing, as the writer benchmarks warm the writer.
	encs := make([]*zstd.Encoder, runtime.GOMAXPROCS(0))
	dsts := make([][]byte, len(encs))
	for k := range encs {
		encs[k], _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
		defer encs[k].Close()
		for _, c := range chunks {
			dsts[k] = encs[k].EncodeAll(c.payload, dsts[k][:0])
			dsts[k] = encs[k].EncodeAll(c.meta, dsts[k][:0])
		}
	}
	var next, stored atomic.Int64
	b.ResetTimer()
	cpu0 := cputime.Process()
	var wg sync.WaitGroup
	for k, enc := range encs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := dsts[k]
			var out int64
			for i := int(next.Add(1) - 1); start(i) < b.N; i = int(next.Add(1) - 1) {
				c := &chunks[i%len(chunks)]
				dst = enc.EncodeAll(c.payload, dst[:0])
				out += int64(len(dst))
				dst = enc.EncodeAll(c.meta, dst[:0])
				out += int64(len(dst))
			}
			stored.Add(out)
		}()
	}
	wg.Wait()
	b.StopTimer()
	// Whole chunks were compressed: count their records.
	n := 0
	for i := 0; start(i) < b.N; i++ {
		n = start(i + 1)
	}
	reportRates(b, n, cpu0)
	b.ReportMetric(float64(stored.Load())/(float64(n)*float64(payload)/float64(recs)), "ratio")
}

// BenchmarkWritePathRealState is the writer's own cost on the same
// records: nothing compressed, written to io.Discard, so what remains is
// Write (checks, metadata encoding, the payload copy), sealing and the
// CRCs.
func BenchmarkWritePathRealState(b *testing.B) {
	ring, _ := realStateRing()
	none := Compression{}
	w, err := NewWriter(io.Discard, WriterOptions{Sync: SyncNone, FlushInterval: -1, MetaCompression: &none})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.AddChannel(Channel{Name: "vr/r1/state", Transport: TransportZenoh, Schema: codec.SchemaState}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(ring[0].Payload)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		if err := w.Write(&ring[i%len(ring)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	reportRates(b, b.N, cpu0)
}

// BenchmarkChunkBuilderRealState is the Write path's core alone: the
// record metadata encoding and the payload copy into the open chunk.
func BenchmarkChunkBuilderRealState(b *testing.B) {
	ring, _ := realStateRing()
	var cb chunkBuilder
	cb.reset()
	gi := cb.addGroup(1, zstd1)
	b.SetBytes(int64(len(ring[0].Payload)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i++ {
		if cb.raw >= 4<<20 {
			cb.reset()
			gi = cb.addGroup(1, zstd1)
		}
		cb.add(gi, &ring[i%len(ring)], nil)
	}
	b.StopTimer()
	reportRates(b, b.N, cpu0)
}
