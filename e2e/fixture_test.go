package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/controller"
	"github.com/vrlog/vrlog/logfmt"
)

// Replay as a deterministic test fixture for a controller under test
// (docs/replay.md), the binaries as a CI job runs them: vrlog replay and
// vrlog controller in processes of their own, over zenoh on loopback.

// busyLoops loads every core with a shell loop that never sleeps (a
// stress-like load), until the test ends; timeout ends a loop that
// outlives a test binary killed before its cleanups ran. (Pdeathsig
// cannot do it: Go ends the OS thread a child was started from whenever
// a goroutine locked to it exits, as internal/netem's namespace calls do.)
func busyLoops(t *testing.T) {
	t.Helper()
	for range runtime.NumCPU() {
		c := exec.Command("timeout", "600", "sh", "-c", "while :; do :; done")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // killed as a group: timeout and its loop
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() })
	}
}

// controllerRun is one replay of the sample into the example controller.
type controllerRun struct {
	commands []controller.Command
	triggers []uint64 // the released states' seq, in release order
	replay   map[string]any
	stderr   string
}

// replayIntoController replays 4 s of the sample's states at 4× (a state
// every 10 ms) into a controller that takes 15 ms per state, capturing its
// commands.
func replayIntoController(t *testing.T, r, dir, name string, lockstep bool) controllerRun {
	t.Helper()
	ep := "tcp/127.0.0.1:" + strconv.Itoa(freePort(t))
	state, cmd := "vr/"+r+"/state", "vr/"+r+"/cmd"
	out := filepath.Join(dir, name+".vrlog")
	args := []string{"replay", filepath.Join(root(), "testdata", "sample.vrlog"), "--channel", "vr/r1/state", "--remap", "vr/r1/state=" + state,
		"--start", "1", "--duration", "4", "--rate", "4", "--listen", ep, "--no-multicast", "--quiet", "--json",
		"--wait-for-subscribers", "1", "--wait-timeout", "60s", "--capture", cmd, "-o", out}
	if lockstep {
		args = append(args, "--lockstep", cmd, "--lockstep-timeout", "5s")
	}
	rep := exec.Command(vrlogBin, args...)
	var stdout strings.Builder
	rep.Stdout = &stdout
	var stderr strings.Builder
	rep.Stderr = &stderr
	if err := rep.Start(); err != nil {
		t.Fatal(err)
	}
	ctl := start(t, vrlogBin, "controller", "--state", state, "--command", cmd, "--delay", "15ms", "--connect", ep, "--no-multicast")
	done := make(chan error, 1)
	go func() { done <- rep.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("replay %s: %v\n%s\ncontroller: %s", name, err, stderr.String(), ctl.stderr)
		}
	case <-time.After(3 * time.Minute):
		rep.Process.Kill()
		t.Fatalf("replay %s did not finish:\n%s", name, stderr.String())
	}
	ctl.signal(syscall.SIGINT)
	if code := ctl.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("controller exit %d:\n%s", code, ctl.stderr)
	}
	run := controllerRun{stderr: ctl.stderr.String()}
	if err := json.Unmarshal([]byte(stdout.String()), &run.replay); err != nil {
		t.Fatalf("replay JSON: %v\n%s", err, stdout.String())
	}
	lr, err := logfmt.Open(out, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	names := map[uint16]string{}
	for _, c := range lr.Channels() {
		names[c.ID] = c.Name
	}
	it := lr.Records(logfmt.Filter{})
	for it.Next() {
		rec := it.Record()
		switch names[rec.Channel] {
		case state:
			run.triggers = append(run.triggers, rec.Seq)
		case cmd:
			c, err := controller.DecodeCommand(rec.Payload)
			if err != nil {
				t.Fatal(err)
			}
			run.commands = append(run.commands, c)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return run
}

// Lockstep: two runs of the same log into the deterministic controller,
// with every core loaded by busy loops, give identical commands (the same
// payloads in the same order, each answering the same state); the same
// replay without lockstep outruns the controller, which then answers only
// some states.
func TestLockstepDeterministicUnderLoad(t *testing.T) {
	r, dir := robot(t), t.TempDir()
	busyLoops(t)
	a := replayIntoController(t, r, dir, "a", true)
	b := replayIntoController(t, r, dir, "b", true)
	if len(a.triggers) < 90 {
		t.Fatalf("released %d states", len(a.triggers))
	}
	for _, run := range []controllerRun{a, b} {
		ls := run.replay["lockstep"].(map[string]any)
		if len(run.commands) != len(run.triggers) || ls["missed"].(float64) != 0 || ls["answered"].(float64) != float64(len(run.triggers)) {
			t.Fatalf("lockstep: %d commands for %d states, %v\ncontroller: %s", len(run.commands), len(run.triggers), ls, run.stderr)
		}
		for i, c := range run.commands {
			if c.StateSeq != run.triggers[i] || c.Seq != uint64(i) {
				t.Fatalf("command %d answers state %d, the %d-th released state is %d", i, c.StateSeq, i, run.triggers[i])
			}
		}
	}
	if len(a.commands) != len(b.commands) {
		t.Fatalf("%d commands, then %d", len(a.commands), len(b.commands))
	}
	for i := range a.commands {
		if a.commands[i] != b.commands[i] {
			t.Fatalf("command %d differs between the runs: %+v, %+v", i, a.commands[i], b.commands[i])
		}
	}
	t.Logf("lockstep under load: %d identical commands in both runs", len(a.commands))
	open := replayIntoController(t, r, dir, "open", false)
	t.Logf("open loop under load: %d commands for %d states (%s)", len(open.commands), len(open.triggers), strings.TrimSpace(open.stderr))
	if len(open.commands) >= len(open.triggers) {
		t.Fatalf("open loop: the controller (15 ms a state) answered all %d states 10 ms apart", len(open.triggers))
	}
}

// vrlog ctl against a replay started paused off a terminal: the commands
// move it as asked and say where it is; what it refuses, a bad command and
// a replay that does not exist are errors with their exit codes.
func TestCtlVerb(t *testing.T) {
	r := robot(t)
	port := strconv.Itoa(freePort(t))
	name := strings.ReplaceAll(nameOf(t), "_", "")
	rep := start(t, vrlogBin, "replay", filepath.Join(root(), "testdata", "sample.vrlog"), "--channel", "vr/r1/state", "--remap",
		"vr/r1/state=vr/"+r+"/state", "--duration", "3", "--start-paused", "--control", name, "--listen", "tcp/127.0.0.1:"+port, "--no-multicast", "--json")
	ctl := func(args ...string) result {
		return shell(t, t.TempDir(), "vrlog ctl --replay "+name+" --connect tcp/127.0.0.1:"+port+" --no-multicast "+strings.Join(args, " "))
	}
	var st struct {
		State      string `json:"state"`
		Sent       int    `json:"sent"`
		PositionNs int64  `json:"position_ns"`
		Rate       float64
	}
	res := ctl("step 3 --json")
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &st) != nil || st.Sent != 3 || st.State != "paused" {
		t.Fatalf("step 3: %s", res)
	}
	if res = ctl("seek 2 --json"); res.code != 0 || json.Unmarshal([]byte(res.stdout), &st) != nil || st.PositionNs != 2e9 {
		t.Fatalf("seek 2: %s", res)
	}
	if res = ctl("status"); res.code != 0 || !strings.Contains(res.stdout, name+": paused at 2.000 s of 3.000 s") {
		t.Fatalf("status: %s", res)
	}
	if res = ctl("seek 99"); res.code != 2 || !strings.Contains(res.stderr, "outside the window") {
		t.Fatalf("seek outside the window: %s", res)
	}
	if res = ctl("jump"); res.code != 2 {
		t.Fatalf("bad command: %s", res)
	}
	res = shell(t, t.TempDir(), "vrlog ctl --replay nosuch"+name+" status --timeout 1s --connect tcp/127.0.0.1:"+port+" --no-multicast")
	if res.code != 3 || !strings.Contains(res.stderr, "no replay answered") {
		t.Fatalf("no such replay: %s", res)
	}
	if res = ctl("rate 4"); res.code != 0 || !strings.Contains(res.stdout, "rate 4×") {
		t.Fatalf("rate: %s", res)
	}
	if res = ctl("stop"); res.code != 0 {
		t.Fatalf("stop: %s", res)
	}
	if code := rep.wait(t, 30*time.Second); code != 0 { // stop is an end asked for, as q
		t.Fatalf("replay exit %d after stop:\n%s", code, rep.stderr)
	}
	if !strings.Contains(rep.stderr.String(), fmt.Sprintf("paused; resume with `vrlog ctl --replay %s resume`", name)) {
		t.Fatalf("the paused replay does not say how to resume it:\n%s", rep.stderr)
	}
}

// A command whose answer comes after ctl's --timeout is carried out once:
// a step sent while the replay waits for its subscribers is answered only
// when it starts, and ctl gives up (exit 3) without sending it again.
func TestCtlSendsOnce(t *testing.T) {
	r := robot(t)
	port := strconv.Itoa(freePort(t))
	ep := "tcp/127.0.0.1:" + port
	name := strings.ReplaceAll(nameOf(t), "_", "")
	state := "vr/" + r + "/state"
	rep := start(t, vrlogBin, "replay", filepath.Join(root(), "testdata", "sample.vrlog"), "--channel", "vr/r1/state", "--remap",
		"vr/r1/state="+state, "--duration", "3", "--start-paused", "--control", name, "--wait-for-subscribers", "1", "--wait-timeout", "60s",
		"--listen", ep, "--no-multicast", "--json")
	ctl := func(args ...string) result {
		return shell(t, t.TempDir(), "vrlog ctl --replay "+name+" --connect "+ep+" --no-multicast "+strings.Join(args, " "))
	}
	res := ctl("step 2 --timeout 3s")
	if res.code != 3 || !strings.Contains(res.stderr, "may still carry out") {
		t.Fatalf("step 2 while waiting for subscribers: %s", res)
	}
	start(t, vrlogBin, "controller", "--state", state, "--command", "vr/"+r+"/cmd", "--connect", ep, "--no-multicast")
	var st struct {
		State string `json:"state"`
		Sent  int    `json:"sent"`
	}
	waitFor(t, 30*time.Second, "the replay to start and carry out the step", func() bool {
		res = ctl("status --json")
		return res.code == 0 && json.Unmarshal([]byte(res.stdout), &st) == nil && st.State == "paused" && st.Sent > 0
	})
	time.Sleep(1500 * time.Millisecond) // a second copy of the step would be applied by now
	if res = ctl("status --json"); res.code != 0 || json.Unmarshal([]byte(res.stdout), &st) != nil || st.Sent != 2 {
		t.Fatalf("after step 2: %s", res)
	}
	if res = ctl("stop"); res.code != 0 {
		t.Fatalf("stop: %s", res)
	}
	if code := rep.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("replay exit %d after stop:\n%s", code, rep.stderr)
	}
}

