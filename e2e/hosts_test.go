package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/internal/netem"
	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
)

// hosts is a simulator host and a recorder host that reach each other only
// through a zenoh router host: three network namespaces on this machine.
//
//	sim 198.51.100.1 ─veth─ 198.51.100.2 router 198.51.100.6 ─veth─ 198.51.100.5 rec
//
// The router host does not forward IP, so nothing but the zenoh router
// joins the two. The recorder's link is impaired both ways: 1 % of the
// packets dropped at random (nftables on its veth) and every byte held
// 50 ms ± 10 ms (a relay on the router host between that link and the
// router). Both zenoh sessions are clients configured by deploy/client.json5;
// the router runs deploy/router.json5 on the official wheel (peers/router.py).
type hosts struct {
	sim, router, rec *netem.NS
}

// The addresses are from TEST-NET-2 (RFC 5737): they exist only inside
// the namespaces.
const (
	simIP        = "198.51.100.1"
	routerSimIP  = "198.51.100.2" // the router listens here; the simulator connects here
	routerRecIP  = "198.51.100.6" // the relay listens here; the recorder connects here
	recIP        = "198.51.100.5"
	zenohPort    = "7447"
	linkDelay    = 50 * time.Millisecond
	linkJitter   = 10 * time.Millisecond
	lossPerMille = 10
)

func newHosts(t *testing.T) *hosts {
	t.Helper()
	if err := netem.Available(); err != nil {
		t.Skipf("multi-host test skipped, it needs network namespaces: %v", err)
	}
	h := &hosts{sim: netem.New(t, "sim"), router: netem.New(t, "router"), rec: netem.New(t, "rec")}
	netem.Link(t, h.sim, "to-router", simIP+"/30", h.router, "to-sim", routerSimIP+"/30")
	netem.Link(t, h.rec, "to-router", recIP+"/30", h.router, "to-rec", routerRecIP+"/30")
	h.rec.DropRandom("to-router", lossPerMille)

	l, err := h.router.Listen(net.JoinHostPort(routerRecIP, zenohPort))
	if err != nil {
		t.Fatal(err)
	}
	relay := &netem.Relay{Delay: linkDelay, Jitter: linkJitter, Seed: 1,
		Dial: func() (net.Conn, error) { return h.router.Dial(net.JoinHostPort(routerSimIP, zenohPort)) }}
	go relay.Serve(l)
	t.Cleanup(func() { l.Close(); relay.Close() })

	if c, err := h.rec.Dial(net.JoinHostPort(simIP, zenohPort)); err == nil {
		c.Close()
		t.Fatal("the recorder host reaches the simulator host directly")
	}
	return h
}

