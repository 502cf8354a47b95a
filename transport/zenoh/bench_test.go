//go:build cgo

package zenoh

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
)

func zbench(b *testing.B) string {
	p := filepath.Join(peertest.Root(), "native", "target", "release", "examples", "zbench")
	if _, err := os.Stat(p); err != nil {
		b.Fatalf("%s missing: run `make bench-transport` (builds it with cargo build --release --example zbench)", p)
	}
	return p
}

// startZ runs zbench and waits for its "ready"; the returned function waits
// for its JSON result line.
func startZ(b *testing.B, args ...string) func() map[string]float64 {
	cmd := exec.Command(zbench(b), args...)
	out, _ := cmd.StdoutPipe()
	errp, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(errp)
	for sc.Scan() && sc.Text() != "ready" {
	}
	return func() map[string]float64 {
		var m map[string]float64
		if err := json.NewDecoder(out).Decode(&m); err != nil {
			b.Fatalf("zbench %v: %v", args, err)
		}
		return m
	}
}

// goRate counts samples through the Go API for window, from the first sample.
func goRate(b *testing.B, sub *Subscriber, window time.Duration) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	buf, err := sub.Receive(ctx, nil) // first sample
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), window)
	defer cancel()
	t0 := time.Now()
	n := 0
	for {
		buf, err = sub.Receive(ctx, buf[:0])
		n += len(buf)
		if err != nil {
			break
		}
	}
	return float64(n) / time.Since(t0).Seconds()
}

// BenchmarkReceive200B compares the 200-byte receive rate through the Go API
// with a pure-Rust subscriber (native/examples/zbench.rs, same crates) on the
// same Rust publisher, which publishes as fast as it can (congestion control
// Drop, so each subscriber gets what it can take). Phases: both subscribers
// at once (same run, same stream), then each alone. Run with -benchtime=1x.
func BenchmarkReceive200B(b *testing.B) {
	const window = 3 * time.Second
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(b))
	startZ(b, "pub", ep, "bench/z", "20", "200")
	s, err := Open(Config{Mode: ModePeer, Connect: []string{ep}, Listen: []string{"tcp/127.0.0.1:0"}, DisableMulticastScouting: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < b.N; i++ {
		// phase 1: Go and Rust subscribers on the same stream at the same time
		sub, err := s.Subscribe("bench/z", SubscriberOptions{})
		if err != nil {
			b.Fatal(err)
		}
		rust := startZ(b, "sub", ep, "bench/z", fmt.Sprint(window.Seconds()))
		goTogether := goRate(b, sub, window)
		rustTogether := rust()["rate"]
		sub.Close()
		// phase 2: Go alone; phase 3: Rust alone
		sub, err = s.Subscribe("bench/z", SubscriberOptions{})
		if err != nil {
			b.Fatal(err)
		}
		goAlone := goRate(b, sub, window)
		dropped := sub.Dropped()
		sub.Close()
		rustAlone := startZ(b, "sub", ep, "bench/z", fmt.Sprint(window.Seconds()))()["rate"]
		b.ReportMetric(goTogether, "go-msgs/s-together")
		b.ReportMetric(rustTogether, "rust-msgs/s-together")
		b.ReportMetric(goTogether/rustTogether, "ratio-together")
		b.ReportMetric(goAlone, "go-msgs/s-alone")
		b.ReportMetric(rustAlone, "rust-msgs/s-alone")
		b.ReportMetric(goAlone/rustAlone, "ratio-alone")
		b.ReportMetric(float64(dropped), "go-queue-drops")
	}
}
