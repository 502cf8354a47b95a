package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeCommands returns the commands of README.md's sh blocks, verbatim,
// continuation lines joined; readmeScripts the blocks marked "sh script",
// whole. The blocks marked "sh install" and "sh quickstart" are neither:
// TestRelease runs them against an installed release.
func readmeCommands(t *testing.T) []string {
	cmds, _ := readmeBlocks(t)
	return cmds
}

func readmeScripts(t *testing.T) []string {
	_, scripts := readmeBlocks(t)
	return scripts
}

func readmeBlocks(t *testing.T) (cmds, scripts []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, script, release, cont := false, false, false, ""
	var body strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "```sh install" || l == "```sh quickstart":
			release = true
			continue
		case strings.HasPrefix(l, "```sh script"):
			in, script = true, true
			body.Reset()
			continue
		case strings.HasPrefix(l, "```sh"):
			in = true
			continue
		case strings.HasPrefix(l, "```"):
			if script {
				scripts = append(scripts, body.String())
			}
			in, script, release = false, false, false
			continue
		}
		if release {
			continue
		}
		if script {
			body.WriteString(l + "\n")
			continue
		}
		if !in {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cont += s
			continue
		}
		l, cont = cont+l, ""
		if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "#") {
			cmds = append(cmds, s)
		}
	}
	return cmds, scripts
}

// readmeStep is what one README command must do.
type readmeStep struct {
	prefix string // the command starts with it
	skip   string // why it is not run here
	repo   bool   // runs in the checkout, not the session directory
	record bool   // runs until interrupted (Ctrl-C, as the README says)
	// background: a job running beside the commands after it (the README
	// starts it with &, or in a second terminal); during: after this step
	// the job is interrupted (Ctrl-C) and must exit 0 having made its
	// files; stop: the README's kill %1, which ends it (SIGTERM) and shows
	// its output.
	background, during, stop bool
	python                   bool // runs with the venv's python first on PATH (make peers installs ./python there)
	code                     int
	want                     []string // in its output
	made                     []string // files it leaves
	before                   func(t *testing.T, dir string)
}

