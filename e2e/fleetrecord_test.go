package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/netem"
	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
)

// The clocks of the fleet bed's hosts: the simulators run simAhead of
// the machine's clock, host a's recorder aAhead, host b's bAhead, so the
// merge must find +370 ms and −50 ms.
const simAhead, aAhead, bAhead = 250 * time.Millisecond, -120 * time.Millisecond, 300 * time.Millisecond

// fleetHost is a recorder host of the bed: its simulator (its own robot
// and iceoryx2 camera, its truth logged) and its recorder, armed (--idle).
type fleetHost struct {
	ns                *netem.NS
	name, robot, dir  string
	truth             string
	ahead             time.Duration
	sim, rec          *proc
	service, zenohCfg string
}

// armed starts both recorder hosts' simulators and recorders on the
// router (deploy/ configs of an access-controlled deployment: acl true)
// and waits until the controller sees both recorders idle. Both
// recorders probe host a's simulator's time service: one simulator
// clock for the session.
func (f *fleetBed) armed(t *testing.T, dir string, acl bool) (a, b *fleetHost) {
	t.Helper()
	simCfg, recCfg := "client.json5", "client.json5"
	if acl {
		simCfg, recCfg = "authclient.json5", "recorder.json5"
	}
	r := robot(t)
	a = &fleetHost{ns: f.a, name: "hosta", robot: r + "a", ahead: aAhead}
	b = &fleetHost{ns: f.b, name: "hostb", robot: r + "b", ahead: bAhead}
	for _, h := range []*fleetHost{a, b} {
		h.dir, h.truth, h.service, h.zenohCfg = filepath.Join(dir, h.name), filepath.Join(dir, h.name+".truth.jsonl"), "vr/"+a.robot+"/time", recCfg
		os.Mkdir(h.dir, 0o755)
		h.sim = startCmd(t, h.ns.Command(vrlogBin, append([]string{"sim", "-q", "--robot", h.robot, "--state-hz", "100", "--width", "64", "--height", "48",
			"--duration", "150s", "--clock-offset", simAhead.String(), "--log", h.truth}, f.zenoh(h.ns, simCfg, zenohPort)...)...))
		h.rec = startCmd(t, h.ns.Command(vrlogBin, append([]string{"record", "-q", "--name", h.name, "--idle", "-o", filepath.Join(h.dir, "run.vrlog"),
			"-k", "vr/" + h.robot + "/**", "-s", "vr/" + h.robot + "/camera/*", "--time-service", h.service, "--probe-interval", "200ms",
			"--clock-offset", h.ahead.String()}, f.zenoh(h.ns, recCfg, zenohPort)...)...))
	}
	ctlCfg := "client.json5"
	if acl {
		ctlCfg = "controller.json5"
	}
	// Idle, and receiving both of its simulator's streams: a recording
	// started now begins in the middle of them, as a user's would.
	waitFor(t, 60*time.Second, "both recorders idle, receiving their streams", func() bool {
		for _, h := range []*fleetHost{a, b} {
			if st, _, receiving := f.status(t, ctlCfg, h.name); st != "idle" || receiving < 2 {
				return false
			}
		}
		return true
	})
	return a, b
}

// state is recorder name's state as the controller's host sees it with
// config ("" if it does not answer).
func (f *fleetBed) state(t *testing.T, config, name string) string {
	st, _, _ := f.status(t, config, name)
	return st
}

// status is recorder name's state, how many files it wrote and how many
// of its data channels receive, as the controller's host sees it with
// config ("" if it does not answer).
func (f *fleetBed) status(t *testing.T, config, name string) (state string, files, receiving int) {
	out, _ := f.ctl.Command(vrlogBin, append([]string{"rec", "status", name, "--json", "--timeout", "3s"}, f.zenoh(f.ctl, config, zenohPort)...)...).Output()
	var as []struct {
		Reply struct {
			Status struct {
				State    string
				Files    int
				Channels []struct {
					Transport string
					Hz        float64
				}
			} `json:"status"`
		} `json:"reply"`
	}
	if json.Unmarshal(out, &as) != nil || len(as) != 1 {
		return "", 0, 0
	}
	st := as[0].Reply.Status
	for _, c := range st.Channels {
		if c.Transport != "internal" && c.Hz > 0 {
			receiving++
		}
	}
	return st.State, st.Files, receiving
}

