package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// controlBed is a simulator and recorders on one zenoh port: the
// recorders listen, the simulator and the controllers connect.
type controlBed struct {
	dir, port, robot string
}

func newControlBed(t *testing.T) *controlBed {
	return &controlBed{dir: t.TempDir(), port: strconv.Itoa(freePort(t)), robot: robot(t)}
}

// z is the zenoh flags of a controller or the simulator.
func (b *controlBed) z() string { return " --no-multicast --connect tcp/127.0.0.1:" + b.port }

// recorder starts a recorder of the robot's streams: the first listens,
// the others connect to it.
func (b *controlBed) recorder(t *testing.T, listen bool, args ...string) *proc {
	ep := []string{"--connect", "tcp/127.0.0.1:" + b.port}
	if listen {
		ep = []string{"--listen", "tcp/127.0.0.1:" + b.port}
	}
	return start(t, vrlogBin, append(append([]string{"record", "--no-multicast", "-q", "-k", "vr/" + b.robot + "/**", "-s", "vr/" + b.robot + "/camera/front",
		"--time-service", "vr/" + b.robot + "/time"}, ep...), args...)...)
}

// sim starts the simulator for d, its truth logged.
func (b *controlBed) sim(t *testing.T, d string, extra ...string) *proc {
	return start(t, vrlogBin, append([]string{"sim", "-q", "--connect", "tcp/127.0.0.1:" + b.port, "--no-multicast", "--robot", b.robot,
		"--width", "160", "--height", "120", "--state-hz", "100", "--duration", d, "--log", filepath.Join(b.dir, "truth.jsonl")}, extra...)...)
}

// rec runs vrlog rec ARGS --json and returns the answers.
func (b *controlBed) rec(t *testing.T, args string) (answers []struct {
	Name  string         `json:"name"`
	Reply map[string]any `json:"reply"`
	Error string         `json:"error"`
}, r result) {
	t.Helper()
	r = shell(t, b.dir, "vrlog rec "+args+" --json"+b.z())
	if err := json.Unmarshal([]byte(r.stdout), &answers); err != nil {
		t.Fatalf("vrlog rec %s: %v\n%s", args, err, r)
	}
	return answers, r
}

// ok checks that every answer of vrlog rec ARGS is a success and returns
// the first reply.
func (b *controlBed) ok(t *testing.T, args string) map[string]any {
	t.Helper()
	answers, r := b.rec(t, args)
	if r.code != 0 || len(answers) == 0 {
		t.Fatalf("vrlog rec %s: %s", args, r)
	}
	for _, a := range answers {
		if a.Reply == nil || a.Reply["ok"] != true {
			t.Fatalf("vrlog rec %s: %s answered %+v %s", args, a.Name, a.Reply, a.Error)
		}
	}
	return answers[0].Reply
}

// waitState waits until recorder name reports state.
func (b *controlBed) waitState(t *testing.T, name, state string) {
	t.Helper()
	waitFor(t, 20*time.Second, name+" "+state, func() bool {
		answers, _ := b.rec(t, "status "+name+" --timeout 2s")
		return len(answers) == 1 && answers[0].Reply != nil && answers[0].Reply["state"] == state
	})
}

// dataRecords reads the data records of logs (not the recorder's own
// channels), by channel.
func dataRecords(t *testing.T, paths ...string) map[string][]logged {
	t.Helper()
	out := map[string][]logged{}
	for _, p := range paths {
		recs, r := readLog(t, p)
		internal := map[string]bool{}
		for _, c := range r.Channels() {
			internal[c.Name] = c.Transport == logfmt.TransportInternal
		}
		for _, l := range recs {
			if !internal[l.channel] {
				out[l.channel] = append(out[l.channel], l)
			}
		}
	}
	return out
}

