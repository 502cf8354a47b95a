//go:build cgo

package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// benchLog writes n 200-byte states (zenoh) period apart.
func benchLog(b *testing.B, n int, period time.Duration) (path, key string) {
	b.Helper()
	key = fmt.Sprintf("vrbench/%d/%d/state", os.Getpid(), time.Now().UnixNano())
	path = filepath.Join(b.TempDir(), "bench.vrlog")
	w, err := logfmt.Create(path, logfmt.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ch, _ := w.AddChannel(logfmt.Channel{Name: key, Transport: logfmt.TransportZenoh, Topic: key, Schema: codec.SchemaState,
		Compression: logfmt.Compression{Kind: logfmt.CompressionZstd}})
	t0 := int64(1_764_446_400_000_000_000)
	for i := 0; i < n; i++ {
		c := t0 + int64(i)*int64(period)
		s := codec.State{Seq: uint64(i), TNs: c, EstimateTNs: c, Sensors: []codec.Sensor{{ID: 1, TNs: c}, {ID: 2, TNs: c}, {ID: 3, TNs: c}, {ID: 4, TNs: c}}}
		p := codec.AppendState(nil, &s)
		if i == 0 && len(p) != 200 {
			b.Fatalf("state is %d bytes", len(p))
		}
		if err := w.Write(&logfmt.Record{Channel: ch, RecvWallNs: c, RecvMonoNs: c - t0 + 1e12, CaptureNs: c, Seq: uint64(i), HasStamp: true, Payload: p}); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path, key
}

// benchReplay replays into a zenoh subscriber session on loopback and
// returns the summary.
func benchReplay(b *testing.B, path, key string, args ...string) Report {
	zp := newZenohPeer(b)
	sub, stop := zenohCollect(b, zp, key)
	args = append([]string{"--json", "--quiet", "--no-multicast-scouting", "--connect", zp.ep, "--delay", "1", "--linger", "500ms"}, append(args, path)...)
	b.ResetTimer()
	r := runReplay(b, args...)
	b.StopTimer()
	if r.code != 0 {
		b.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for last := -1; last != len(sub.items()); time.Sleep(300 * time.Millisecond) {
		last = len(sub.items())
	}
	stop()
	b.ReportMetric(float64(len(sub.items()))/float64(r.rep.Total.Sent), "delivered")
	return r.rep
}

// BenchmarkZenohRateMax: 200 B states at --rate max into a real zenoh
// publisher with a subscriber on loopback (-benchtime is ignored: 200k
// records per iteration).
func BenchmarkZenohRateMax(b *testing.B) {
	const n = 200_000
	path, key := benchLog(b, n, time.Millisecond)
	for range b.N {
		rep := benchReplay(b, path, key, "--rate", "max")
		b.ReportMetric(float64(rep.Total.Sent)/rep.ElapsedS, "msgs/s")
	}
}

// BenchmarkZenoh1kHz: a 1 kHz stream of 200 B states at 1× into a real
// zenoh publisher for 3 s; reports the timing error replay prints.
func BenchmarkZenoh1kHz(b *testing.B) {
	path, key := benchLog(b, 3000, time.Millisecond)
	for range b.N {
		rep := benchReplay(b, path, key)
		e := rep.Total.TimingError
		b.ReportMetric(float64(e.P50)/1e3, "p50-µs")
		b.ReportMetric(float64(e.P99)/1e3, "p99-µs")
		b.ReportMetric(float64(e.Max)/1e3, "max-µs")
	}
}
