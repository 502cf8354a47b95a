package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
)

// The command-line contract (docs/cli.md), failure by failure, against
// every verb each applies to: what once failed silently or differently per
// verb (issue 12) is a row here, with its exit code, its message and the
// files it leaves behind.

// result is one finished command.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// shell runs script with bash in dir, vrlog first on PATH.
func shell(t *testing.T, dir, script string, env ...string) result {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PATH="+filepath.Dir(vrlogBin)+":"+os.Getenv("PATH")), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// files lists dir's entries.
func files(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// noTemporaries fails when dir (recursively) holds a temporary file.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

// sampleDir is a fresh directory holding the bundled sample as run.vrlog.
func sampleDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(root(), "testdata", "sample.vrlog"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.vrlog"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// nameOf is a name unique to the test, usable as a zenoh key level and an
// iceoryx2 service name.
func nameOf(t *testing.T) string {
	return regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(robot(t), "")
}

type contractCase struct {
	name   string
	script string // bash, in a directory holding run.vrlog (the sample)
	code   int
	want   []string // in stdout or stderr
	made   []string // files the command must leave
	absent []string // files it must not leave
	check  func(t *testing.T, dir string, r result)
}

func runContract(t *testing.T, cases []contractCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := sampleDir(t)
			r := shell(t, dir, strings.ReplaceAll(c.script, "ROBOT", nameOf(t)))
			if r.code != c.code {
				t.Fatalf("%s: want exit %d; %s", c.script, c.code, r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stdout+r.stderr, w) {
					t.Errorf("%s: output lacks %q; %s", c.script, w, r)
				}
			}
			for _, f := range c.made {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s: %s not written: %v", c.script, f, err)
				}
			}
			for _, f := range c.absent {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s: %s left behind", c.script, f)
				}
			}
			noTemporaries(t, dir)
			if c.check != nil {
				c.check(t, dir, r)
			}
		})
	}
}

// 1. Flags go anywhere, in every verb.
func TestFlagsAnywhere(t *testing.T) {
	replay := "vrlog replay run.vrlog --rate max --quiet --linger 0 --no-multicast --prefix ROBOT"
	runContract(t, []contractCase{
		{name: "info", script: "vrlog info run.vrlog --json", want: []string{`"file":"run.vrlog"`}},
		{name: "cat", script: "vrlog cat run.vrlog --limit 2 --channel vr/r1/state", check: func(t *testing.T, _ string, r result) {
			if n := strings.Count(r.stdout, "\n"); n != 2 {
				t.Errorf("%d lines", n)
			}
		}},
		{name: "verify", script: "vrlog verify run.vrlog --json", want: []string{`"ok":true`}},
		{name: "recover", script: "vrlog recover run.vrlog -o fixed.vrlog", made: []string{"fixed.vrlog"}},
		{name: "cut", script: "vrlog cut run.vrlog -o cut.vrlog --end 5", made: []string{"cut.vrlog"}},
		{name: "merge", script: "vrlog cut run.vrlog -o a.vrlog --end 5 && vrlog cut run.vrlog -o b.vrlog --start 5 && vrlog merge a.vrlog b.vrlog -o m.vrlog --force",
			made: []string{"m.vrlog"}, want: []string{"671 records"}},
		{name: "export", script: "vrlog export run.vrlog -o t.csv --format csv", made: []string{"t.csv"}},
		{name: "analyze --json", script: "vrlog analyze run.vrlog --json", want: []string{`"schema": "vrlog.analyze/1"`}},
		{name: "analyze --html", script: "vrlog analyze run.vrlog --html r.html", made: []string{"r.html"}},
		{name: "replay", script: replay + " --json", want: []string{`"schema": "vrlog.replay/1"`}},
		{name: "flags between files", script: "vrlog info run.vrlog --json run.vrlog", check: func(t *testing.T, _ string, r result) {
			if n := strings.Count(r.stdout, `"file":"run.vrlog"`); n != 2 {
				t.Errorf("%d objects", n)
			}
		}},
		{name: "-- ends flags", script: "vrlog info -- run.vrlog", want: []string{"file:      run.vrlog"}},
		{name: "unknown flag after the file", script: "vrlog cat run.vrlog --nope", code: 2, want: []string{"unknown flag --nope"}},
		{name: "an unknown flag named as typed", script: "vrlog export run.vrlog --json -o x.mcap", code: 2, want: []string{"unknown flag --json (see --help)"}},
		// One duration grammar: seconds in every duration flag (record
		// --duration 1 was a parse error; replay --duration 10 took it).
		{name: "record --duration takes seconds", script: "vrlog record -q --no-multicast --duration 0.5 -k vr/ROBOT/** -o r.vrlog", code: 1,
			want: []string{"captured nothing"}},
		{name: "a bad duration says what it wants", script: "vrlog record --duration soon -k vr/ROBOT/**", code: 2,
			want: []string{`--duration "soon": want seconds (2.5) or a duration`}},
		{name: "version", script: "vrlog --version", want: []string{"vrlog version "}},
		{name: "ctl flags after the command", script: "vrlog ctl status --replay ROBOT --timeout 300ms --no-multicast", code: 3,
			want: []string{"no replay answered on vrlog/replay/", "/control within 300ms"}},
		{name: "controller flags anywhere", script: "vrlog controller --duration 300ms --no-multicast --delay 1ms -q --state vr/ROBOT/state"},
	})
}

