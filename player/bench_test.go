package player

import (
	"context"
	"testing"
	"time"
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
// scheduled) p50/p99/max. Run with -benchtime=1x (or Nx for N×2 s).
func BenchmarkPacing1kHz(b *testing.B) {
	for _, spin := range []time.Duration{0, 50 * time.Microsecond} {
		name := "adaptive"
		if spin > 0 {
			name = "sleep-only"
		}
		b.Run(name, func(b *testing.B) {
			o := Options{Channels: []Channel{{Name: "s"}}, Loops: b.N}
			if spin > 0 {
				o.SpinMin, o.SpinMax = spin, spin // (almost) no spin: what plain sleeping gives
			}
			p, err := New(&genSource{n: 2000, period: 1e6, buf: make([]byte, 200)}, noop, o)
			if err != nil {
				b.Fatal(err)
			}
			s, err := p.Run(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			h := &s.Channels[0].Err
			b.ReportMetric(float64(h.Quantile(.5))/1e3, "p50-µs")
			b.ReportMetric(float64(h.Quantile(.99))/1e3, "p99-µs")
			b.ReportMetric(float64(h.Max())/1e3, "max-µs")
		})
	}
}
