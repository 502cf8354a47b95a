package player

import (
	"context"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/cputime"
	"github.com/vrlog/vrlog/sampler"
)

// genSource yields n 200-byte records on one channel, period apart.
type genSource struct {
	n      int
	period int64
	buf    []byte
}

func (g *genSource) Pass(ctx context.Context, emit func(*Rec) bool) error {
	r := Rec{Payload: g.buf}
	for i := 0; i < g.n; i++ {
		r.Key = int64(i) * g.period
		r.Seq = uint64(i)
		if !emit(&r) {
			return nil
		}
	}
	return nil
}

var noop = SinkFunc(func(*Rec) error { return nil })

// BenchmarkRateMaxNoop: the engine's ceiling, 200 B records at --rate max
// into a sink that does nothing (read-ahead queue, copy, ordering, stats).
func BenchmarkRateMaxNoop(b *testing.B) {
	src := &genSource{n: b.N, period: 1e6, buf: make([]byte, 200)}
	p, err := New(src, noop, Options{Channels: []Channel{{Name: "s"}}, RateMax: true, Loops: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(200)
	b.ReportAllocs()
	b.ResetTimer()
	s, err := p.Run(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if s.Channels[0].Sent != uint64(b.N) {
		b.Fatalf("sent %d", s.Channels[0].Sent)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkPacing1kHz: a 1 kHz stream of 200 B records at 1× into a no-op
// sink, 2 s per iteration; reports the timing error (publish minus
// scheduled) p50/p99/max and the CPU the run took (1 = a core), for the
// player and, side by side, a plain time.Sleep loop to the same deadlines.
// Run with -benchtime=1x (or Nx for N×2 s).
func BenchmarkPacing1kHz(b *testing.B) {
	report := func(b *testing.B, h *sampler.Histogram, cpu time.Duration, wall time.Duration) {
		b.ReportMetric(float64(h.Quantile(.5))/1e3, "p50-µs")
		b.ReportMetric(float64(h.Quantile(.99))/1e3, "p99-µs")
		b.ReportMetric(float64(h.Max())/1e3, "max-µs")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu")
	}
	b.Run("player", func(b *testing.B) {
		p, err := New(&genSource{n: 2000, period: 1e6, buf: make([]byte, 200)}, noop, Options{Channels: []Channel{{Name: "s"}}, Loops: b.N})
		if err != nil {
			b.Fatal(err)
		}
		c0, t0 := cputime.Process(), time.Now()
		s, err := p.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		report(b, &s.Channels[0].Err, cputime.Process()-c0, time.Since(t0))
		b.ReportMetric(float64(s.SpinMargin)/1e3, "margin-µs")
	})
	b.Run("time.Sleep-loop", func(b *testing.B) {
		var h sampler.Histogram
		c0, t0 := cputime.Process(), time.Now()
		for i := 0; i < 2000*b.N; i++ {
			deadline := t0.Add(time.Duration(i) * time.Millisecond)
			time.Sleep(time.Until(deadline))
			h.Add(int64(time.Since(deadline)))
		}
		report(b, &h, cputime.Process()-c0, time.Since(t0))
	})
}