// 2. One pattern grammar: * is one level, ** any levels, in every verb.
func TestOnePatternGrammar(t *testing.T) {
	var cases []contractCase
	for verb, cmd := range map[string]string{
		"cat":    "vrlog cat run.vrlog --limit 1",
		"cut":    "vrlog cut run.vrlog -o out.vrlog",
		"export": "vrlog export run.vrlog -o out.mcap",
		"replay": "vrlog replay run.vrlog --rate max --quiet --linger 0 --no-multicast --prefix ROBOT",
	} {
		cases = append(cases,
			contractCase{name: verb + " * is one level", script: cmd + " --channel 'vr/*'", code: 2,
				want: []string{`"vr/*" matches no`, "vr/r1/state"}, absent: []string{"out.vrlog", "out.mcap"}},
			contractCase{name: verb + " ** is any levels", script: cmd + " --channel 'vr/**'"},
			contractCase{name: verb + " no such channel", script: cmd + " --channel vr/r9/state", code: 2,
				want: []string{`"vr/r9/state" matches no`, "there are:", "vr/r1/camera/front"}, absent: []string{"out.vrlog", "out.mcap"}},
			contractCase{name: verb + " bad pattern", script: cmd + " --channel 'vr/r1/cam*'", code: 2, want: []string{"did you mean cam$*?"}},
		)
	}
	cases = append(cases,
		contractCase{name: "analyze ** crosses levels", script: "vrlog analyze run.vrlog --max-skips 'vr/**=0'", code: 1,
			want: []string{"max-skips vr/r1/state: ", "max-skips vr/r1/camera/front: "}},
		contractCase{name: "analyze * is one level", script: "vrlog analyze run.vrlog --max-skips 'vr/*=0'", code: 2,
			want: []string{`"vr/*" matches no channel with seq stamps`}},
		contractCase{name: "analyze $* inside a level", script: "vrlog analyze run.vrlog --min-rate 'vr/r1/st$*=5'", want: []string{"min-rate vr/r1/state"}},
		contractCase{name: "analyze matches topics", script: "vrlog analyze run.vrlog --min-rate 'vr/r1/time=0'", code: 2,
			want: []string{"matches no data channel"}}, // the probe's topic: not a data channel
		contractCase{name: "replay --remap", script: "vrlog replay run.vrlog --rate max --quiet --linger 0 --no-multicast --json --remap 'vr/*/state=ROBOT/moved/state' --channel vr/r1/state",
			want: []string{`/moved/state"`}},
		contractCase{name: "merge --time-service * is one level", script: "vrlog merge run.vrlog run.vrlog -o out.vrlog --clock sim --time-service 'vr/*'", code: 2,
			want: []string{"run.vrlog: no clock-sync probes of a time service matching vr/* (it probed vr/r1/time)"}, absent: []string{"out.vrlog"}},
		contractCase{name: "merge --time-service ** is any levels", script: "vrlog merge run.vrlog run.vrlog -o out.vrlog --clock sim --time-service 'vr/**'",
			want: []string{"receive stamps on the simulator's clock (time service vr/r1/time)"}, made: []string{"out.vrlog"}},
		contractCase{name: "merge --time-service bad pattern", script: "vrlog merge run.vrlog run.vrlog -o out.vrlog --clock sim --time-service 'vr/r1/ti*'", code: 2,
			want: []string{"did you mean ti$*?"}, absent: []string{"out.vrlog"}},
		contractCase{name: "replay --remap matching nothing", script: "vrlog replay run.vrlog --no-multicast --remap 'vr/r9/**=x/**'", code: 2,
			want: []string{"FROM matches no replayed channel"}},
		contractCase{name: "replay --stimulus * is one level", script: "vrlog replay run.vrlog --no-multicast --lockstep x --stimulus 'vr/*'", code: 2,
			want: []string{`--stimulus "vr/*" matches no replayed channel`, "vr/r1/state"}},
		// "trigger" names one idea, what fires a snapshot: replay's --trigger
		// (a channel lockstep holds) is --stimulus, and the old name still
		// works, with a warning.
		contractCase{name: "replay --trigger is deprecated", script: "vrlog replay run.vrlog --no-multicast --lockstep x --trigger 'vr/*'", code: 2,
			want: []string{"replay: warning: --trigger is deprecated: it is --stimulus now", `--stimulus "vr/*" matches no replayed channel`}},
		contractCase{name: "replay --capture of what it publishes", script: "vrlog replay run.vrlog --no-multicast --capture 'vr/**' -o r.vrlog", code: 2,
			want: []string{"--capture vr/** matches vr/r1/", "it would capture itself"}, absent: []string{"r.vrlog"}},
		contractCase{name: "replay --lockstep on what it publishes", script: "vrlog replay run.vrlog --no-multicast --lockstep 'vr/*/state'", code: 2,
			want: []string{"--lockstep vr/*/state matches vr/r1/state", "it would answer itself"}},
		contractCase{name: "analyze --max-reaction without a response log", script: "vrlog analyze run.vrlog --max-reaction 50ms", code: 1,
			want: []string{"max-reaction: nothing to check: the log has no trigger channel of a response log"}},
		contractCase{name: "analyze --max-reaction on no trigger", script: "vrlog analyze run.vrlog --max-reaction 'vr/**=50ms'", code: 2,
			want: []string{`"vr/**" matches no trigger channel of a response log`}},
	)
	runContract(t, cases)
}