// startRouter runs the router on the router host with zenoh id zid, and
// returns once it listens. It runs deploy/router.json5 on the official
// wheel (peers/router.py), or on zenohd if $VRLOG_ZENOHD names one.
func (h *hosts) startRouter(t *testing.T, zid string) *proc {
	t.Helper()
	conf, ep := filepath.Join(root(), "deploy", "router.json5"), "tcp/"+net.JoinHostPort(routerSimIP, zenohPort)
	cmd := h.router.Command(peertest.Python(t), filepath.Join(root(), "peers", "router.py"), "--config", conf, "--listen", ep, "--id", zid)
	if zd := os.Getenv("VRLOG_ZENOHD"); zd != "" {
		cmd = h.router.Command(zd, "-c", conf, "-l", ep, "-i", zid)
	}
	p := startCmd(t, cmd)
	waitFor(t, 30*time.Second, "the router to listen", func() bool {
		c, err := h.router.Dial(net.JoinHostPort(routerSimIP, zenohPort))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p
}

// clientArgs are the zenoh flags of a client that connects to ep.
func clientArgs(ep string) []string {
	return []string{"--zenoh-config", filepath.Join(root(), "deploy", "client.json5"), "--connect", ep}
}

// Recording across hosts through a router, over a link with delay, jitter
// and loss, while the router is killed and started again: what was
// written stays, the recorder reconnects by itself and says so, and the
// log shows the outage as one gap. Everything the simulator published
// outside the outage is in the log, byte-exact and in order.
func TestAcrossHostsThroughRouter(t *testing.T) {
	h := newHosts(t)
	r := robot(t)
	dir := t.TempDir()
	logPath, truthPath := filepath.Join(dir, "rec.vrlog"), filepath.Join(dir, "truth.jsonl")
	state := "vr/" + r + "/state"

	const zid1, zid2 = "1e17a1", "1e17a2" // the router before and after its restart
	router := h.startRouter(t, zid1)
	// The hosts' clocks differ as two machines' would: the simulator's runs
	// 250 ms ahead of the machine's, the recorder's 120 ms behind.
	const simAhead, recAhead = 250 * time.Millisecond, -120 * time.Millisecond
	rec := startCmd(t, h.rec.Command(vrlogBin, append([]string{"record", "-o", logPath, "-k", "vr/" + r + "/**",
		"--time-service", "vr/" + r + "/time", "--flush-interval", "200ms", "--clock-offset", recAhead.String()},
		clientArgs("tcp/"+net.JoinHostPort(routerRecIP, zenohPort))...)...))
	sim := startCmd(t, h.sim.Command(vrlogBin, append([]string{"sim", "-q", "--robot", r, "--camera", "", "--state-hz", "100",
		"--duration", "3m", "--start-delay", "1500ms", "--log", truthPath, "--clock-offset", simAhead.String()},
		clientArgs("tcp/"+net.JoinHostPort(routerSimIP, zenohPort))...)...)) // stopped once the log holds enough after the outage

	// 3 s of states through the impaired link, then the router dies.
	waitFor(t, 30*time.Second, "3 s of published states", func() bool {
		b, _ := os.ReadFile(truthPath)
		return strings.Count(string(b), "\n") >= 300
	})
	killedAt := time.Now().Add(simAhead) // on the simulator's clock, like the states' t_ns
	router.signal(syscall.SIGKILL)
	router.wait(t, 10*time.Second)
	time.Sleep(1500 * time.Millisecond) // > the flush interval: what arrived before the kill is in the file
	written := snapshot(t, logPath)
	time.Sleep(500 * time.Millisecond)
	h.startRouter(t, zid2)
	restartedAt := time.Now().Add(simAhead) // the new router listens
	// The clients reconnect by themselves (retrying every 0.5, 1, then 2 s):
	// however long that takes on a loaded machine, the recorder says so,
	// and the simulator goes on until the log holds 2 s of states after
	// the outage (a fixed 12 s run left too few when the reconnect was
	// slow under the whole suite's load).
	var reconnectedAt time.Time
	waitFor(t, 90*time.Second, "the recorder to reconnect to the new router", func() bool {
		reconnectedAt = time.Now().Add(simAhead)
		return strings.Contains(rec.stderr.String(), "zenoh: reconnected to router "+zid2)
	})
	waitFor(t, 90*time.Second, "2 s of states recorded after the outage", func() bool {
		n := 0
		for _, x := range snapshot(t, logPath) {
			if x.channel == state && x.TNs > restartedAt.UnixNano() {
				n++
			}
		}
		return n >= 200
	})
	sim.signal(syscall.SIGINT)
	if code := sim.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sim exit %d:\n%s", code, sim.stderr)
	}
	time.Sleep(500 * time.Millisecond) // the last states cross the slow link
	rec.signal(syscall.SIGINT)
	if code := rec.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("record exit %d after SIGINT:\n%s", code, rec.stderr)
	}
	t.Logf("recorder:\n%s", rec.stderr)

	recs, lr := readLog(t, logPath)
	if !lr.Indexed() {
		t.Fatal("SIGINT must leave a finished, indexed log")
	}
	// Nothing already written was lost.
	final := map[logged]bool{}
	for _, x := range recs {
		final[x] = true
	}
	if len(written) == 0 {
		t.Fatal("nothing in the log file 1.5 s after the router died")
	}
	for _, x := range written {
		if !final[x] {
			t.Fatalf("record %+v was in the file during the outage and is gone from the finished log", x)
		}
	}

	// The log is the published stream minus one gap: the outage.
	published := readTruth(t, truthPath)
	before, gap, after := splitAtGap(t, recs, published, state)
	// Lost: what was in flight when the router died (the link holds 50 ms),
	// and what was published while it was away and until both clients had
	// reconnected (they retry every 0.5 s, then 1 s, then 2 s).
	if gap.first.TNs < killedAt.Add(-time.Second).UnixNano() || gap.first.TNs > killedAt.Add(200*time.Millisecond).UnixNano() {
		t.Fatalf("the gap (%s) does not start at the router's death (%s)", gap, killedAt.Format(time.StampMilli))
	}
	// It ends once both clients are back: within 6 s of the new router, or,
	// when a loaded machine made the reconnect slower, within a retry
	// period (2 s) and the status's second of the recorder saying it was
	// back.
	if end := max(restartedAt.Add(6*time.Second).UnixNano(), reconnectedAt.Add(3*time.Second).UnixNano()); gap.last.TNs < restartedAt.Add(-200*time.Millisecond).UnixNano() || gap.last.TNs > end {
		t.Fatalf("the gap (%s) does not end with the reconnect: the new router listened at %s, the recorder was back by %s", gap,
			restartedAt.Format(time.StampMilli), reconnectedAt.Format(time.StampMilli))
	}
	if before < 250 || after < 200 {
		t.Fatalf("%d states recorded before the outage, %d after: want ≥ 250 and ≥ 200", before, after)
	}
	t.Logf("%d states before the outage, %d missing (%s), %d after; %d packets dropped by netfilter", before, gap.n, gap, after, h.rec.Dropped())
	if h.rec.Dropped() == 0 {
		t.Fatal("netfilter dropped no packet on the recorder's link")
	}
	for _, s := range lr.Stats() {
		if s.Drops != 0 {
			t.Fatalf("the recorder dropped %d records on channel %d", s.Drops, s.Channel)
		}
	}

	rep := analyzeJSON(t, logPath)
	st := channelReport(t, rep, state)
	outages := interiorOutages(st)
	if len(outages) != 1 || st["skipped"].(float64) != float64(gap.n) || st["restart_count"].(float64) != 0 {
		t.Fatalf("analysis: outages %v, skipped %v (the gap is %d), restarts %v", outages, st["skipped"], gap.n, st["restart_count"])
	}
	// The clock model recovers the offset between the hosts' clocks from the
	// recorder's probes, within half their round trip (which the link makes
	// ≥ 2 × 40 ms), and with it the states' latency on the simulator's
	// clock is the link's delay, not the clocks' difference.
	models, err := hostclock.FromLog(lr)
	if err != nil {
		t.Fatal(err)
	}
	m := models[0]
	want, unc := (simAhead - recAhead).Nanoseconds(), m.UncertaintyNs()
	if d := m.OffsetNs() - want; d < -unc || d > unc || unc < (linkDelay-linkJitter).Nanoseconds() {
		t.Fatalf("clock offset %v ± %v, injected %v", time.Duration(m.OffsetNs()), time.Duration(unc), time.Duration(want))
	}
	lat := latencies(t, lr, state, m.ToSim)
	if p50 := lat[len(lat)/2]; p50 < (linkDelay-linkJitter).Nanoseconds()-unc || p50 > time.Second.Nanoseconds() {
		t.Fatalf("latency p50 on the simulator's clock %v: the link delays %v ± %v (offset known ± %v)", time.Duration(p50), linkDelay, linkJitter, time.Duration(unc))
	}
	t.Logf("clock offset %v ± %v (injected %v); state latency p50 %v on the simulator's clock",
		time.Duration(m.OffsetNs()), time.Duration(unc), time.Duration(want), time.Duration(lat[len(lat)/2]))

	// The recorder said what happened.
	for _, want := range []string{"zenoh: lost the connection to router " + zid1, "zenoh: reconnected to router " + zid2} {
		if !strings.Contains(rec.stderr.String(), want) {
			t.Fatalf("the recorder's status never said %q:\n%s", want, rec.stderr)
		}
	}
}

