package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
)

// A lockstep replay into the Python controller (peers/controller.py, the
// official zenoh wheel, pairing its answers with "vrlog.seq=N"), as a CI
// job runs it, when the controller behaves, dies, stalls once or answers
// on the wrong key: the exit code, the message, the time to fail (a
// generous sanity bound, not a benchmark) and what analyze's gate says
// of the response log.
func TestLockstepIntoThePythonController(t *testing.T) {
	for _, c := range []struct {
		name       string
		controller []string // controller.py's misbehaviour
		timeout    string   // --lockstep-timeout
		code       int
		stderr     []string
		within     time.Duration // the replay's whole run
		lockstep   func(l map[string]any) bool
		gate       int // analyze --max-reaction's exit
	}{
		{name: "healthy", timeout: "5s", code: 0, within: time.Minute, gate: 0,
			lockstep: func(l map[string]any) bool {
				return l["missed"].(float64) == 0 && l["late"].(float64) == 0 && l["tagged"].(float64) > 0
			}},
		{name: "dies", controller: []string{"--die-after", "10"}, timeout: "10s", code: 1, within: 8 * time.Second, gate: 1,
			stderr:   []string{"lost its subscriber: the controller is gone", "--lockstep "},
			lockstep: func(l map[string]any) bool { return l["answered"].(float64) == 10 }},
		// A missed step fails the gate although its late answer is paired
		// with its trigger well within the limit; --partial-replay gates
		// the answers.
		{name: "stalls once", controller: []string{"--stall-after", "5", "--stall-for", "0.75"}, timeout: "500ms", code: 0, within: time.Minute, gate: 1,
			stderr:   []string{"a missed step", "late answer for seq"},
			lockstep: func(l map[string]any) bool { return l["missed"].(float64) == 1 && l["late"].(float64) == 1 }},
		{name: "wrong key", controller: []string{"--answer-key", "WRONG"}, timeout: "300ms", code: 1, within: 10 * time.Second, gate: 1,
			stderr:   []string{"no answer at all: 3 trigger records in a row", "yet: is the controller running, and answering on that key?"},
			lockstep: func(l map[string]any) bool { return l["missed"].(float64) == 3 && l["answered"].(float64) == 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, dir := robot(t), t.TempDir()
			ep := "tcp/127.0.0.1:" + strconv.Itoa(freePort(t))
			state, cmd := "vr/"+r+"/state", "vr/"+r+"/cmd"
			out := filepath.Join(dir, "response.vrlog")
			rep := exec.Command(vrlogBin, "replay", filepath.Join(root(), "testdata", "sample.vrlog"), "--channel", "vr/r1/state",
				"--remap", "vr/r1/state="+state, "--start", "1", "--duration", "4", "--rate", "4", "--listen", ep, "--no-multicast", "--json",
				"--wait-for-subscribers", "1", "--wait-timeout", "60s", "--lockstep", cmd, "--lockstep-timeout", c.timeout, "--capture", cmd, "-o", out)
			var stdout, stderr bytes.Buffer
			rep.Stdout, rep.Stderr = &stdout, &stderr
			if err := rep.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rep.Process.Kill() })
			args := []string{"--connect", ep, "--state", state, "--command", cmd}
			for _, a := range c.controller {
				if a == "WRONG" {
					a = cmd + "/elsewhere"
				}
				args = append(args, a)
			}
			peertest.Start(t, "controller.py", args...)
			started := time.Now() // the replay waits for the controller's subscriber, then runs
			done := make(chan error, 1)
			go func() { done <- rep.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(3 * time.Minute):
				t.Fatalf("replay did not finish:\n%s", stderr.String())
			}
			took := time.Since(started)
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, stderr.String())
			}
			for _, w := range c.stderr {
				if !strings.Contains(stderr.String(), w) {
					t.Fatalf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			if took > c.within {
				t.Fatalf("took %v (bound %v)", took, c.within)
			}
			var js map[string]any
			if err := json.Unmarshal(stdout.Bytes(), &js); err != nil {
				t.Fatalf("%v\n%s", err, stdout.String())
			}
			if l, _ := js["lockstep"].(map[string]any); l == nil || !c.lockstep(l) {
				t.Fatalf("lockstep %v\n%s", js["lockstep"], stderr.String())
			}
			gate := shell(t, dir, "vrlog analyze response.vrlog --max-reaction 2s -q")
			if gate.code != c.gate {
				t.Fatalf("analyze --max-reaction: exit %d, want %d\n%s%s", gate.code, c.gate, gate.stdout, gate.stderr)
			}
			if c.name == "stalls once" {
				if !strings.Contains(gate.stdout+gate.stderr, "1 lockstep step missed") {
					t.Fatalf("analyze --max-reaction on a missed step does not say so:\n%s%s", gate.stdout, gate.stderr)
				}
				if part := shell(t, dir, "vrlog analyze response.vrlog --max-reaction 2s --partial-replay -q"); part.code != 0 {
					t.Fatalf("analyze --max-reaction --partial-replay: exit %d, want 0\n%s%s", part.code, part.stdout, part.stderr)
				}
			}
			t.Logf("%s: exit %d in %v; gate %d", c.name, code, took.Round(time.Millisecond), gate.code)
		})
	}
}