// 3. A selector or threshold that matches nothing is exit 2 listing the
// channels; a gate never passes by checking nothing.
func TestNothingMatchedIsLoud(t *testing.T) {
	runContract(t, []contractCase{
		{name: "analyze unknown channel", script: "vrlog analyze run.vrlog --min-rate 'vr/r9/state=24' --junit j.xml", code: 2,
			want: []string{`--min-rate: "vr/r9/state" matches no data channel (there are: `, "vr/r1/state"}, absent: []string{"j.xml"}},
		{name: "analyze raw channel for a seq check", script: "vrlog analyze run.vrlog --max-lag 'vr/r1/state=10ms'", code: 2,
			want: []string{"matches no frame channel paired with a state channel (there are: vr/r1/camera/front)"}},
		{name: "junit never zero cases", script: "vrlog analyze run.vrlog --max-skips 'vr/**=0' --junit j.xml", code: 1, made: []string{"j.xml"},
			check: func(t *testing.T, dir string, _ result) {
				b, _ := os.ReadFile(filepath.Join(dir, "j.xml"))
				if !strings.Contains(string(b), `tests="2" failures="2"`) {
					t.Errorf("junit:\n%s", b)
				}
			}},
		{name: "window outside the log", script: "vrlog cut run.vrlog -o w.vrlog --start 100", code: 2, want: []string{"outside the log"}, absent: []string{"w.vrlog"}},
		{name: "cat window outside the log", script: "vrlog cat run.vrlog --end -5", code: 2, want: []string{"outside the log"}},
		{name: "replay window outside the log", script: "vrlog replay run.vrlog --no-multicast --start 1m", code: 2, want: []string{"outside the log"}},
		{name: "empty window", script: "vrlog export run.vrlog -o x.mcap --start 5 --end 2", code: 2, want: []string{"empty time window"}, absent: []string{"x.mcap"}},
	})
}