// Every control verb against a live recorder fed by the bundled
// simulator: an idle recorder started, split three times and stopped
// holds, across its files, every record of an unsplit recording of the
// same run, byte for byte, each once; merged, its files equal that
// recording; analyzed together they show no skip.
func TestControlSplitEqualsUnsplit(t *testing.T) {
	b := newControlBed(t)
	whole := b.recorder(t, true, "-o", filepath.Join(b.dir, "whole.vrlog"))
	ctl := b.recorder(t, false, "-o", filepath.Join(b.dir, "ctl.vrlog"), "--name", b.robot, "--idle")
	b.waitState(t, b.robot, "idle")
	if r := shell(t, b.dir, "vrlog recorders"+b.z()); r.code != 0 || !strings.Contains(r.stdout, b.robot) || !strings.Contains(r.stdout, "idle") {
		t.Fatalf("recorders: %s", r)
	}
	started := b.ok(t, "start "+b.robot+" --note split-test")
	if !strings.HasSuffix(started["file"].(string), "/ctl.vrlog") || started["state"] != "recording" {
		t.Fatalf("start: %v", started)
	}
	sim := b.sim(t, "6s")
	var finished []string
	for i := 1; i <= 3; i++ {
		time.Sleep(1200 * time.Millisecond)
		rep := b.ok(t, "split "+b.robot)
		f := rep["finished"].(map[string]any)
		finished = append(finished, f["path"].(string))
		if want := fmt.Sprintf("ctl_%03d.vrlog", i); !strings.HasSuffix(rep["file"].(string), want) {
			t.Fatalf("split %d goes on in %v, want %s", i, rep["file"], want)
		}
	}
	if code := sim.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sim exit %d: %s", code, sim.stderr)
	}
	time.Sleep(500 * time.Millisecond) // the last samples reach both recorders
	stopped := b.ok(t, "stop "+b.robot)
	last := stopped["finished"].(map[string]any)
	finished = append(finished, last["path"].(string))
	if stopped["state"] != "idle" || last["records"].(float64) == 0 {
		t.Fatalf("stop: %v", stopped)
	}
	if _, r := b.rec(t, "stop "+b.robot); r.code != 2 || !strings.Contains(r.stdout, "out-of-state") {
		t.Fatalf("a second stop: %s", r)
	}
	whole.signal(syscall.SIGINT)
	if code := whole.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("whole: exit %d: %s", code, whole.stderr)
	}
	ctl.signal(syscall.SIGINT)
	if code := ctl.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("ctl: exit %d: %s", code, ctl.stderr)
	}

	published := readTruth(t, filepath.Join(b.dir, "truth.jsonl"))
	want := dataRecords(t, filepath.Join(b.dir, "whole.vrlog"))
	got := dataRecords(t, finished...)
	for _, ch := range []string{"vr/" + b.robot + "/state", "vr/" + b.robot + "/camera/front"} {
		if n := contains(t, want[ch], published, ch); n == 0 {
			t.Fatalf("%s: the unsplit recording holds none of it", ch)
		}
		if !sameRecords(want[ch], got[ch]) {
			t.Errorf("%s: the split files hold %d records, the unsplit recording %d, or their bytes or seqs differ", ch, len(got[ch]), len(want[ch]))
		}
	}
	merged := filepath.Join(b.dir, "merged.vrlog")
	if r := shell(t, b.dir, "vrlog merge -q "+strings.Join(finished, " ")+" -o "+merged); r.code != 0 {
		t.Fatalf("merge: %s", r)
	}
	if m := dataRecords(t, merged); !sameRecords(m["vr/"+b.robot+"/state"], want["vr/"+b.robot+"/state"]) || !sameRecords(m["vr/"+b.robot+"/camera/front"], want["vr/"+b.robot+"/camera/front"]) {
		t.Errorf("the merged split files differ from the unsplit recording")
	}
	rep := analyzeJSON(t, finished...)
	for _, ch := range []string{"vr/" + b.robot + "/state", "vr/" + b.robot + "/camera/front"} {
		c := channelReport(t, rep, ch)
		if c["skipped"].(float64) != 0 || c["restart_count"].(float64) != 0 || len(interiorOutages(c)) != 0 {
			t.Errorf("%s analyzed across the splits: %v skipped, %v restarts, outages %v", ch, c["skipped"], c["restart_count"], interiorOutages(c))
		}
	}
}