// fleet runs vrlog fleet ARGS on the controller's host with config.
func (f *fleetBed) fleet(t *testing.T, config string, args ...string) *exec.Cmd {
	return f.ctl.Command(vrlogBin, append(append([]string{"fleet", "--json"}, args...), f.zenoh(f.ctl, config, zenohPort)...)...)
}

// fleetJSON is the last line of fleet --json, in part.
type fleetJSON struct {
	Schema    string `json:"schema"`
	StoppedBy string `json:"stopped_by"`
	Recorders []struct {
		Name, Role, Why, File string
		Silent                bool
	} `json:"recorders"`
	Collected []struct {
		Name  string `json:"name"`
		Files []struct {
			Name, Path, SHA256 string
		} `json:"files"`
	} `json:"collected"`
	Merged    string `json:"merged"`
	StartSkew *struct {
		SpreadNs      int64 `json:"spread_ns"`
		UncertaintyNs int64 `json:"uncertainty_ns"`
		Firsts        []struct {
			Name  string `json:"name"`
			SimNs int64  `json:"sim_ns"`
		} `json:"first_records"`
	} `json:"start_skew"`
}

// parseFleet finds fleet --json's report in its output.
func parseFleet(t *testing.T, out string) fleetJSON {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, `{"schema":"vrlog.fleet/1"`) {
			var r fleetJSON
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("fleet --json: %v: %s", err, l)
			}
			return r
		}
	}
	t.Fatalf("fleet printed no report:\n%s", out)
	return fleetJSON{}
}

// role is recorder name's role in a fleet report.
func (r fleetJSON) role(name string) (role, why string, silent bool) {
	for _, m := range r.Recorders {
		if m.Name == name {
			return m.Role, m.Why, m.Silent
		}
	}
	return "", "", false
}

// files are recorder name's collected files.
func (r fleetJSON) files(name string) []string {
	var out []string
	for _, c := range r.Collected {
		if c.Name == name {
			for _, f := range c.Files {
				out = append(out, f.Path)
			}
		}
	}
	return out
}

// stopFleet asks the fleet recording name to stop from the controller's
// host, with the official Python client and config, and returns its
// answer and exit code.
func (f *fleetBed) stopFleet(t *testing.T, config, name string, timeout time.Duration) (string, int) {
	return runCmd(t, f.ctl.Command(peertest.Python(t), filepath.Join(root(), "peers", "fleet_stop.py"), "--config", filepath.Join(root(), "deploy", config),
		"--connect", "tcp/"+f.routerIP[f.ctl]+":"+zenohPort, "--reason", "e2e", "--timeout", fmt.Sprint(timeout.Seconds()), name))
}

// endSims ends the hosts' simulators, so their truth logs are whole.
func endSims(t *testing.T, hs ...*fleetHost) {
	t.Helper()
	for _, h := range hs {
		h.sim.signal(syscall.SIGINT)
	}
	for _, h := range hs {
		if code := h.sim.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("%s's simulator: exit %d:\n%s", h.name, code, h.sim.stderr)
		}
	}
}

// waitStarted waits until the fleet p said it started its recorders.
func waitStarted(t *testing.T, p *proc) {
	t.Helper()
	waitFor(t, 60*time.Second, "the fleet to start", func() bool {
		select {
		case <-p.done:
			t.Fatalf("the fleet ended before it started:\n%s", p.stderr)
		default:
		}
		return strings.Contains(p.stderr.String(), "fleet: started ")
	})
}

// dataByChannel counts the data records of logs per channel.
func dataByChannel(t *testing.T, paths ...string) map[string]int {
	n := map[string]int{}
	for ch, recs := range dataRecords(t, paths...) {
		n[ch] = len(recs)
	}
	return n
}

// published checks that recs (one channel's records, in any order) are
// the samples the simulator published on ch from the first recorded to
// the last, each once, byte for byte; it returns how many.
func published(t *testing.T, recs []logged, truthLog []truth, ch string) int {
	t.Helper()
	if len(recs) == 0 {
		t.Fatalf("%s: nothing recorded", ch)
	}
	got := make([]truth, len(recs))
	for i, r := range recs {
		got[i] = r.truth
		got[i].Channel = ch
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Seq < got[j].Seq })
	var want []truth
	for _, p := range truthLog {
		if p.Channel == ch && p.Seq >= got[0].Seq && p.Seq <= got[len(got)-1].Seq {
			want = append(want, p)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d records from seq %d to %d, the simulator published %d", ch, len(got), got[0].Seq, got[len(got)-1].Seq, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s record %d: %+v, published %+v", ch, i, got[i], want[i])
		}
	}
	return len(got)
}