// 4. An empty recording fails (saying the --duration it recorded for: the
// clock starts when the transports are open), and so does the gate on it; a malformed
// endpoint is exit 2 in every verb.
func TestEmptyRecordingAndEndpoints(t *testing.T) {
	port := strconv.Itoa(freePort(t))
	runContract(t, []contractCase{
		{name: "record of nothing, then analyze", script: "vrlog record -o empty.vrlog -k 'vr/x/**' --connect tcp/127.0.0.1:" + port +
			" --no-multicast --duration 2s --probe-interval 0 -q; echo record=$?;" +
			" vrlog analyze empty.vrlog --min-rate vr/x/state=100 --max-skips 0; echo gate=$?;" +
			" vrlog analyze empty.vrlog --max-skips 0 --junit j.xml; echo default=$?",
			want: []string{"captured nothing in 2s of recording on -k vr/x/** (zenoh endpoints tcp/127.0.0.1:" + port + ")", "record=1", `"vr/x/state" matches no data channel (there is none)`, "gate=2",
				"max-skips: nothing to check: the log has no channel with seq stamps", "default=1"},
			made: []string{"empty.vrlog", "j.xml"},
			check: func(t *testing.T, dir string, _ result) {
				r, err := logfmt.Open(filepath.Join(dir, "empty.vrlog"), logfmt.ReaderOptions{})
				if err != nil || !r.Indexed() {
					t.Fatalf("the empty recording is not a finished log: %v", err)
				}
				r.Close()
			}},
		{name: "sim bad port", script: "vrlog sim --connect tcp/127.0.0.1:notaport --duration 1s", code: 2, want: []string{`--connect "tcp/127.0.0.1:notaport": port "notaport"`}},
		{name: "record bad protocol", script: "vrlog record --listen foo://bar -k x -o x.vrlog", code: 2, want: []string{`unknown protocol "foo:"`}, absent: []string{"x.vrlog"}},
		{name: "replay bad endpoint", script: "vrlog replay run.vrlog --connect tcp/localhost", code: 2, want: []string{"want tcp/HOST:PORT"}},
		{name: "ctl bad endpoint", script: "vrlog ctl status --connect tcp/localhost", code: 2, want: []string{"want tcp/HOST:PORT"}},
		{name: "controller bad endpoint", script: "vrlog controller --listen tcp/localhost", code: 2, want: []string{"want tcp/HOST:PORT"}},
		{name: "record bad mode", script: "vrlog record --mode router -k x -o x.vrlog", code: 2, want: []string{"--mode"}, absent: []string{"x.vrlog"}},
		{name: "record bad key", script: "vrlog record -k 'vr/r1*' -o x.vrlog", code: 2, want: []string{"did you mean r1$*?"}, absent: []string{"x.vrlog"}},
		{name: "record --snapshot-on without --snapshot", script: "vrlog record -k x -o x.vrlog --snapshot-on max-skips=0", code: 2, want: []string{"--snapshot-on needs --snapshot DURATION"}},
		{name: "record --snapshot-on not live", script: "vrlog record -k x -o x.vrlog --snapshot 10s --snapshot-on min-rate=24", code: 2, want: []string{"min-rate is not decided sample by sample"}},
		{name: "record --snapshot-on bad pattern", script: "vrlog record -k x -o x.vrlog --snapshot 10s --snapshot-on 'max-skips=vr/r1*=0'", code: 2, want: []string{"did you mean r1$*?"}},
		{name: "record --trigger is deprecated", script: "vrlog record -k x -o x.vrlog --snapshot 10s --trigger min-rate=24", code: 2,
			want: []string{"record: warning: --trigger is deprecated: it is --snapshot-on now", "min-rate is not decided sample by sample"}},
		{name: "record --snapshot does not split", script: "vrlog record -k x -o x.vrlog --snapshot 10s --split-duration 1m", code: 2, want: []string{"does not split"}},
		{name: "record --snapshot-bytes too small", script: "vrlog record -k x -o x.vrlog --snapshot 10s --snapshot-bytes 1M", code: 2, want: []string{"at least 16M"}},
		{name: "snapshot bad endpoint", script: "vrlog snapshot rec --connect tcp/localhost", code: 2, want: []string{"want tcp/HOST:PORT"}},
		{name: "snapshot bad name", script: "vrlog snapshot 'a/b'", code: 2, want: []string{"want a recorder's --name"}},
		{name: "snapshot nobody answers", script: "vrlog snapshot rec --no-multicast --connect tcp/127.0.0.1:" + port + " --timeout 1s", code: 3,
			want: []string{"no recorder answered vrlog/record/rec/snapshot within 1s"}},
	})
}