// The README's commands, verbatim, in order, as a user would type them:
// its Quick start in the checkout, its everyday session in a directory of
// its own where the bundled simulator publishes (robot r1). A command the
// table does not know, or a step the README lost, fails the test: the
// README cannot drift from what vrlog does.
func TestReadmeCommands(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	// The session's transports are its own: zenoh through $ZENOH_CONFIG
	// (multicast off, the simulator's endpoint), iceoryx2 through the
	// project-local config/iceoryx2.toml (a prefix of its own, so --all
	// sees this simulator's services only).
	zcfg := filepath.Join(dir, "zenoh.json5")
	os.WriteFile(zcfg, []byte(fmt.Sprintf(`{ mode: "peer", connect: { endpoints: ["tcp/127.0.0.1:%d"] }, scouting: { multicast: { enabled: false } } }`, port)), 0o644)
	os.Mkdir(filepath.Join(dir, "config"), 0o755)
	prefix := fmt.Sprintf("vrlogreadme%d_", os.Getpid())
	os.WriteFile(filepath.Join(dir, "config", "iceoryx2.toml"), []byte(fmt.Sprintf("[global]\nprefix = %q\n", prefix)), 0o644)
	// iceoryx2 keeps a node-management file in /dev/shm after its last
	// process exits, and a job killed in a cleanup leaves its node's files:
	// the prefix is this test's alone. (Registered first, this runs after
	// the jobs' cleanups have killed and reaped them.)
	t.Cleanup(func() { removeIceoryxPrefix(prefix) })
	env := []string{"ZENOH_CONFIG=" + zcfg, "GOBIN=" + filepath.Join(dir, "gobin")}
	sim := exec.Command(vrlogBin, "sim", "--listen", "tcp/127.0.0.1:"+strconv.Itoa(port), "--no-multicast", "-q", "--robot", "r1",
		"--width", "160", "--height", "120", "--duration", "5m", "--start-delay", "500ms", "--drop-every", "30")
	sim.Dir = dir
	var simErr bytes.Buffer
	sim.Stderr = &simErr
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sim.Process.Signal(syscall.SIGINT)
		sim.Wait()
	}()
	sample, _ := os.ReadFile(filepath.Join(root(), "testdata", "sample.vrlog"))

	steps := []*readmeStep{
		{prefix: "make demo", skip: "the demo builds and runs for a minute; scripts/demo.sh runs the same verbs as the session below"},
		{prefix: "make test", skip: "this test is part of make test"},
		{prefix: "go run ./cmd/analyze testdata/sample.vrlog", repo: true, want: []string{"restarts (seq went back"}},
		{prefix: "go install ./cmd/analyze", repo: true, made: []string{"gobin/analyze"}},
		{prefix: "vrlog record -o bug-1234.vrlog --all", record: true, made: []string{"bug-1234.vrlog"}},
		{prefix: "vrlog record -o s.vrlog -k 'vr/r1/**' -s 'vr/r1/camera/*'", record: true, made: []string{"s.vrlog"}},
		{prefix: "vrlog record -o ring.vrlog --all --split-duration 1m --max-files 10", record: true, made: []string{"ring_000.vrlog"}},
		{prefix: "vrlog record -o bug.vrlog --all --snapshot 30s --after 5s", background: true},
		{prefix: "vrlog snapshot bug --note", during: true, want: []string{"vrlog/record/bug/snapshot: wrote ", "/bug_", "_query.vrlog"},
			before: func(t *testing.T, dir string) { time.Sleep(3 * time.Second) }}, // the recorder connects and fills its buffer
		{prefix: "vrlog record -o cam.vrlog --all --name cam-host --idle", background: true},
		{prefix: "vrlog recorders", want: []string{"cam-host", "idle"},
			before: func(t *testing.T, dir string) { time.Sleep(2 * time.Second) }}, // the recorder opens its session
		{prefix: "vrlog rec start cam-host --file 'run-{time}'; vrlog rec split --all;", want: []string{"cam-host: start: writing ", "cam-host: split: finished ", "goes on in ", "cam-host: pause: now paused", "cam-host: resume: writing "}},
		{prefix: "vrlog rec stop --all --json", during: true, want: []string{`"finished": {`, `"state": "idle"`}},
		{prefix: "vrlog analyze bug_*.vrlog", want: []string{"snapshot bug_", `triggered by zenoh query on vrlog/record/bug/snapshot: controller oscillates`}},
		{prefix: "vrlog info bug-1234.vrlog", want: []string{"vr/r1/state", "vr/r1/camera/front", "footer:    present"}},
		{prefix: "vrlog cat bug-1234.vrlog --channel vr/r1/state --limit 5 --json", want: []string{`"channel":"vr/r1/state"`}},
		{prefix: "vrlog analyze bug-1234.vrlog --html report.html", want: []string{"vr/r1/camera/front vs vr/r1/state"}, made: []string{"report.html"}},
		{prefix: "vrlog view --live --all", skip: "serves until stopped: e2e/view_test.go runs view --live with the official Foxglove client"},
		{prefix: "vrlog view bug-1234.vrlog", skip: "serves until stopped: e2e/view_test.go and viewer's tests play logs to Foxglove clients"},
		{prefix: "vrlog analyze run.vrlog --max-skips 0", code: 1, made: []string{"checks.xml", "report.json"},
			want:   []string{"checks failed; first: max-skips"},
			before: func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "run.vrlog"), sample, 0o644) }},
		{prefix: "vrlog analyze run.vrlog --baseline last-good.json", want: []string{"elapsed froze at 5.84 s"},
			before: func(t *testing.T, dir string) {
				if r := shell(t, dir, "vrlog analyze run.vrlog --json > last-good.json"); r.code != 0 {
					t.Fatalf("the last good report: %s", r)
				}
			}},
		{prefix: "vrlog replay bug-1234.vrlog  ", want: []string{"replayed ", "clock, 1 pass)"}},
		{prefix: "vrlog replay bug-1234.vrlog --rate 2 --loop 3", want: []string{"3 passes", "restamped"}},
		{prefix: "zenohd -c deploy/router.json5", skip: "a router on another host (docs/deployment.md): TestAcrossHostsThroughRouter runs it in network namespaces"},
		{prefix: "vrlog record --zenoh-config deploy/client.json5 --connect tcp/ROUTER:7447", skip: "ROUTER is another host: TestAcrossHostsThroughRouter records through a router"},
		{prefix: "vrlog verify crashed.vrlog; vrlog recover crashed.vrlog -o fixed.vrlog", want: []string{"DAMAGED crashed.vrlog", "recovered crashed.vrlog -> fixed.vrlog"},
			made: []string{"fixed.vrlog"},
			before: func(t *testing.T, dir string) { // a recording cut short, as by kill -9
				b, _ := os.ReadFile(filepath.Join(dir, "bug-1234.vrlog"))
				os.WriteFile(filepath.Join(dir, "crashed.vrlog"), b[:len(b)*2/3], 0o644)
			}},
		{prefix: "vrlog cut s.vrlog -o window.vrlog --start 1 --end 3", made: []string{"window.vrlog"}, want: []string{"(verified)"}},
		{prefix: "vrlog merge window.vrlog fixed.vrlog -o merged.vrlog", made: []string{"merged.vrlog"}, want: []string{"from 2 inputs (verified)"}},
		{prefix: "vrlog export s.vrlog --format mcap -o s.mcap", made: []string{"s.mcap"}, want: []string{"read back through its index"}},
		{prefix: "vrlog export s.vrlog --format csv -o timing/", made: []string{"timing/vr_r1_state.csv"}, want: []string{"CSV file(s) under timing/"}},
		{prefix: "python -c 'import vrlog;", python: true, want: []string{"recv_wall_ns", "count"}},
	}
	var job *bgJob // the README's job %1
	used := map[*readmeStep]bool{}
	next := 0
	for _, cmd := range readmeCommands(t) {
		var st *readmeStep
		for i := next; i < len(steps); i++ {
			if strings.HasPrefix(cmd+"  ", steps[i].prefix) {
				st, next = steps[i], i+1
				break
			}
		}
		if st == nil {
			t.Fatalf("README command %q is not in this test (or out of order): add what it must do", cmd)
		}
		used[st] = true
		if st.skip != "" {
			t.Logf("not run here: %s: %s", cmd, st.skip)
			continue
		}
		if st.before != nil {
			st.before(t, dir)
		}
		at := dir
		if st.repo {
			at = root()
		}
		var r result
		switch {
		case st.background:
			job = background(t, dir, cmd, env)
			t.Logf("started: %s", cmd)
			continue
		case st.stop:
			if job == nil {
				t.Fatalf("README: %s: no job to stop", cmd)
			}
			r = job.stop(t, syscall.SIGTERM)
		case st.record:
			r = interrupted(t, dir, cmd, env, 4*time.Second)
		case st.python:
			venv := filepath.Join(root(), ".venv", "bin")
			r = shell(t, at, cmd, append(env, "PATH="+filepath.Dir(vrlogBin)+":"+venv+":"+os.Getenv("PATH"))...)
		default:
			r = shell(t, at, cmd, env...)
		}
		if r.code != st.code {
			t.Fatalf("README: %s: want exit %d; %s\nsimulator: %s", cmd, st.code, r, simErr.String())
		}
		for _, w := range st.want {
			if !strings.Contains(r.stdout+r.stderr, w) {
				t.Errorf("README: %s: output lacks %q; %s", cmd, w, r)
			}
		}
		for _, f := range st.made {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("README: %s: %v", cmd, err)
			}
		}
		t.Logf("ran: %s (exit %d)", cmd, r.code)
		if st.during {
			if r := job.stop(t, syscall.SIGINT); r.code != 0 {
				t.Fatalf("README: %s (in the background): want exit 0; %s", job.line, r)
			}
			job = nil
		}
	}
	for _, st := range steps {
		if !used[st] {
			t.Errorf("the README lost the command %q", st.prefix)
		}
	}
	readmeCIJob(t, dir, env)
	noTemporaries(t, dir)
}