// firstSim is the earliest receive stamp of the merged log's records on
// channels under prefix: on the simulator's clock.
func firstSim(t *testing.T, merged, prefix string) int64 {
	t.Helper()
	r, err := logfmt.Open(merged, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ids []uint16
	for _, c := range r.Channels() {
		if strings.HasPrefix(c.Name, prefix) {
			ids = append(ids, c.ID)
		}
	}
	first := int64(-1)
	it := r.Records(logfmt.Filter{Channels: ids, MetaOnly: true})
	for it.Next() {
		if w := it.Record().RecvWallNs; first < 0 || w < first {
			first = w
		}
	}
	if err := it.Err(); err != nil || first < 0 {
		t.Fatalf("%s: no record under %s: %v", merged, prefix, err)
	}
	return first
}

// The "done when": two recorder hosts, each with the bundled
// simulator's streams (its own robot, its own iceoryx2 camera) and a
// recorder started --idle, and a controller host, behind a router with
// access control (deploy/router-acl.json5, each process with its own
// identity). vrlog fleet on the controller's host starts both, records
// until a stop query on vrlog/fleet/NAME/stop (sent by the official
// Python client with the controller's identity), then collects and
// merges: the merged log holds every record each recorder wrote, per
// channel, and each channel is the simulator's published run, seq by
// seq, byte for byte; each host's injected clock offset comes back;
// analyze passes the gates set here; the start skew the fleet reports
// is the merged log's own and below 50 ms.
func TestFleetRecordAcrossHosts(t *testing.T) {
	f := newFleetBed(t)
	f.startRouter(t, aclRouterConfig(t), "f1ee73")
	dir := t.TempDir()
	a, b := f.armed(t, dir, true)
	out := filepath.Join(dir, "run1")
	p := startCmd(t, f.fleet(t, "controller.json5", "hosta", "hostb", "-o", out, "--timeout", "5s", "--patience", "30s"))
	waitStarted(t, p)
	time.Sleep(3 * time.Second)
	answer, code := f.stopFleet(t, "controller.json5", "run1", 60*time.Second)
	if code != 0 || !strings.Contains(answer, `"ok": true`) || strings.Count(answer, `"role": "stopped"`) != 2 {
		t.Fatalf("the stop query: exit %d:\n%s", code, answer)
	}
	if code := p.wait(t, 120*time.Second); code != 0 {
		t.Fatalf("fleet: exit %d:\n%s", code, p.stderr)
	}
	t.Log(p.stderr.String())
	rep := parseFleet(t, p.stderr.String())
	if !strings.Contains(rep.StoppedBy, `a stop query on vrlog/fleet/run1/stop: "e2e"`) || rep.Merged != filepath.Join(out, "session.vrlog") {
		t.Fatalf("stopped by %q, merged %q", rep.StoppedBy, rep.Merged)
	}
	for _, st := range []string{f.state(t, "controller.json5", "hosta"), f.state(t, "controller.json5", "hostb")} {
		if st != "idle" {
			t.Fatalf("a recorder is %q after the fleet, want idle", st)
		}
	}
	endSims(t, a, b)

	// Every record each recorder wrote is in the merged log; each
	// channel is what its simulator published, from the first record to
	// the last.
	var inputs []string
	for _, h := range []*fleetHost{a, b} {
		if role, why, _ := rep.role(h.name); role != "stopped" {
			t.Fatalf("%s: %s (%s)", h.name, role, why)
		}
		got := rep.files(h.name)
		ents, _ := filepath.Glob(filepath.Join(h.dir, "*.vrlog"))
		if len(got) != 1 || len(ents) != 1 || fileSHA(t, got[0]) != fileSHA(t, ents[0]) {
			t.Fatalf("%s: collected %v, the host holds %v", h.name, got, ents)
		}
		inputs = append(inputs, got...)
		truthLog := readTruth(t, h.truth)
		recs := dataRecords(t, got...)
		for _, ch := range []string{"vr/" + h.robot + "/state", "vr/" + h.robot + "/camera/front"} {
			n := published(t, recs[ch], truthLog, ch)
			t.Logf("%s: %s: %d records, each published, none missing", h.name, ch, n)
		}
	}
	want, got := dataByChannel(t, inputs...), dataByChannel(t, rep.Merged)
	if len(want) != 4 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("records per channel: the hosts' files %v, the merged log %v", want, got)
	}

	// Each host's clock offset, and the gates.
	an := analyzeJSON(t, rep.Merged)
	hosts, _ := an["hosts"].([]any)
	if len(hosts) != 2 {
		t.Fatalf("analyze: %d hosts, want 2", len(hosts))
	}
	for _, h := range hosts {
		h := h.(map[string]any)
		ahead := aAhead
		if strings.Contains(h["file"].(string), "/hostb/") {
			ahead = bAhead
		}
		off, unc := h["offset_ms"].(float64), h["uncertainty_ms"].(float64)
		if want := float64((simAhead - ahead).Milliseconds()); off < want-unc-1 || off > want+unc+1 {
			t.Fatalf("%s: offset %.3f ms ± %.3f, injected %.0f", h["file"], off, unc, want)
		}
	}
	gates := []string{"analyze", "-q", "--max-skips", "0", "--max-restarts", "0", "--require-intact", "--max-outage", "500ms",
		"--min-rate", "vr/" + a.robot + "/state=80", "--min-rate", "vr/" + b.robot + "/state=80", rep.Merged}
	if o, code := runCmd(t, exec.Command(vrlogBin, gates...)); code != 0 {
		t.Fatalf("vrlog %s: exit %d:\n%s", strings.Join(gates, " "), code, o)
	}

	// The start skew: reported, the merged log's own, below 50 ms.
	sk := rep.StartSkew
	if sk == nil || len(sk.Firsts) != 2 {
		t.Fatalf("start skew %+v", sk)
	}
	own := firstSim(t, rep.Merged, "vr/"+b.robot+"/") - firstSim(t, rep.Merged, "vr/"+a.robot+"/")
	if own < 0 {
		own = -own
	}
	if d := own - sk.SpreadNs; d < -1000 || d > 1000 || sk.SpreadNs >= 50e6 {
		t.Fatalf("start skew %.3f ms ± %.3f ms reported, %.3f ms in the merged log: want them equal, below 50 ms",
			float64(sk.SpreadNs)/1e6, float64(sk.UncertaintyNs)/1e6, float64(own)/1e6)
	}
	t.Logf("start skew %.3f ms ± %.3f ms", float64(sk.SpreadNs)/1e6, float64(sk.UncertaintyNs)/1e6)
	if !slices.ContainsFunc(strings.Split(p.stderr.String(), "\n"), func(l string) bool { return strings.HasPrefix(l, "fleet: start skew ") }) {
		t.Fatalf("fleet did not say its start skew:\n%s", p.stderr)
	}
}