// 5. An output that cannot be written completely fails the verb (exit 3)
// and leaves nothing: a file size limit of 0 makes every write fail like a
// full disk.
func TestOutputsCompleteOrAbsent(t *testing.T) {
	full := "ulimit -f 0; "
	runContract(t, []contractCase{
		{name: "analyze --csv", script: full + "vrlog analyze run.vrlog --csv t.csv", code: 3, absent: []string{"t.csv"}},
		{name: "analyze --html", script: full + "vrlog analyze run.vrlog --html h.html", code: 3, absent: []string{"h.html"}},
		{name: "analyze --junit", script: full + "vrlog analyze run.vrlog --max-skips 100 --junit j.xml", code: 3, absent: []string{"j.xml"}},
		{name: "analyze > file", script: "vrlog analyze run.vrlog --json > /dev/full", code: 3, want: []string{"write standard output: no space left on device"}},
		{name: "analyze > file, size limit", script: full + "vrlog analyze run.vrlog --json > r.json", code: 3, want: []string{"write standard output"}},
		{name: "export csv dir", script: full + "vrlog export run.vrlog --format csv -o timing", code: 3, absent: []string{"timing"}},
		{name: "export mcap", script: full + "vrlog export run.vrlog -o m.mcap", code: 3, absent: []string{"m.mcap"}},
		{name: "cut", script: full + "vrlog cut run.vrlog -o c.vrlog", code: 3, absent: []string{"c.vrlog"}},
		{name: "merge", script: full + "vrlog merge run.vrlog run.vrlog -o m.vrlog", code: 3, absent: []string{"m.vrlog"}},
		{name: "recover", script: full + "vrlog recover run.vrlog -o r.vrlog", code: 3, absent: []string{"r.vrlog"}},
		{name: "cat > full", script: "vrlog cat run.vrlog > /dev/full", code: 3, want: []string{"no space left"}},
		{name: "exists without --force", script: "touch c.vrlog && vrlog cut run.vrlog -o c.vrlog", code: 2, want: []string{"c.vrlog: file already exists (use --force to replace it)"}},
		{name: "path named once", script: "vrlog cut run.vrlog -o nodir/c.vrlog", code: 2, check: func(t *testing.T, _ string, r result) {
			if n := strings.Count(r.stderr, "nodir/c.vrlog"); n != 1 {
				t.Errorf("the path is named %d times: %s", n, r.stderr)
			}
		}},
		{name: "input path named once", script: "vrlog info nope.vrlog", code: 2, check: func(t *testing.T, _ string, r result) {
			if n := strings.Count(r.stderr, "nope.vrlog"); n != 1 {
				t.Errorf("the path is named %d times: %s", n, r.stderr)
			}
		}},
	})
}