// sameRecords reports whether a and b hold the same records (seq, stamp,
// bytes), each once, in any order.
func sameRecords(a, b []logged) bool {
	key := func(l logged) string { return fmt.Sprint(l.Seq, l.TNs, l.HeaderSHA256, l.PayloadSHA256) }
	ka, kb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ka[i] = key(a[i])
	}
	for i := range b {
		kb[i] = key(b[i])
	}
	sort.Strings(ka)
	sort.Strings(kb)
	return len(a) > 0 && slices.Equal(ka, kb)
}

// A paused recording analyzes as one: the pause is not captured, with no
// skip or outage from it, and the file says what was received meanwhile.
func TestControlPauseNotCaptured(t *testing.T) {
	b := newControlBed(t)
	rec := b.recorder(t, true, "-o", filepath.Join(b.dir, "p.vrlog"), "--name", b.robot)
	b.waitState(t, b.robot, "recording")
	sim := b.sim(t, "5s")
	time.Sleep(1500 * time.Millisecond)
	pausing := time.Now()
	if rep := b.ok(t, "pause "+b.robot); rep["state"] != "paused" {
		t.Fatalf("pause: %v", rep)
	}
	if _, r := b.rec(t, "pause "+b.robot); r.code != 2 || !strings.Contains(r.stdout, "out-of-state") {
		t.Fatalf("pause while paused: %s", r)
	}
	if _, r := b.rec(t, "split "+b.robot); r.code != 2 || !strings.Contains(r.stdout, "resume first") {
		t.Fatalf("split while paused: %s", r)
	}
	time.Sleep(1500 * time.Millisecond)
	if rep := b.ok(t, "resume "+b.robot); rep["state"] != "recording" {
		t.Fatalf("resume: %v", rep)
	}
	paused := time.Since(pausing).Seconds() // at most: the commands take a while under load
	if code := sim.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sim exit %d", code)
	}
	rec.signal(syscall.SIGINT)
	if code := rec.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("record exit %d: %s", code, rec.stderr)
	}
	rep := analyzeJSON(t, filepath.Join(b.dir, "p.vrlog"))
	gaps, _ := rep["not_captured"].([]any)
	if len(gaps) != 1 {
		t.Fatalf("not captured %v, want the pause", rep["not_captured"])
	}
	g := gaps[0].(map[string]any)
	if g["why"] != "paused" || g["gap_s"].(float64) < 1.4 || g["gap_s"].(float64) > paused+0.2 || g["unwritten"].(float64) < 100 {
		t.Errorf("the pause: %v, want 1.5 to %.3f s, paused, with the records received meanwhile", g, paused)
	}
	for _, ch := range []string{"vr/" + b.robot + "/state", "vr/" + b.robot + "/camera/front"} {
		c := channelReport(t, rep, ch)
		if c["skipped"].(float64) != 0 || len(interiorOutages(c)) != 0 {
			t.Errorf("%s: %v skipped, outages %v: the pause counted", ch, c["skipped"], interiorOutages(c))
		}
	}
}