// A recorder host partitioned (its link down) at the start and during a
// fleet recording, on a router without access control: with
// --require-all the fleet exits 3 at once, naming the host, and nothing
// is recorded; without it the other host records alone, the partitioned
// one said and left out (exit 3 at the end, the other's log collected
// and merged). Cut in the middle of a recording and still cut at its
// stop, the host is said to be silent with what it last held, asked to
// stop again until its link returns, then stopped and collected: every
// record it wrote is in the merged log, its camera (iceoryx2, on its own
// host) without a gap.
func TestFleetRecordPartitions(t *testing.T) {
	f := newFleetBed(t)
	f.startRouter(t, filepath.Join(root(), "deploy", "router.json5"), "f1ee74")
	dir := t.TempDir()
	a, b := f.armed(t, dir, false)
	noFiles := func(h *fleetHost) {
		t.Helper()
		if m, _ := filepath.Glob(filepath.Join(h.dir, "*.vrlog")); len(m) > 0 {
			t.Fatalf("%s holds %v: a recording was started", h.name, m)
		}
	}

	// Host b cut before the start, --require-all.
	f.cut(f.b)
	begun := time.Now()
	o, code := runCmd(t, f.fleet(t, "client.json5", "hosta", "hostb", "-o", filepath.Join(dir, "all"), "--require-all", "--timeout", "2s"))
	if code != 3 || !strings.Contains(o, "fleet: hostb: LEFT OUT: ") || !strings.Contains(o, "a partition") || !strings.Contains(o, "--require-all: nothing was recorded") ||
		strings.Contains(o, "hosta: LEFT OUT") || time.Since(begun) > 20*time.Second {
		t.Fatalf("--require-all with host b cut: exit %d after %v:\n%s", code, time.Since(begun), o)
	}
	noFiles(a)
	if st := f.state(t, "client.json5", "hosta"); st != "idle" {
		t.Fatalf("host a is %q after a refused --require-all", st)
	}

	// The same without --require-all: host a records alone; host b,
	// healed meanwhile, is idle and not part of it.
	p := startCmd(t, f.fleet(t, "client.json5", "hosta", "hostb", "-o", filepath.Join(dir, "alone"), "--duration", "3s", "--timeout", "2s"))
	waitStarted(t, p)
	f.heal(f.b)
	code = p.wait(t, 120*time.Second)
	rep := parseFleet(t, p.stderr.String())
	if role, _, silent := rep.role("hostb"); code != 3 || role != "left-out" || !silent || len(rep.files("hosta")) != 1 || rep.Merged == "" ||
		!strings.Contains(p.stderr.String(), "fleet: hostb: LEFT OUT: ") || !strings.Contains(p.stderr.String(), "left out or not stopped: hostb (") {
		t.Fatalf("host b cut at the start: exit %d, hostb %q:\n%s", code, role, p.stderr)
	}
	noFiles(b)

	// The same -o again: refused before anything is recorded, naming what
	// is there; the earlier recording's merged log and files are kept.
	alone := filepath.Join(dir, "alone")
	ino := inode(t, filepath.Join(alone, "session.vrlog"))
	o, code = runCmd(t, f.fleet(t, "client.json5", "hosta", "hostb", "-o", alone, "--duration", "3s", "--timeout", "2s"))
	if ents, _ := os.ReadDir(filepath.Join(alone, "hosta")); code != 2 || !strings.Contains(o, "holds an earlier recording's output already ("+filepath.Join(alone, "session.vrlog")) ||
		!strings.Contains(o, "--force") || !strings.Contains(o, "nothing was recorded") || inode(t, filepath.Join(alone, "session.vrlog")) != ino || len(ents) != 1 {
		t.Fatalf("fleet into the same -o again: exit %d, %d files in hosta/:\n%s", code, len(ents), o)
	}

	// Host b cut during the recording and at its stop; back 2.5 s later.
	waitFor(t, 60*time.Second, "host b back", func() bool { return f.state(t, "client.json5", "hostb") == "idle" })
	p = startCmd(t, f.fleet(t, "client.json5", "hosta", "hostb", "-o", filepath.Join(dir, "cut"), "--duration", "4s", "--timeout", "2s", "--patience", "60s"))
	waitStarted(t, p)
	time.Sleep(time.Second)
	f.cut(f.b)
	waitFor(t, 30*time.Second, "the stop", func() bool { return strings.Contains(p.stderr.String(), "no answer to the stop yet") })
	time.Sleep(2500 * time.Millisecond)
	f.heal(f.b)
	if code := p.wait(t, 120*time.Second); code != 0 {
		t.Fatalf("host b cut during the recording: exit %d:\n%s", code, p.stderr)
	}
	t.Log(p.stderr.String())
	out := p.stderr.String()
	if !strings.Contains(out, "fleet: hostb: NO ANSWER to its status for ") || !strings.Contains(out, "it last said: recording") {
		t.Fatalf("the fleet did not say host b went silent, and what it held:\n%s", out)
	}
	rep = parseFleet(t, out)
	endSims(t, a, b)
	var inputs []string
	for _, h := range []*fleetHost{a, b} {
		got := rep.files(h.name)
		ents, _ := filepath.Glob(filepath.Join(h.dir, "run-2.vrlog")) // host a's second recording
		if h == b {
			ents, _ = filepath.Glob(filepath.Join(h.dir, "run.vrlog")) // host b's first
		}
		if role, why, _ := rep.role(h.name); role != "stopped" || len(got) != 1 || len(ents) != 1 || fileSHA(t, got[0]) != fileSHA(t, ents[0]) {
			t.Fatalf("%s: %s (%s): collected %v, the host holds %v", h.name, role, why, got, ents)
		}
		inputs = append(inputs, got...)
	}
	want, got := dataByChannel(t, inputs...), dataByChannel(t, rep.Merged)
	if len(want) != 4 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("records per channel: the hosts' files %v, the merged log %v", want, got)
	}
	cam := "vr/" + b.robot + "/camera/front"
	n := published(t, dataRecords(t, rep.files("hostb")...)[cam], readTruth(t, b.truth), cam)
	t.Logf("host b's camera across the partition: %d frames, none missing; states %d", n, got["vr/"+b.robot+"/state"])
}