// readmeCIJob runs the README's CI job as the script it is (bash, not
// line by line), on a port of its own: it passes (exit 0) with its files,
// again in the same workspace (a CI rerun: it failed with exit 2, as
// response.vrlog existed), and with a gate the controller cannot meet it
// fails with the gate's exit code (1), not the kill's; with a controller
// that exited early it fails with replay's (3).
func readmeCIJob(t *testing.T, dir string, env []string) {
	t.Helper()
	scripts := readmeScripts(t)
	if len(scripts) != 1 || !strings.Contains(scripts[0], "vrlog analyze response.vrlog --max-reaction 250ms") {
		t.Fatalf("the README's CI job script is gone or changed: %q", scripts)
	}
	job := strings.ReplaceAll(scripts[0], "tcp/127.0.0.1:7447", fmt.Sprintf("tcp/127.0.0.1:%d", freePort(t)))
	os.WriteFile(filepath.Join(dir, "ci-job.sh"), []byte(job), 0o755)
	r := shell(t, dir, "./ci-job.sh", env...)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "PASS  max-reaction ci/vr/r1/state") ||
		!strings.Contains(r.stdout+r.stderr, " trigger records answered, 0 missed") {
		t.Fatalf("README CI job: want exit 0; %s", r)
	}
	for _, f := range []string{"response.vrlog", "reaction.xml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("README CI job: %v", err)
		}
	}
	if r := shell(t, dir, "./ci-job.sh", env...); r.code != 0 {
		t.Fatalf("README CI job run again in the same workspace: want exit 0; %s", r)
	}
	failing := strings.Replace(job, "--max-reaction 250ms", "--max-reaction 1us", 1)
	os.WriteFile(filepath.Join(dir, "ci-job-failing.sh"), []byte(failing), 0o755)
	if r := shell(t, dir, "./ci-job-failing.sh", env...); r.code != 1 || !strings.Contains(r.stdout+r.stderr, "FAIL  max-reaction") {
		t.Fatalf("README CI job with a gate it cannot meet: want exit 1 (the gate's); %s", r)
	}
	// A controller that exits at once (a bad flag): replay gives up after
	// --wait-timeout with exit 3, and the trap's kill of the gone
	// controller must not replace that code.
	gone := strings.Replace(strings.Replace(job, "vrlog controller ", "vrlog controller --no-such-flag ", 1),
		"--wait-timeout 30s", "--wait-timeout 1s", 1)
	if gone == job || !strings.Contains(gone, "--wait-timeout 1s") {
		t.Fatalf("the README's CI job no longer starts the controller or waits with --wait-timeout 30s: %q", job)
	}
	os.WriteFile(filepath.Join(dir, "ci-job-gone.sh"), []byte(gone), 0o755)
	if r := shell(t, dir, "./ci-job-gone.sh", env...); r.code != 3 || !strings.Contains(r.stderr, "--wait-for-controller: no controller after 1s: no zenoh liveliness token on ci/vr/r1/cmd") ||
		strings.Contains(r.stderr, "No such process") {
		t.Fatalf("README CI job whose controller exited early: want replay's exit 3, quietly; %s", r)
	}
}