// gap is the run of published states missing from a log.
type gap struct {
	first, last truth
	n           int
}

func (g gap) String() string {
	return fmt.Sprintf("seq %d..%d, %s..%s", g.first.Seq, g.last.Seq,
		time.Unix(0, g.first.TNs).Format(time.StampMilli), time.Unix(0, g.last.TNs).Format(time.StampMilli))
}

// splitAtGap checks that channel ch of the log is the published stream,
// byte-exact and in order, minus exactly one run of consecutive samples,
// and returns how many were recorded before and after it.
func splitAtGap(t *testing.T, recs []logged, published []truth, ch string) (before int, g gap, after int) {
	t.Helper()
	var want []truth
	for _, p := range published {
		if p.Channel == ch {
			want = append(want, p)
		}
	}
	i := 0 // next published sample
	for _, r := range recs {
		if r.channel != ch {
			continue
		}
		got := r.truth
		got.Channel = ""
		start := i
		for i < len(want) && want[i].Seq != got.Seq {
			i++
		}
		if i == len(want) {
			t.Fatalf("%s: recorded seq %d was never published, or is out of order", ch, got.Seq)
		}
		w := want[i]
		w.Channel = ""
		if w != got {
			t.Fatalf("%s seq %d: log %+v, published %+v", ch, got.Seq, got, w)
		}
		if i > start {
			if g.n > 0 {
				t.Fatalf("%s: a second gap, seq %d..%d, after %s", ch, want[start].Seq, want[i-1].Seq, g)
			}
			g = gap{first: want[start], last: want[i-1], n: i - start}
		}
		if g.n == 0 {
			before++
		} else {
			after++
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("%s: the last %d published samples are not in the log", ch, len(want)-i)
	}
	if g.n == 0 {
		t.Fatalf("%s: no gap: the router's outage lost nothing?", ch)
	}
	return before, g, after
}

// snapshot reads the records of a log that is still being written (a copy
// of it, tolerating the torn tail).
func snapshot(t *testing.T, path string) []logged {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "snapshot.vrlog")
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := logfmt.Open(cp, logfmt.ReaderOptions{Tolerant: true})
	if err != nil {
		t.Fatalf("reading the log while it is written: %v", err)
	}
	defer r.Close()
	return records(t, r)
}

