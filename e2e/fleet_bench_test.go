package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/netem"
	"github.com/vrlog/vrlog/internal/peertest"
)

// BenchmarkCollect: collect over the fleet test bed's links against a
// plain TCP copy of the same file over the same links, side by side in
// each iteration (socat on the recorder's host, through a relay on the
// router host, to socat on the controller's host: the same two hops as
// the zenoh router's; the copy synced, as collect syncs what it commits),
// on a clean link and with a 20 ms round trip on the controller's link
// (a netem.Relay on the controller's side of both paths; on the clean
// link a relay without delay, on both). Reports each's MB/s and
// collect_vs_tcp, the target being ≥ 0.7. Needs root, ip, nft and
// socat:
//
//	go test -run '^$' -bench Collect -benchtime 3x ./e2e/
func BenchmarkCollect(b *testing.B) {
	if err := netem.Available(); err != nil {
		b.Skipf("needs network namespaces: %v", err)
	}
	if _, err := exec.LookPath("socat"); err != nil {
		b.Skip("needs socat (apt-get install socat)")
	}
	const mib = 256
	var window []string // collect's default, or VRLOG_BENCH_WINDOW requests in flight
	if w := os.Getenv("VRLOG_BENCH_WINDOW"); w != "" {
		window = []string{"--window", w}
	}
	for _, link := range []struct {
		name   string
		oneWay time.Duration
	}{{"clean", 0}, {"rtt20ms", 10 * time.Millisecond}} {
		b.Run(link.name, func(b *testing.B) {
			f := newFleetBed(b)
			router := exec.Command("ip", "netns", "exec", f.router.Name, peertest.Python(b), filepath.Join(root(), "peers", "router.py"),
				"--config", filepath.Join(root(), "deploy", "router.json5"), "--listen", "tcp/0.0.0.0:"+zenohPort)
			if err := router.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { router.Process.Kill(); router.Wait() }()
			dir := b.TempDir()
			recDir := filepath.Join(dir, "a")
			os.Mkdir(recDir, 0o755)
			src := filepath.Join(recDir, "big.vrlog")
			bigLog(b, src, mib<<20)
			fi, _ := os.Stat(src)
			rec := exec.Command("ip", "netns", "exec", f.a.Name, vrlogBin, "record", "-q", "--name", "hosta", "-o", filepath.Join(recDir, "now.vrlog"),
				"-k", "vr/none/**", "--probe-interval", "0", "--zenoh-config", filepath.Join(root(), "deploy", "client.json5"),
				"--connect", "tcp/"+net.JoinHostPort(f.routerIP[f.a], zenohPort))
			if err := rec.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { rec.Process.Kill(); rec.Wait() }()

			// The TCP path: socat on a, a forwarder on the router host (the
			// router's hop), socat on ctl; with a delay, the controller's
			// side of it goes through a relay as zenoh's does.
			hop := "9000"
			var zport string
			fwd := exec.Command("ip", "netns", "exec", f.router.Name, "socat", "TCP-LISTEN:9002,bind="+f.routerIP[f.ctl]+",reuseaddr,fork",
				"TCP:198.51.100.17:9001")
			if err := fwd.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { fwd.Process.Kill(); fwd.Wait() }()
			l, err := f.router.Listen(net.JoinHostPort(f.routerIP[f.ctl], hop))
			if err != nil {
				b.Fatal(err)
			}
			relay := &netem.Relay{Delay: link.oneWay, Seed: 2,
				Dial: func() (net.Conn, error) { return f.router.Dial(net.JoinHostPort(f.routerIP[f.ctl], "9002")) }}
			go relay.Serve(l)
			defer func() { l.Close(); relay.Close() }()
			f.delayCtl(b, link.oneWay)
			zport = ctlRelayPort
			tcpCopy := func(dst string) time.Duration {
				send := exec.Command("ip", "netns", "exec", f.a.Name, "socat", "-u", "OPEN:"+src, "TCP-LISTEN:9001,bind=198.51.100.17,reuseaddr")
				if err := send.Start(); err != nil {
					b.Fatal(err)
				}
				time.Sleep(200 * time.Millisecond)
				start := time.Now()
				if out, err := exec.Command("ip", "netns", "exec", f.ctl.Name, "socat", "-u", "TCP:"+net.JoinHostPort(f.routerIP[f.ctl], hop), "CREATE:"+dst).CombinedOutput(); err != nil {
					b.Fatalf("socat: %v: %s", err, out)
				}
				if out, err := exec.Command("sync", dst).CombinedOutput(); err != nil { // collect syncs what it commits
					b.Fatalf("sync: %v: %s", err, out)
				}
				d := time.Since(start)
				send.Wait()
				if st, err := os.Stat(dst); err != nil || st.Size() != fi.Size() {
					b.Fatalf("the TCP copy is %v bytes, want %d (%v)", st, fi.Size(), err)
				}
				return d
			}
			var cpu time.Duration // the collector's CPU time (user + system)
			collect := func(out string) time.Duration {
				start := time.Now()
				args := append([]string{"netns", "exec", f.ctl.Name, vrlogBin, "collect", "hosta", "-q", "--no-merge", "-o", out,
					"--zenoh-config", filepath.Join(root(), "deploy", "client.json5"), "--connect", "tcp/" + net.JoinHostPort(f.routerIP[f.ctl], zport)}, window...)
				cmd := exec.Command("ip", args...)
				if o, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("collect: %v: %s", err, o)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				return time.Since(start)
			}
			// Warm up: the recorder hashes the file once, zenoh connects.
			for end := time.Now().Add(30 * time.Second); ; {
				cmd := exec.Command("ip", "netns", "exec", f.ctl.Name, vrlogBin, "collect", "hosta", "-q", "--no-merge", "--patience", "2s",
					"-o", filepath.Join(dir, "warm"), "--zenoh-config", filepath.Join(root(), "deploy", "client.json5"),
					"--connect", "tcp/"+net.JoinHostPort(f.routerIP[f.ctl], zport))
				if cmd.Run() == nil {
					break
				}
				if time.Now().After(end) {
					b.Fatal("the recorder never answered")
				}
			}
			var tcp, zen time.Duration
			cpu = 0
			b.ResetTimer()
			for i := range b.N {
				out := filepath.Join(dir, "run"+strconv.Itoa(i))
				os.MkdirAll(out, 0o755)
				tcp += tcpCopy(filepath.Join(out, "tcp.bin"))
				zen += collect(out)
			}
			b.StopTimer()
			mb := float64(fi.Size()) * float64(b.N) / 1e6
			b.ReportMetric(mb/tcp.Seconds(), "tcp_MB/s")
			b.ReportMetric(mb/zen.Seconds(), "collect_MB/s")
			b.ReportMetric(tcp.Seconds()/zen.Seconds(), "collect_vs_tcp")
			b.ReportMetric(cpu.Seconds()/zen.Seconds(), "collector_cores")
		})
	}
}