// bgJob is a command the README runs in the background (cmd &, or in
// a second terminal).
type bgJob struct {
	line      string
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan error
}

// background starts a README command that ends in & (its trailing & and
// comment dropped) as the shell's job %1 would run.
func background(t *testing.T, dir, cmd string, env []string) *bgJob {
	t.Helper()
	line, _, _ := strings.Cut(cmd, " &")
	j := &bgJob{line: line, cmd: exec.Command("bash", "-c", "exec "+line), done: make(chan error, 1)}
	j.cmd.Dir = dir
	j.cmd.Env = append(append(os.Environ(), "PATH="+filepath.Dir(vrlogBin)+":"+os.Getenv("PATH")), env...)
	j.cmd.Stdout, j.cmd.Stderr = &j.out, &j.errb
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { j.done <- j.cmd.Wait() }()
	t.Cleanup(func() {
		if j.cmd.Process.Kill() == nil { // still running: the test failed before stopping it
			<-j.done
		}
	})
	return j
}

// stop sends the job sig (kill %1: SIGTERM; Ctrl-C: SIGINT), then
// returns its exit and output.
func (j *bgJob) stop(t *testing.T, sig syscall.Signal) result {
	t.Helper()
	j.cmd.Process.Signal(sig)
	select {
	case err := <-j.done:
		return result{exitCode(err), j.out.String(), j.errb.String()}
	case <-time.After(60 * time.Second):
		j.cmd.Process.Kill()
		t.Fatalf("%s: no exit 60 s after %v", j.line, sig)
	}
	return result{}
}