// 7. Every output is created with 0666 &^ umask (directories 0777 &^ umask).
func TestOutputsHonourTheUmask(t *testing.T) {
	runContract(t, []contractCase{{name: "umask 027",
		script: "umask 027; vrlog cut run.vrlog -o c.vrlog --end 5 && vrlog merge c.vrlog run.vrlog -o m.vrlog && vrlog recover run.vrlog -o r.vrlog &&" +
			" vrlog export run.vrlog -o x.mcap && vrlog export run.vrlog --format csv -o timing && vrlog export run.vrlog --format csv -o t.csv &&" +
			" vrlog analyze run.vrlog --junit j.xml --html h.html --csv a.csv --max-skips 100 > report.txt",
		check: func(t *testing.T, dir string, _ result) {
			for _, f := range []string{"c.vrlog", "m.vrlog", "r.vrlog", "x.mcap", "t.csv", "j.xml", "h.html", "a.csv", "timing/vr_r1_state.csv", "timing"} {
				st, err := os.Stat(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				want := fs.FileMode(0o640)
				if st.IsDir() {
					want = 0o750
				}
				if st.Mode().Perm() != want {
					t.Errorf("%s: mode %v, want %v", f, st.Mode().Perm(), want)
				}
			}
		}}})
}

//  8. --start-paused off a terminal waits for the control channel, and
//     says how to resume it; `vrlog ctl resume` does.
//  9. One default time format and one meaning of elapsed in every verb.
func TestPausedAndTimes(t *testing.T) {
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", freePort(t))
	runContract(t, []contractCase{
		{name: "start paused off a terminal", script: "vrlog replay run.vrlog --start-paused --duration 0.5 --channel vr/r1/state --remap vr/r1/state=vr/ROBOT/state" +
			" --no-multicast --listen " + ep + " < /dev/null > out.txt 2> err.txt & pid=$!; sleep 1; kill -0 $pid && echo still paused;" +
			" vrlog ctl resume --no-multicast --connect " + ep + " && wait $pid && cat out.txt err.txt",
			want: []string{"still paused", "paused; resume with `vrlog ctl --replay replay-", "replayed 13 records"}},
		{name: "elapsed everywhere", script: "vrlog info run.vrlog --json > info.json && vrlog analyze run.vrlog --json > a.json &&" +
			" vrlog cat run.vrlog --channel vr/r1/state --limit 1 > cat.txt && vrlog cat run.vrlog --channel vr/r1/state --limit 1 --json > cat.json &&" +
			" vrlog export run.vrlog --format csv -o t.csv --channel vr/r1/state",
			check: func(t *testing.T, dir string, _ result) {
				read := func(f string) string { b, _ := os.ReadFile(filepath.Join(dir, f)); return string(b) }
				var info struct {
					EpochNs int64 `json:"epoch_ns"`
				}
				var rep struct {
					EpochNs int64 `json:"epoch_ns"`
				}
				json.Unmarshal([]byte(read("info.json")), &info)
				json.Unmarshal([]byte(read("a.json")), &rep)
				if info.EpochNs == 0 || info.EpochNs != rep.EpochNs {
					t.Fatalf("session epoch: info %d, analyze %d", info.EpochNs, rep.EpochNs)
				}
				// The first state sample is the epoch: elapsed 0 in cat's
				// text, its decoded JSON and the CSV export alike.
				if c := read("cat.txt"); !regexp.MustCompile(`^-?\d\.\d{9} vr/r1/state seq=\d+ t=0\.000000000 `).MatchString(c) {
					t.Errorf("cat: %q", c)
				}
				if c := read("cat.json"); !strings.Contains(c, `"elapsed":0,`) {
					t.Errorf("cat --json: %q", c)
				}
				rows := strings.Split(read("t.csv"), "\n")
				if len(rows) < 2 || !strings.Contains(rows[1], ",0.000000000,") {
					t.Errorf("export csv: %q", rows[:min(2, len(rows))])
				}
			}},
	})
}

// bigLog writes a log of about size bytes of uncompressed 1 MiB frames,
// so a verb reading it runs long enough to be interrupted.
func bigLog(t testing.TB, path string, size int) {
	t.Helper()
	w, err := logfmt.Create(path, logfmt.WriterOptions{FlushInterval: -1, Sync: logfmt.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := w.AddChannel(logfmt.Channel{Name: "vr/big/camera", Transport: logfmt.TransportIceoryx2, Topic: "vr/big/camera"})
	frame := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{7})
	for i := 0; i < size>>20; i++ {
		rng.Read(frame) // incompressible: an export writes as much as it reads
		if err := w.Write(&logfmt.Record{Channel: id, RecvWallNs: 1.7e18 + int64(i)*33e6, RecvMonoNs: 1e9 + int64(i)*33e6, Payload: frame}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// 6. SIGINT or SIGTERM while a verb writes its output: exit 3, and neither
// the output nor a temporary file is left behind.
func TestInterruptLeavesNothing(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.vrlog")
	bigLog(t, big, 200<<20)
	inputs := []string{"big.vrlog"}
	for _, c := range []struct {
		args []string
		sig  syscall.Signal
	}{
		{[]string{"recover", "big.vrlog", "-o", "out.vrlog"}, syscall.SIGINT},
		{[]string{"export", "big.vrlog", "-o", "out.mcap"}, syscall.SIGTERM},
		{[]string{"cut", "big.vrlog", "-o", "out.vrlog"}, syscall.SIGTERM},
		{[]string{"merge", "big.vrlog", "big.vrlog", "-o", "out.vrlog"}, syscall.SIGINT},
	} {
		t.Run(strings.Join(c.args[:1], "")+"/"+c.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Link(big, filepath.Join(dir, "big.vrlog")); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(vrlogBin, c.args...)
			cmd.Dir = dir
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Interrupt once the output is being written: a temporary file
			// holds a MiB.
			writing := func(n string) bool {
				st, err := os.Stat(filepath.Join(dir, n))
				return strings.Contains(n, ".tmp-") && err == nil && st.Size() > 1<<20
			}
			deadline := time.Now().Add(30 * time.Second)
			for !slices.ContainsFunc(files(t, dir), writing) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("no output appeared")
				}
				time.Sleep(2 * time.Millisecond)
			}
			cmd.Process.Signal(c.sig)
			var code int
			select {
			case err := <-done:
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("no exit after the signal")
			}
			if code != 3 || !strings.Contains(errb.String(), "interrupted by") {
				t.Fatalf("exit %d, want 3 saying it was interrupted: %s", code, errb.String())
			}
			if got := files(t, dir); !slices.Equal(got, inputs) {
				t.Fatalf("left %v, want only %v", got, inputs)
			}
		})
	}
}

// Record's side of the contract: a pattern that captured nothing fails
// (exit 1) naming it; --compression patterns are the same grammar; the
// log, and the simulator's truth log, honour the umask.
func TestRecordContract(t *testing.T) {
	r := robot(t)
	dir := t.TempDir()
	port := strconv.Itoa(freePort(t))
	sim := start(t, vrlogBin, "sim", "--listen", "tcp/127.0.0.1:"+port, "--no-multicast", "-q", "--robot", r,
		"--width", "64", "--height", "48", "--duration", "30s", "--start-delay", "500ms", "--log", filepath.Join(dir, "truth.jsonl"))
	rec := func(out string, args ...string) result {
		return shell(t, dir, "umask 027; exec vrlog record -q --no-multicast --connect tcp/127.0.0.1:"+port+" --probe-interval 0 --duration 3s -o "+out+" "+strings.Join(args, " "))
	}
	// -s vr/R/* is one level: the camera, vr/R/camera/front, is two below.
	res := rec("one.vrlog", "-k", "'vr/"+r+"/**'", "-s", "'vr/"+r+"/*'")
	if res.code != 1 || !strings.Contains(res.stderr, "-s vr/"+r+"/* captured nothing (recorded: vr/"+r+"/state)") {
		t.Fatalf("a -s pattern that captured nothing: %s", res)
	}
	res = rec("two.vrlog", "-k", "'vr/"+r+"/**'", "-s", "'vr/"+r+"/**'", "--compression", "'vr/"+r+"/camera/*=none'", "--compression", "'vr/nothere/**=zstd-2'")
	if res.code != 0 || !strings.Contains(res.stderr, `--compression "vr/nothere/**" matched no recorded channel`) {
		t.Fatalf("record: %s", res)
	}
	lr, err := logfmt.Open(filepath.Join(dir, "two.vrlog"), logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	for _, c := range lr.Channels() {
		var want logfmt.CompressionKind // as asked for the camera
		switch {
		case strings.Contains(c.Name, "/camera/"):
		case c.Transport == logfmt.TransportZenoh:
			want = logfmt.CompressionLZ4 // the default for states
		default:
			continue
		}
		if c.Compression.Kind != want {
			t.Errorf("%s: compression %v, want %v", c.Name, c.Compression, want)
		}
	}
	// A snapshot recording: SIGUSR1 writes a snapshot (with the umask); a
	// --snapshot-on check that watched nothing fails the recording (exit 1),
	// as a threshold that checks nothing fails analyze.
	res = shell(t, dir, "umask 027; vrlog record -q --no-multicast --connect tcp/127.0.0.1:"+port+" --probe-interval 0 --duration 3s -o snap.vrlog"+
		" -k 'vr/"+r+"/**' --snapshot 1s --snapshot-on max-lag=45ms --snapshot-on 'max-skips=vr/"+r+"/camera/*=0' & pid=$!; sleep 2; kill -USR1 $pid; wait $pid")
	if res.code != 1 || !strings.Contains(res.stderr, "--snapshot-on max-lag=45ms watched nothing: the recording has no frame channel paired with a state channel") ||
		!strings.Contains(res.stderr, `--snapshot-on max-skips=vr/`+r+`/camera/*=0: "vr/`+r+`/camera/*" matches no channel with seq stamps (there are: vr/`+r+`/state)`) ||
		!strings.Contains(res.stderr, "record: snapshot: wrote snap_") {
		t.Fatalf("snapshot recording with triggers that watched nothing: %s", res)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "snap_*_signal-sigusr1.vrlog"))
	sim.signal(syscall.SIGINT)
	if code := sim.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("sim exit %d: %s", code, sim.stderr)
	}
	if len(snaps) != 1 {
		t.Fatalf("snapshots %v", snaps)
	}
	for _, f := range []string{"one.vrlog", "two.vrlog", filepath.Base(snaps[0])} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Mode().Perm() != 0o640 {
			t.Errorf("%s: %v %v, want mode 0640", f, st.Mode().Perm(), err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "truth.jsonl")); err != nil || !bytes.Contains(b, []byte(`"channel":"vr/`+r+`/state"`)) {
		t.Errorf("sim --log after SIGINT: %v", err)
	}
	noTemporaries(t, dir)
}

// A publisher that dies while the recording goes on fails the README's
// gate: the recorder's heartbeats mark the recording's end, and the
// silence from the state channel's last sample to it is an outage. Before
// heartbeats, the log ended with the last sample and every gate passed.
func TestStreamThatDiesFailsTheGate(t *testing.T) {
	r := robot(t)
	dir := t.TempDir()
	port := strconv.Itoa(freePort(t))
	res := shell(t, dir, "vrlog sim -q --no-multicast --listen tcp/127.0.0.1:"+port+" --robot "+r+" --width 64 --height 48 --duration 2s --start-delay 1s & "+
		"sleep 0.3; vrlog record -q --no-multicast --connect tcp/127.0.0.1:"+port+" -k 'vr/"+r+"/**' -s 'vr/"+r+"/camera/*' --duration 6s -o died.vrlog; rc=$?; wait; exit $rc")
	if res.code != 0 {
		t.Fatalf("record: %s", res)
	}
	res = shell(t, dir, "vrlog analyze died.vrlog --max-outage 200ms --json > died.json")
	if res.code != 1 {
		t.Fatalf("analyze --max-outage 200ms of a log whose simulator died 3 s before the recording ended: %s", res)
	}
	var rep struct {
		Channels []struct {
			Name    string
			Outages []struct {
				GapS  float64 `json:"gap_s"`
				Ended bool
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "died.json"))
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	ended := map[string]float64{}
	for _, c := range rep.Channels {
		for _, o := range c.Outages {
			if o.Ended {
				ended[c.Name] = o.GapS
			}
		}
	}
	// The simulator's 2 s (its start delay included) end about 1.7 s into
	// the 6 s recording: some 4.3 s of silence follow.
	for _, ch := range []string{"vr/" + r + "/state", "vr/" + r + "/camera/front"} {
		if g := ended[ch]; g < 3 || g > 5.5 {
			t.Errorf("%s: trailing silence %.3f s, want about 4.3 s (outages: %v)", ch, g, ended)
		}
	}
	// A recording stopped while the simulator still runs has no such outage.
	res = shell(t, dir, "vrlog sim -q --no-multicast --listen tcp/127.0.0.1:"+port+" --robot "+r+" --width 64 --height 48 --duration 8s --start-delay 500ms & "+
		"sleep 0.3; vrlog record -q --no-multicast --connect tcp/127.0.0.1:"+port+" -k 'vr/"+r+"/**' --duration 3s -o alive.vrlog; rc=$?; kill %1; wait; exit $rc")
	if res.code != 0 {
		t.Fatalf("record: %s", res)
	}
	if res = shell(t, dir, "vrlog analyze alive.vrlog --max-outage 200ms -q"); res.code != 0 {
		t.Fatalf("a live stream's recording: %s", res)
	}
}