// vrlog ctl without --replay with two replays on the network is a usage
// error naming both, every time: the one that answered first is not taken
// for the only one. The second replay is reached through the first, as
// on a network where ctl meets one peer first.
func TestCtlWithoutReplayRefusesSeveral(t *testing.T) {
	r := robot(t)
	portA, portB := strconv.Itoa(freePort(t)), strconv.Itoa(freePort(t))
	epA, epB := "tcp/127.0.0.1:"+portA, "tcp/127.0.0.1:"+portB
	base := strings.ReplaceAll(nameOf(t), "_", "")
	replay := func(name, state string, zflags ...string) *proc {
		return start(t, vrlogBin, append([]string{"replay", filepath.Join(root(), "testdata", "sample.vrlog"), "--channel", "vr/r1/state", "--remap",
			"vr/r1/state=" + state, "--duration", "3", "--start-paused", "--control", name, "--no-multicast", "--json"}, zflags...)...)
	}
	a := replay(base+"a", "vr/"+r+"/a/state", "--listen", epA)
	b := replay(base+"b", "vr/"+r+"/b/state", "--listen", epB, "--connect", epA)
	for _, name := range []string{base + "a", base + "b"} { // both up and reachable through A
		waitFor(t, 30*time.Second, name+" to answer", func() bool {
			return shell(t, t.TempDir(), "vrlog ctl --replay "+name+" status --timeout 2s --connect "+epA+" --no-multicast").code == 0
		})
	}
	for i := range 3 {
		res := shell(t, t.TempDir(), "vrlog ctl status --timeout 5s --connect "+epA+" --no-multicast")
		if res.code != 2 || !strings.Contains(res.stderr, "2 replays answer ("+base+"a, "+base+"b)") {
			t.Fatalf("ctl status without --replay, two replays, try %d: want exit 2 naming both; %s", i, res)
		}
	}
	for _, name := range []string{base + "b", base + "a"} { // b first: it is reached through a
		if res := shell(t, t.TempDir(), "vrlog ctl --replay "+name+" stop --connect "+epA+" --no-multicast"); res.code != 0 {
			t.Fatalf("stop %s: %s", name, res)
		}
	}
	for _, p := range []*proc{a, b} {
		if code := p.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("replay exit %d after stop:\n%s", code, p.stderr)
		}
	}
}