// latencies are a channel's receive stamps, converted by toSim, minus
// their capture stamps, sorted.
func latencies(t *testing.T, r *logfmt.Reader, ch string, toSim func(int64) int64) []int64 {
	t.Helper()
	var ids []uint16
	for _, c := range r.Channels() {
		if c.Name == ch {
			ids = append(ids, c.ID)
		}
	}
	var lat []int64
	it := r.Records(logfmt.Filter{Channels: ids})
	for it.Next() {
		if rec := it.Record(); rec.HasStamp {
			lat = append(lat, toSim(rec.RecvWallNs)-rec.CaptureNs)
		}
	}
	if err := it.Err(); err != nil || len(lat) == 0 {
		t.Fatalf("%s: %d stamped records: %v", ch, len(lat), err)
	}
	slices.Sort(lat)
	return lat
}

// Two hosts' clocks on one machine (loopback, no namespaces needed): the
// simulator's clock 30 ms ahead, the recorder's (its test-only
// --clock-offset) 20 ms behind. The clock model recovers the 50 ms from the
// recorder's probes within half their round trip, and converts the states'
// receive stamps onto the simulator's clock.
func TestClockOffsetRecovered(t *testing.T) {
	r := robot(t)
	const simAhead, recAhead = 30 * time.Millisecond, -20 * time.Millisecond
	rec, sim, logPath, _ := recordSim(t, r, []string{"--clock-offset", recAhead.String(), "--probe-interval", "200ms"},
		[]string{"--duration", "3s", "--width", "64", "--height", "48", "--clock-offset", simAhead.String()}) // a camera too: record's -s must capture it

	if code := sim.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("sim exit %d:\n%s", code, sim.stderr)
	}
	rec.signal(syscall.SIGINT)
	if code := rec.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, rec.stderr)
	}
	_, lr := readLog(t, logPath)
	models, err := hostclock.FromLog(lr)
	if err != nil {
		t.Fatal(err)
	}
	m := models[0]
	want, unc := (simAhead - recAhead).Nanoseconds(), m.UncertaintyNs()
	if d := m.OffsetNs() - want; d < -unc || d > unc {
		t.Fatalf("offset %v ± %v from %d probes, injected %v", time.Duration(m.OffsetNs()), time.Duration(unc), m.Estimate.Probes, time.Duration(want))
	}
	lat := latencies(t, lr, "vr/"+r+"/state", m.ToSim)
	if lat[0] < -unc || lat[len(lat)/2] > 20*time.Millisecond.Nanoseconds() {
		t.Fatalf("state latency on the simulator's clock: min %v, p50 %v (offset known ± %v)", time.Duration(lat[0]), time.Duration(lat[len(lat)/2]), time.Duration(unc))
	}
	t.Logf("offset %v ± %v from %d probes (injected %v); latency min %v p50 %v", time.Duration(m.OffsetNs()), time.Duration(unc),
		m.Estimate.Probes, time.Duration(want), time.Duration(lat[0]), time.Duration(lat[len(lat)/2]))
}