// vrlog recorders sees every recorder on the network, one line (and one
// JSON status) each.
func TestRecordersListsThree(t *testing.T) {
	b := newControlBed(t)
	names := []string{b.robot + "-a", b.robot + "-b", b.robot + "-c"}
	var recs []*proc
	for i, n := range names {
		recs = append(recs, b.recorder(t, i == 0, "-o", filepath.Join(b.dir, n+".vrlog"), "--name", n, "--idle"))
	}
	var listed []string
	waitFor(t, 20*time.Second, "three recorders", func() bool {
		r := shell(t, b.dir, "vrlog recorders --json"+b.z())
		var st []map[string]any
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
			return false
		}
		listed = listed[:0]
		for _, s := range st {
			if s["state"] == "idle" && s["schema"] == "vrlog.recorder.status/1" {
				listed = append(listed, s["name"].(string))
			}
		}
		return len(listed) == 3
	})
	if !slices.Equal(listed, names) {
		t.Fatalf("listed %v, want %v", listed, names)
	}
	// A fourth recorder with a name taken is refused before it records:
	// two would each take some of the requests.
	twin := b.recorder(t, false, "-o", filepath.Join(b.dir, "twin.vrlog"), "--name", names[0], "--idle")
	if code := twin.wait(t, 30*time.Second); code != 2 || !strings.Contains(twin.stderr.String(), "a recorder named \""+names[0]+"\" already answers") {
		t.Fatalf("a second recorder named %s: exit %d\n%s", names[0], code, twin.stderr)
	}
	if _, err := os.Stat(filepath.Join(b.dir, "twin.vrlog")); err == nil {
		t.Fatal("the refused recorder left a file")
	}
	// Not quiet, it never says it is armed (it said so before the refusal).
	twin = start(t, vrlogBin, "record", "--no-multicast", "--connect", "tcp/127.0.0.1:"+b.port, "-k", "vr/"+b.robot+"/**",
		"-o", filepath.Join(b.dir, "twin.vrlog"), "--name", names[0], "--idle")
	if code := twin.wait(t, 30*time.Second); code != 2 || strings.Contains(twin.stderr.String(), "armed") ||
		!strings.Contains(twin.stderr.String(), "a recorder named \""+names[0]+"\" already answers") {
		t.Fatalf("a second recorder named %s, not quiet: exit %d\n%s", names[0], code, twin.stderr)
	}
	r := shell(t, b.dir, "vrlog recorders"+b.z())
	for _, n := range names {
		if !strings.Contains(r.stdout, n) {
			t.Errorf("the table lacks %s:\n%s", n, r.stdout)
		}
	}
	// One of three is gone: the others' outcomes are printed, and it is
	// said; one that answers too late is said too (exit 3).
	recs[2].cmd.Process.Kill()
	recs[2].wait(t, 10*time.Second)
	answers, r := b.rec(t, "start "+strings.Join(names, " ")+" --timeout 5s")
	if r.code != 2 || len(answers) != 3 || answers[0].Reply["ok"] != true || answers[1].Reply["ok"] != true ||
		!strings.Contains(answers[2].Error, "no recorder named") || !strings.Contains(answers[2].Error, names[0]) {
		t.Fatalf("start of three, one gone: %s", r)
	}
	slow := b.recorder(t, false, "-o", filepath.Join(b.dir, "slow.vrlog"), "--name", b.robot+"-slow", "--snapshot", "5s", "--after", "20s")
	b.waitState(t, b.robot+"-slow", "recording")
	answers, r = b.rec(t, "snapshot "+b.robot+"-slow --timeout 2s")
	if r.code != 3 || len(answers) != 1 || !strings.Contains(answers[0].Error, "no answer") {
		t.Fatalf("a snapshot that takes longer than the timeout: %s", r)
	}
	slow.signal(syscall.SIGINT)
}

