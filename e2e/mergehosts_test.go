package e2e

import (
	"encoding/json"
	"math"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/internal/netem"
	"github.com/vrlog/vrlog/logfmt"
)

// One session from two hosts' logs. Frames stay on the simulator's host
// (iceoryx2 is shared memory), so a recorder there records them; the
// states are recorded on another host, through the zenoh router over the
// impaired link (network namespaces; two recorders on loopback where
// namespaces are unavailable). The three clocks differ: the simulator's
// runs 250 ms ahead of the machine's, the states recorder's 120 ms behind,
// the frames recorder's 400 ms ahead. merge --clock sim recovers each
// recorder's offset within its probes' RTT/2, orders the records by
// simulator time on both receive clocks, and analyze of the merged log
// reports each host's transport latency where the logs as recorded show
// the clocks' difference; the merged log replays at its own pace.
func TestMergeHostsOnSimClock(t *testing.T) {
	r := robot(t)
	dir := t.TempDir()
	states, frames, merged := filepath.Join(dir, "states.vrlog"), filepath.Join(dir, "frames.vrlog"), filepath.Join(dir, "session.vrlog")
	stateKey, camera, service := "vr/"+r+"/state", "vr/"+r+"/camera/front", "vr/"+r+"/time"
	const simAhead, statesAhead, framesAhead = 250 * time.Millisecond, -120 * time.Millisecond, 400 * time.Millisecond
	stateArgs := []string{"record", "-q", "-o", states, "-k", stateKey, "--time-service", service, "--probe-interval", "250ms", "--clock-offset", statesAhead.String()}
	frameArgs := []string{"record", "-q", "-o", frames, "-s", camera, "--time-service", service, "--probe-interval", "250ms", "--clock-offset", framesAhead.String()}
	simArgs := []string{"sim", "-q", "--robot", r, "--state-hz", "100", "--width", "64", "--height", "48", "--duration", "6s",
		"--start-delay", "1500ms", "--clock-offset", simAhead.String()}

	var stateRec, frameRec, sim *proc
	var minStateLatency time.Duration // what the states' transport takes at least
	if err := netem.Available(); err == nil {
		h := newHosts(t)
		h.startRouter(t, "1e17b1")
		toRouter, fromRec := "tcp/"+net.JoinHostPort(routerSimIP, zenohPort), "tcp/"+net.JoinHostPort(routerRecIP, zenohPort)
		stateRec = startCmd(t, h.rec.Command(vrlogBin, append(stateArgs, clientArgs(fromRec)...)...))
		frameRec = startCmd(t, h.sim.Command(vrlogBin, append(frameArgs, clientArgs(toRouter)...)...))
		sim = startCmd(t, h.sim.Command(vrlogBin, append(simArgs, clientArgs(toRouter)...)...))
		minStateLatency = linkDelay - linkJitter
	} else {
		t.Logf("network namespaces unavailable (%v): the two hosts are two recorders on loopback", err)
		recPort, simPort := strconv.Itoa(freePort(t)), strconv.Itoa(freePort(t))
		stateRec = start(t, vrlogBin, append(stateArgs, "--no-multicast", "--listen", "tcp/127.0.0.1:"+recPort)...)
		sim = start(t, vrlogBin, append(simArgs, "--no-multicast", "--connect", "tcp/127.0.0.1:"+recPort, "--listen", "tcp/127.0.0.1:"+simPort)...)
		frameRec = start(t, vrlogBin, append(frameArgs, "--no-multicast", "--connect", "tcp/127.0.0.1:"+simPort)...)
	}
	if code := sim.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sim exit %d:\n%s", code, sim.stderr)
	}
	time.Sleep(500 * time.Millisecond) // the last states cross the slow link
	for _, rec := range []*proc{stateRec, frameRec} {
		rec.signal(syscall.SIGINT)
		if code := rec.wait(t, 20*time.Second); code != 0 {
			t.Fatalf("record exit %d:\n%s", code, rec.stderr)
		}
	}

	out, err := runVrlog("merge", "--clock", "sim", states, frames, "-o", merged)
	if err != nil {
		t.Fatalf("merge --clock sim: %v\n%s", err, out)
	}
	t.Log(out)
	_, mr := readLog(t, merged)
	sc, err := hostclock.ParseSimClock(mr.Header().Metadata)
	if err != nil || sc == nil || len(sc.Hosts) != 2 || sc.Service != service {
		t.Fatalf("the merged log's %s: %+v %v", hostclock.MetaKey, sc, err)
	}
	// Each recorder's offset, within its probes' RTT/2.
	for i, ahead := range []time.Duration{statesAhead, framesAhead} {
		h, want := sc.Hosts[i], (simAhead - ahead).Nanoseconds()
		if d := h.OffsetNs - want; d < -h.UncertaintyNs || d > h.UncertaintyNs || h.Used < 5 {
			t.Fatalf("%s: offset %v ± %v from %d of %d probes, injected %v", h.File, time.Duration(h.OffsetNs), time.Duration(h.UncertaintyNs),
				h.Used, h.Probes, time.Duration(want))
		}
	}

	// Simulator-time order: the wall stamps never go back as the log is
	// read (in monotonic order, as replay reads it), and the monotonic
	// stamps are the simulator's clock minus one constant. Merged as
	// recorded, the same logs go back by the clocks' difference.
	if back, off := backsteps(t, mr, sc.SimMinusMonoNs); back > time.Millisecond || off > time.Millisecond {
		t.Fatalf("reading the merged log, the receive stamps go back by up to %v; wall minus monotonic is up to %v off the simulator's clock minus %d",
			back, off, sc.SimMinusMonoNs)
	}
	plain := filepath.Join(dir, "plain.vrlog")
	if out, err := runVrlog("merge", states, frames, "-o", plain); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	_, pr := readLog(t, plain)
	if back, _ := backsteps(t, pr, 0); back < 400*time.Millisecond {
		t.Fatalf("merged as recorded, the receive stamps go back by %v only: the hosts' clocks differ by 520 ms", back)
	}

	// Latency: each host's transport, not the clocks' difference. As
	// recorded, the frames' is 150 ms too long, the states' 370 ms too
	// short (negative: received before they were captured).
	rep := analyzeJSON(t, merged)
	if rep["receive_clock"] != "simulator" || rep["clock"] != nil || len(rep["hosts"].([]any)) != 2 {
		t.Fatalf("analyze: receive_clock %v, clock %v, hosts %v", rep["receive_clock"], rep["clock"], rep["hosts"])
	}
	latency := func(rep map[string]any, ch string) (lo, p50 time.Duration) {
		l := channelReport(t, rep, ch)["latency_ms"].(map[string]any)
		ms := func(k string) time.Duration { return time.Duration(l[k].(float64) * 1e6) }
		return ms("min"), ms("p50")
	}
	unc := func(i int) time.Duration { return time.Duration(sc.Hosts[i].UncertaintyNs) + time.Microsecond } // + the report's rounding
	sMin, sP50 := latency(rep, stateKey)
	fMin, fP50 := latency(rep, camera)
	if sMin < minStateLatency-unc(0) || sP50 > time.Second || fMin < -unc(1) || fP50 > 50*time.Millisecond {
		t.Fatalf("latency on the simulator's clock: states min %v p50 %v (transport ≥ %v, offset ± %v), frames min %v p50 %v (± %v)",
			sMin, sP50, minStateLatency, unc(0), fMin, fP50, unc(1))
	}
	_, rawFrames := latency(analyzeJSON(t, frames), camera)
	_, rawStates := latency(analyzeJSON(t, states), stateKey)
	if rawFrames < fP50+100*time.Millisecond || rawStates > sP50-300*time.Millisecond {
		t.Fatalf("as recorded, latency p50 of the frames %v, of the states %v: the injected clock errors are gone?", rawFrames, rawStates)
	}
	t.Logf("states: offset %v ± %v, latency min %v p50 %v (as recorded %v); frames: offset %v ± %v, latency min %v p50 %v (as recorded %v)",
		time.Duration(sc.Hosts[0].OffsetNs), time.Duration(sc.Hosts[0].UncertaintyNs), sMin, sP50, rawStates,
		time.Duration(sc.Hosts[1].OffsetNs), time.Duration(sc.Hosts[1].UncertaintyNs), fMin, fP50, rawFrames)

	// The merged log replays at its own pace: its data's span at twice the
	// speed (replay publishes no probes).
	var first, last int64
	for _, c := range mr.Channels() {
		if st := mr.StatsOf(c.ID); c.Transport != logfmt.TransportInternal && st.Records > 0 {
			if first == 0 || st.FirstMonoNs < first {
				first = st.FirstMonoNs
			}
			last = max(last, st.LastMonoNs)
		}
	}
	span := time.Duration(last - first)
	js, err := exec.Command(vrlogBin, "replay", merged, "--rate", "2", "--json", "-q", "--no-multicast", "--prefix", r+"replay", "--linger", "0").Output()
	if err != nil {
		t.Fatalf("replay of the merged log: %v", err)
	}
	var rr struct {
		ElapsedS float64 `json:"elapsed_s"`
		Total    struct {
			Sent uint64 `json:"sent"`
		} `json:"total"`
	}
	if err := json.Unmarshal(js, &rr); err != nil {
		t.Fatal(err)
	}
	el := time.Duration(rr.ElapsedS * 1e9)
	if rr.Total.Sent == 0 || math.Abs(float64(el-span/2)) > float64(time.Second) {
		t.Fatalf("replay at rate 2 sent %d records in %v; the log spans %v", rr.Total.Sent, el, span)
	}
	t.Logf("replay at rate 2: %d records in %v; the log spans %v", rr.Total.Sent, el, span)
	if !strings.Contains(out, "receive stamps on the simulator's clock") {
		t.Fatalf("merge did not report the clocks:\n%s", out)
	}
}

// backsteps reads r as replay does (monotonic order) and returns the
// largest step back of its receive wall stamps, and the largest distance of
// wall minus monotonic stamp from c.
func backsteps(t *testing.T, r *logfmt.Reader, c int64) (back, off time.Duration) {
	t.Helper()
	it := r.Records(logfmt.Filter{MetaOnly: true})
	var last int64
	n := 0
	for it.Next() {
		rec := it.Record()
		if n > 0 {
			back = max(back, time.Duration(last-rec.RecvWallNs))
		}
		last = max(last, rec.RecvWallNs)
		off = max(off, time.Duration(abs(rec.RecvWallNs-rec.RecvMonoNs-c)))
		n++
	}
	if err := it.Err(); err != nil || n == 0 {
		t.Fatalf("%d records: %v", n, err)
	}
	return back, off
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