// A frozen peer on the network (a controller stopped with SIGSTOP: its
// TCP accepts, its zenoh never answers) does not hold ctl past --timeout:
// ctl meets it through the replay's gossip and its session's close would
// wait zenoh's open timeout (10 s) for that connection; --timeout bounds
// the whole command, and the commands still work.
func TestCtlWithAFrozenPeer(t *testing.T) {
	r := robot(t)
	ep := "tcp/127.0.0.1:" + strconv.Itoa(freePort(t))
	name := strings.ReplaceAll(nameOf(t), "_", "")
	state := "vr/" + r + "/state"
	rep := start(t, vrlogBin, "replay", filepath.Join(root(), "testdata", "sample.vrlog"), "--channel", "vr/r1/state", "--remap",
		"vr/r1/state="+state, "--duration", "3", "--start-paused", "--control", name, "--listen", ep, "--no-multicast", "--json")
	ctl := func(cmd string) (result, time.Duration) {
		t0 := time.Now()
		res := shell(t, t.TempDir(), "vrlog ctl --replay "+name+" "+cmd+" --timeout 3s --connect "+ep+" --no-multicast")
		return res, time.Since(t0)
	}
	waitFor(t, 30*time.Second, "the replay to answer", func() bool { res, _ := ctl("status"); return res.code == 0 })
	peer := start(t, vrlogBin, "controller", "--state", state, "--command", "vr/"+r+"/cmd", "--connect", ep, "--no-multicast")
	time.Sleep(2 * time.Second) // its session meets the replay's, which gossips it to the next session
	if err := peer.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.cmd.Process.Signal(syscall.SIGCONT) })
	for _, cmd := range []string{"status", "status", "stop"} {
		res, took := ctl(cmd)
		if res.code != 0 {
			t.Fatalf("ctl %s with a frozen peer: want exit 0; %s", cmd, res)
		}
		if took > 5*time.Second { // --timeout 3s bounds the command (zenoh's open timeout is 10 s); a margin for a loaded host
			t.Fatalf("ctl %s --timeout 3s with a frozen peer took %v", cmd, took)
		}
	}
	if code := rep.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("replay exit %d after stop:\n%s", code, rep.stderr)
	}
}