// interrupted runs a command that records until Ctrl-C and sends it
// SIGINT after d.
func interrupted(t *testing.T, dir, cmd string, env []string, d time.Duration) result {
	t.Helper()
	c := exec.Command("bash", "-c", "exec "+cmd)
	c.Dir = dir
	c.Env = append(append(os.Environ(), "PATH="+filepath.Dir(vrlogBin)+":"+os.Getenv("PATH")), env...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return result{exitCode(err), out.String(), errb.String()}
	case <-time.After(d):
	}
	c.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		return result{exitCode(err), out.String(), errb.String()}
	case <-time.After(30 * time.Second):
		c.Process.Kill()
		t.Fatalf("%s: no exit 30 s after SIGINT", cmd)
	}
	return result{}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 0
}

// Every claim the README's comparison table makes about a peer (rosbag2,
// the mcap CLI, iox2 service record) is cited: a cell of a peer's column
// links its source, or says n/a or – (nothing to cite either way). A row
// of vrlog's own measurements links them in its first cell. (It said
// rosbag2 loses metadata on SIGTERM, which rosbag2 has handled since its
// PR #792, 2021.)
func TestReadmePeerClaimsCited(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## How it compares")
	if i < 0 {
		t.Fatal("the README has no comparison")
	}
	rows := 0
	for _, l := range strings.Split(s[i:], "\n")[1:] {
		if strings.HasPrefix(l, "## ") {
			break
		}
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| |") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		if len(cells) != 5 {
			t.Fatalf("a row of %d cells: %q", len(cells), l)
		}
		rows++
		if strings.Contains(cells[0], "](") { // vrlog's own measurements, linked
			continue
		}
		for _, c := range cells[1:4] {
			c = strings.TrimSpace(c)
			if c != "n/a" && c != "–" && !strings.Contains(c, "][") && !strings.Contains(c, "](") {
				t.Errorf("%s: a peer's claim without a source: %q", strings.TrimSpace(cells[0]), c)
			}
		}
	}
	if rows < 5 {
		t.Fatalf("%d rows in the comparison", rows)
	}
}

// The README's exit-code table says what docs/cli.md's says of an
// interruption: exit 3, except for the verbs a signal is the way to stop
// (record on SIGINT exits 0). The README listed "interrupted" under 3
// without the exception.
func TestReadmeExitCodesAgreeWithCLI(t *testing.T) {
	row3 := func(file string) string {
		b, err := os.ReadFile(filepath.Join(root(), file))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "| 3 | ") {
				return l
			}
		}
		t.Fatalf("%s: no row for exit code 3", file)
		return ""
	}
	cli := row3("docs/cli.md")
	i := strings.Index(cli, "interrupted by SIGINT or SIGTERM (")
	if i < 0 {
		t.Fatalf("docs/cli.md's exit code 3 says nothing of interruptions: %s", cli)
	}
	j := strings.Index(cli[i:], ")")
	if want := cli[i : i+j+1]; !strings.Contains(row3("README.md"), want) {
		t.Errorf("README's exit code 3 does not say what docs/cli.md says: %q", want)
	}
}