// Malformed, unknown, hostile and out-of-state requests get a clear
// refusal and change nothing; two controllers racing leave one state and
// are both told.
func TestControlRefusesBadRequests(t *testing.T) {
	b := newControlBed(t)
	b.recorder(t, true, "-o", filepath.Join(b.dir, "r.vrlog"), "--name", b.robot, "--idle")
	b.waitState(t, b.robot, "idle")
	sess, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{"tcp/127.0.0.1:" + b.port}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	query := func(key string, payload []byte) map[string]any {
		t.Helper()
		var reps []zenoh.GetReply
		waitFor(t, 10*time.Second, "an answer on "+key, func() bool {
			reps, err = sess.Get(context.Background(), key, payload, 3*time.Second)
			return err == nil && len(reps) > 0
		})
		var m map[string]any
		if err := json.Unmarshal(reps[0].Payload, &m); err != nil {
			t.Fatalf("%s: not JSON: %q", key, reps[0].Payload)
		}
		return m
	}
	key := func(v string) string { return "vrlog/record/" + b.robot + "/" + v }
	for _, tc := range []struct {
		name, key, payload, code string
	}{
		{"malformed JSON", key("start"), `{"file": `, "bad-request"},
		{"unknown field", key("start"), `{"path": "/etc/passwd"}`, "bad-request"},
		{"a file for stop", key("stop"), `{"file": "x"}`, "bad-request"},
		{"trailing data", key("start"), `{} {}`, "bad-request"},
		{"oversized", key("start"), `{"note": "` + strings.Repeat("x", 20000) + `"}`, "bad-request"},
		{"dot dot", key("start"), `{"file": "../escape"}`, "bad-name"},
		{"absolute", key("start"), `{"file": "/tmp/escape.vrlog"}`, "bad-name"},
		{"hidden", key("start"), `{"file": ".hidden"}`, "bad-name"},
		{"unknown field in the name", key("start"), `{"file": "run-{host}"}`, "bad-name"},
		{"stop when idle", key("stop"), ``, "out-of-state"},
		{"resume when idle", key("resume"), ``, "out-of-state"},
		{"snapshot in file mode", key("snapshot"), ``, "wrong-mode"},
		{"start by a ** query", "vrlog/record/**/start", ``, "bad-request"},
	} {
		m := query(tc.key, []byte(tc.payload))
		if m["ok"] != false || m["code"] != tc.code || m["error"] == "" || m["state"] != "idle" {
			t.Errorf("%s: answered %v, want refused %s, still idle", tc.name, m, tc.code)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(b.dir), "escape*")); len(left) > 0 {
		t.Fatalf("a file outside the recorder's directory: %v", left)
	}
	// Two controllers start at once: one does, the other is told it is recording.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i] = shell(t, b.dir, "vrlog rec start "+b.robot+b.z()).code }()
	}
	wg.Wait()
	if slices.Sort(codes); codes[0] != 0 || codes[1] != 2 {
		t.Fatalf("two starts at once: exit codes %v, want one 0 and one 2", codes)
	}
	if m := query(key("status"), nil); m["state"] != "recording" {
		t.Fatalf("after the race: %v", m)
	}
	if m := query(key("start"), nil); m["code"] != "out-of-state" || !strings.Contains(m["error"].(string), "recording") {
		t.Fatalf("start while recording: %v", m)
	}
	if m := query(key("stop"), nil); m["ok"] != true {
		t.Fatalf("stop: %v", m)
	}
}

// A recorder killed with kill -9 right after a split: the finished file
// is whole, the current one loses at most the flush interval and recover
// restores it; a query during a recorder's shutdown is answered or
// refused within its timeout, never hangs.
func TestControlKill9AfterSplitAndShutdown(t *testing.T) {
	b := newControlBed(t)
	rec := b.recorder(t, true, "-o", filepath.Join(b.dir, "k.vrlog"), "--name", b.robot)
	b.waitState(t, b.robot, "recording")
	sim := b.sim(t, "20s")
	time.Sleep(2 * time.Second)
	rep := b.ok(t, "split "+b.robot)
	first := rep["finished"].(map[string]any)["path"].(string)
	time.Sleep(2500 * time.Millisecond)
	rec.cmd.Process.Kill()
	rec.wait(t, 10*time.Second)
	if r := shell(t, b.dir, "vrlog verify -q "+first); r.code != 0 {
		t.Fatalf("the file the split finished: %s", r)
	}
	second := filepath.Join(b.dir, "k_001.vrlog")
	fixed := filepath.Join(b.dir, "fixed.vrlog")
	if r := shell(t, b.dir, "vrlog recover -q "+second+" -o "+fixed); r.code != 0 {
		t.Fatalf("recover: %s", r)
	}
	got := dataRecords(t, fixed)["vr/"+b.robot+"/state"]
	if len(got) < 150 { // 2.5 s at 100 Hz, less the last flush interval
		t.Fatalf("recovered %d states of about 250", len(got))
	}
	sim.signal(syscall.SIGINT)

	// Shutdown: SIGINT, and control requests at once.
	rec2 := b.recorder(t, true, "-o", filepath.Join(b.dir, "s.vrlog"), "--name", b.robot+"-s", "--drain-timeout", "2s")
	b.waitState(t, b.robot+"-s", "recording")
	rec2.signal(syscall.SIGINT)
	begun := time.Now()
	r := shell(t, b.dir, "vrlog rec split "+b.robot+"-s --timeout 5s"+b.z())
	if took := time.Since(begun); took > 8*time.Second || (r.code != 0 && r.code != 2 && r.code != 3) {
		t.Fatalf("a split during shutdown took %s: %s", took, r)
	}
	rec2.wait(t, 30*time.Second)
}