// Access control of the recorders' verbs and of a fleet recording
// (deploy/router-acl.json5): a client without credentials is refused by
// the router when it connects; another identity the router lets in (the
// simulators', vrlog-client) gets no answer from a recorder nor from a
// fleet, and is told why: it can neither start, stop, pause nor split a
// recorder, run a fleet recording nor stop the controller's. The
// recorders' state, as the controller's status sees it, is what the
// controller made it. The controller's fleet, ended with Ctrl-C, records,
// collects and merges both hosts.
func TestFleetAccessControl(t *testing.T) {
	f := newFleetBed(t)
	f.startRouter(t, aclRouterConfig(t), "acc2")
	dir := t.TempDir()
	a, b := f.armed(t, dir, true)
	rec := func(config, verb string) *exec.Cmd {
		return f.ctl.Command(vrlogBin, append([]string{"rec", verb, "hosta", "--timeout", "3s"}, f.zenoh(f.ctl, config, zenohPort)...)...)
	}
	verbs := []string{"start", "stop", "pause", "split"}
	refused := func(who string, cmds []*exec.Cmd, want ...string) {
		t.Helper()
		ps := make([]*proc, len(cmds))
		for i, c := range cmds {
			ps[i] = startCmd(t, c)
		}
		for i, p := range ps {
			code := p.wait(t, 60*time.Second)
			out := p.stderr.String()
			ok := code == 3
			for _, w := range want {
				ok = ok && strings.Contains(out, w)
			}
			if !ok {
				t.Fatalf("%s: %s: exit %d:\n%s", who, strings.Join(cmds[i].Args[1:3], " "), code, out)
			}
		}
	}

	// No credentials: the router refuses the client.
	var cmds []*exec.Cmd
	for _, v := range verbs {
		cmds = append(cmds, rec("client.json5", v))
	}
	refused("no credentials", append(cmds, f.fleet(t, "client.json5", "hosta", "-o", filepath.Join(dir, "anon"))), "Unable to connect", "user and password")
	// Another identity: its requests are dropped on the router.
	cmds = nil
	for _, v := range verbs {
		cmds = append(cmds, rec("authclient.json5", v))
	}
	refused("another identity", append(cmds, f.fleet(t, "authclient.json5", "hosta", "-o", filepath.Join(dir, "other"), "--timeout", "3s")),
		"hosta is on the network", "access control")
	if st, n, _ := f.status(t, "controller.json5", "hosta"); st != "idle" || n != 0 {
		t.Fatalf("host a after the refused requests: %s, %d files", st, n)
	}

	// The controller's fleet; the other identity can neither stop, pause
	// nor split its recorders, nor stop it.
	p := startCmd(t, f.fleet(t, "controller.json5", "hosta", "hostb", "-o", filepath.Join(dir, "ctl"), "--timeout", "5s"))
	waitStarted(t, p)
	cmds = nil
	for _, v := range verbs[1:] {
		cmds = append(cmds, rec("authclient.json5", v))
	}
	stop := f.ctl.Command(peertest.Python(t), filepath.Join(root(), "peers", "fleet_stop.py"), "--config", filepath.Join(root(), "deploy", "authclient.json5"),
		"--connect", "tcp/"+f.routerIP[f.ctl]+":"+zenohPort, "--timeout", "3", "ctl")
	refused("another identity, while recording", cmds, "hosta is on the network", "access control")
	refused("another identity's stop query", []*exec.Cmd{stop}, "no fleet recording answered vrlog/fleet/ctl/stop")
	if st, n, _ := f.status(t, "controller.json5", "hosta"); st != "recording" || n != 1 {
		t.Fatalf("host a while the controller records: %s, %d files: another identity changed it", st, n)
	}
	p.signal(syscall.SIGINT)
	if code := p.wait(t, 120*time.Second); code != 0 {
		t.Fatalf("the controller's fleet, ended with Ctrl-C: exit %d:\n%s", code, p.stderr)
	}
	rep := parseFleet(t, p.stderr.String())
	for _, h := range []*fleetHost{a, b} {
		ents, _ := filepath.Glob(filepath.Join(h.dir, "*.vrlog"))
		if role, why, _ := rep.role(h.name); role != "stopped" || len(ents) != 1 || len(rep.files(h.name)) != 1 {
			t.Fatalf("%s: %s (%s); the host holds %v", h.name, role, why, ents)
		}
	}
	if !strings.Contains(rep.StoppedBy, "interrupted") || rep.Merged == "" {
		t.Fatalf("stopped by %q, merged %q", rep.StoppedBy, rep.Merged)
	}
}
