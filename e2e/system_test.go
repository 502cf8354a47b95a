package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
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
	"unicode/utf8"
)

// vrlog meets the system around it as CI runs it (issue 24): GNU timeout
// and wrappers that signal a process group, scripts that pass -q to any
// verb, mistyped verbs, torn inputs. Each row was a failure: its exit code
// and messages, before and after, are in the closing note.

// sysCase is one command line of this file's tables.
type sysCase struct {
	name   string
	script string // bash, in a directory holding run.vrlog (the sample)
	code   int
	want   []string // in stdout or stderr
	not    []string // in neither
	once   []string // in stderr exactly once
	check  func(t *testing.T, dir string, r result)
}

// runSystem runs each case in a fresh directory; vars are replaced in the
// script (%PORT%, a robot name %R%), and %FREEPORT% by a port of the
// case's own.
func runSystem(t *testing.T, vars map[string]string, cases []sysCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := sampleDir(t)
			script := c.script
			for k, v := range vars {
				script = strings.ReplaceAll(script, k, v)
			}
			script = strings.ReplaceAll(script, "%FREEPORT%", strconv.Itoa(freePort(t)))
			r := shell(t, dir, script)
			if r.code != c.code {
				t.Fatalf("%s: want exit %d; %s", script, c.code, r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stdout+r.stderr, w) {
					t.Errorf("%s: output lacks %q; %s", script, w, r)
				}
			}
			for _, w := range c.not {
				if strings.Contains(r.stdout+r.stderr, w) {
					t.Errorf("%s: output has %q; %s", script, w, r)
				}
			}
			for _, w := range c.once {
				if n := strings.Count(r.stderr, w); n != 1 {
					t.Errorf("%s: stderr says %q %d times, want once; %s", script, w, n, r)
				}
			}
			noTemporaries(t, dir)
			if c.check != nil {
				c.check(t, dir, r)
			}
		})
	}
}

// verified checks that each log verifies (index, footer, every CRC).
func verified(logs ...string) func(t *testing.T, dir string, r result) {
	return func(t *testing.T, dir string, _ result) {
		for _, l := range logs {
			ms, _ := filepath.Glob(filepath.Join(dir, l))
			if len(ms) == 0 {
				t.Errorf("%s: not written", l)
			}
			for _, m := range ms {
				if r := shell(t, dir, "vrlog verify "+filepath.Base(m)); r.code != 0 {
					t.Errorf("%s does not verify: %s", m, r)
				}
			}
		}
	}
}

// truthComplete checks that the simulator's truth log is whole JSON lines.
func truthComplete(t *testing.T, dir string, _ result) {
	f, err := os.Open(filepath.Join(dir, "truth.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var x map[string]any
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("truth.jsonl line %d: %v", n+1, err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("truth.jsonl is empty")
	}
}

// Signals that arrive together are one request: GNU timeout signals the
// child and then its process group, two signals microseconds apart. The
// second one used to stop the verb at once (exit 3, the log unfinished,
// an open snapshot window lost).
func TestSignalsTogetherAreOneRequest(t *testing.T) {
	r := nameOf(t)
	port := strconv.Itoa(freePort(t))
	dir := t.TempDir()
	sim := start(t, vrlogBin, "sim", "--listen", "tcp/127.0.0.1:"+port, "--no-multicast", "-q", "--robot", r,
		"--width", "64", "--height", "48", "--duration", "10m", "--log", filepath.Join(dir, "truth.jsonl"))
	defer stopProc(t, sim)

	ep := " --no-multicast --connect tcp/127.0.0.1:%PORT% "
	verbs := []struct {
		name, cmd string
		code      int    // vrlog's own exit code on SIGINT or SIGTERM
		want      string // what it prints as it finishes (record and sim: nothing with -q)
		check     func(t *testing.T, dir string, r result)
	}{
		{"record", "vrlog record -q" + ep + "-k 'vr/%R%/**' -s 'vr/%R%/camera/*' -o r.vrlog", 0, "", verified("r.vrlog")},
		{"replay", "vrlog replay run.vrlog --no-multicast --prefix %R% --capture '%R%/nothing/**' -o resp.vrlog", 3, "interrupted", verified("resp.vrlog")},
		{"sim", "vrlog sim -q --no-multicast --listen tcp/127.0.0.1:%FREEPORT% --robot %R%s --width 64 --height 48 --log truth.jsonl", 0, "", truthComplete},
		{"controller", "vrlog controller --no-multicast --state vr/%R%c/state", 0, "controller: 0 states", nil},
	}
	var cases []sysCase
	for _, v := range verbs {
		finishing := "vrlog: SIGTERM: finishing"
		cases = append(cases,
			sysCase{name: v.name + "/timeout", script: "timeout 3 " + v.cmd + "; echo rc=$?", want: []string{"rc=124", v.want},
				once: []string{finishing}, not: []string{"stopped;"}, check: v.check},
			sysCase{name: v.name + "/timeout -s INT", script: "timeout -s INT 3 " + v.cmd + "; echo rc=$?", want: []string{"rc=124", v.want},
				once: []string{"vrlog: SIGINT: finishing"}, not: []string{"stopped;"}, check: v.check},
			sysCase{name: v.name + "/timeout --kill-after", script: "timeout --preserve-status --kill-after=30 3 " + v.cmd, code: v.code, want: []string{v.want},
				once: []string{finishing}, not: []string{"stopped;"}, check: v.check},
			sysCase{name: v.name + "/kill twice", script: v.cmd + " & pid=$!; sleep 3; kill -TERM $pid; sleep 0.01; kill -TERM $pid; wait $pid", code: v.code,
				want: []string{v.want}, once: []string{finishing}, not: []string{"stopped;"}, check: v.check},
		)
	}
	// An open snapshot window is closed early and written, not lost.
	cases = append(cases, sysCase{name: "record --snapshot/kill twice in the window",
		script: "vrlog record -q" + ep + "-k 'vr/%R%/**' -o snap.vrlog --snapshot 2s --after 1m & pid=$!; sleep 3; kill -USR1 $pid; sleep 0.5;" +
			" kill -TERM $pid; sleep 0.01; kill -TERM $pid; wait $pid",
		want: []string{"record: snapshot: wrote snap_"}, once: []string{"vrlog: SIGTERM: finishing"}, not: []string{"stopped;"},
		check: verified("snap_*_signal-sigusr1.vrlog")})
	runSystem(t, map[string]string{"%PORT%": port, "%R%": r}, cases)
}

// The long log tools stop at once on the first signal of a group (exit 3),
// leaving neither the output nor a temporary file.
func TestSignalsStopTheLogTools(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.vrlog")
	bigLog(t, big, 200<<20)
	var cases []sysCase
	for _, c := range []struct{ verb, args string }{
		{"recover", "big.vrlog -o out.vrlog"},
		{"export", "big.vrlog -o out.mcap"},
		{"cut", "big.vrlog -o out.vrlog"},
		{"merge", "big.vrlog big.vrlog -o out.vrlog"},
	} {
		// timeout forwards a signal it receives to the child and then to
		// the process group, as when its time is up.
		cases = append(cases, sysCase{name: c.verb,
			script: "ln " + big + " big.vrlog; timeout 10m vrlog " + c.verb + " " + c.args + " & t=$!; " +
				"until [ -n \"$(find . -name '.*.tmp-*' -size +1M)\" ]; do sleep 0.01; done; kill -TERM $t; wait $t; echo rc=$?; ls -A",
			want: []string{"rc=3", "vrlog: interrupted by SIGTERM: stopped; 1 unfinished output file(s) removed"}, not: []string{"out."},
			once: []string{"interrupted by"}})
	}
	runSystem(t, nil, cases)
}

// An unknown verb is a usage error that suggests the verb meant; --version
// ends with a newline.
func TestUnknownVerbs(t *testing.T) {
	runSystem(t, nil, []sysCase{
		{name: "a verb cut short", script: "vrlog inf x", code: 2, want: []string{`vrlog: unknown command "inf"; did you mean info?`}, not: []string{"No help topic"}},
		{name: "a typo", script: "vrlog mrege a b", code: 2, want: []string{`unknown command "mrege"; did you mean merge?`}},
		{name: "nothing near", script: "vrlog xyzzy", code: 2, want: []string{`unknown command "xyzzy" (the commands: record, replay, analyze, recorders, rec, snapshot,`}},
		{name: "help of an unknown verb", script: "vrlog help inf", code: 2, want: []string{`unknown command "inf"; did you mean info?`}},
		{name: "help of a verb", script: "vrlog help info", want: []string{"vrlog info - "}},
		{name: "--version ends with a newline", script: "vrlog --version | od -c | tail -2", want: []string{`\n`}, check: func(t *testing.T, dir string, _ result) {
			if r := shell(t, dir, "vrlog --version"); !strings.HasSuffix(r.stdout, "\n") || strings.Count(r.stdout, "\n") != 1 {
				t.Errorf("--version: %q", r.stdout)
			}
		}},
	})
}

// Every verb takes -q/--quiet; the log tools then print no summary.
func TestQuietOnEveryVerb(t *testing.T) {
	port := strconv.Itoa(freePort(t))
	ep := " --no-multicast --connect tcp/127.0.0.1:" + port
	silent := func(t *testing.T, _ string, r result) {
		if r.stdout != "" {
			t.Errorf("-q: stdout %q", r.stdout)
		}
	}
	cases := map[string]sysCase{
		"record":     {script: "vrlog record -q -k 'vr/x/**' -o x.vrlog --duration 1s" + ep, code: 1, want: []string{"captured nothing"}},
		"snapshot":   {script: "vrlog snapshot -q x --timeout 1s" + ep, code: 3, want: []string{"no recorder answered"}},
		"rec":        {script: "vrlog rec status -q x --timeout 1s" + ep, code: 3, want: []string{"no recorder answered"}},
		"recorders":  {script: "vrlog recorders -q --timeout 300ms" + ep, want: []string{"none found"}},
		"collect":    {script: "vrlog collect -q x -o got --patience 1s --timeout 1s" + ep, code: 3, want: []string{`no recorder named "x": no recorder serves files`}},
		"fleet":      {script: "vrlog fleet -q x -o got --timeout 1s" + ep, code: 3, want: []string{"x: LEFT OUT: ", "none holds its liveliness token", "nothing was recorded"}},
		"replay":     {script: "vrlog replay -q run.vrlog --rate max --linger 0 --no-multicast --prefix %R%", want: []string{"replayed"}},
		"analyze":    {script: "vrlog analyze -q run.vrlog"},
		"ctl":        {script: "vrlog ctl status -q --timeout 300ms --replay %R%" + ep, code: 3, want: []string{"no replay answered"}},
		"controller": {script: "vrlog controller -q --duration 300ms --no-multicast --state vr/%R%/state", check: silent},
		"info":       {script: "vrlog info -q run.vrlog", want: []string{"file:      run.vrlog"}},
		"cat":        {script: "vrlog cat -q run.vrlog --limit 1", want: []string{"vr/r1/"}},
		"verify":     {script: "vrlog verify -q run.vrlog", check: silent},
		"recover":    {script: "vrlog recover -q run.vrlog -o r.vrlog", check: silent},
		"cut":        {script: "vrlog cut -q run.vrlog -o c.vrlog --end 5", check: silent},
		"filter":     {script: "vrlog filter -q run.vrlog -o c.vrlog --end 5", check: silent}, // cut's other name
		"merge":      {script: "vrlog merge --quiet run.vrlog run.vrlog -o m.vrlog", check: silent},
		"export":     {script: "vrlog export -q run.vrlog -o x.mcap", check: silent},
		"view":       {script: "timeout --preserve-status -s INT 2 vrlog view -q run.vrlog --addr 127.0.0.1:0", check: silent, want: []string{"serving on ws://127.0.0.1:"}},
		"sim":        {script: "vrlog sim -q --duration 1s --no-multicast --robot %R% --width 64 --height 48", check: silent},
		"completion": {script: "vrlog completion -q bash", want: []string{"complete -o bashdefault"}},
		"man":        {script: "vrlog man -q --markdown", want: []string{"# NAME"}},
	}
	// The table covers every verb vrlog lists.
	verbs := strings.Fields(shell(t, t.TempDir(), "vrlog --generate-bash-completion").stdout)
	for _, v := range verbs {
		if _, ok := cases[v]; !ok && v != "help" && v != "h" {
			t.Errorf("verb %s has no -q case", v)
		}
	}
	var list []sysCase
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range cases {
			if !yield(k) {
				return
			}
		}
	}) {
		c := cases[name]
		c.name = name
		c.not = append(c.not, "unknown flag")
		list = append(list, c)
	}
	runSystem(t, map[string]string{"%R%": nameOf(t)}, list)
}

// A torn input (what a killed recorder leaves) is said once on stderr, with
// the offset, by every verb that reads it, -q included; cat, cut, merge,
// export and recover used to say nothing.
func TestTornInputIsSaid(t *testing.T) {
	trunc := "head -c $(( $(stat -c %s run.vrlog) / 2 )) run.vrlog > trunc.vrlog && "
	torn := regexp.MustCompile(`: warning: trunc\.vrlog: torn tail at byte (\d+) of (\d+): `)
	offset := func(verb string) func(t *testing.T, dir string, r result) {
		return func(t *testing.T, dir string, r result) {
			m := torn.FindStringSubmatch(r.stderr)
			if m == nil || !strings.Contains(r.stderr, verb+": warning: trunc.vrlog: torn tail at byte ") {
				t.Fatalf("%s: no torn tail warning: %s", verb, r)
			}
			st, _ := os.Stat(filepath.Join(dir, "trunc.vrlog"))
			if off, _ := strconv.ParseInt(m[1], 10, 64); m[2] != strconv.FormatInt(st.Size(), 10) || off <= 0 || off >= st.Size() {
				t.Errorf("%s: torn tail at %s of %s, file size %d", verb, m[1], m[2], st.Size())
			}
		}
	}
	var cases []sysCase
	for _, c := range []struct{ verb, args string }{
		{"cat", "trunc.vrlog --limit 3"},
		{"cut", "trunc.vrlog -o c.vrlog"},
		{"merge", "trunc.vrlog run.vrlog -o m.vrlog"},
		{"export", "trunc.vrlog -o x.mcap"},
		{"recover", "trunc.vrlog -o r.vrlog"},
		{"analyze", "trunc.vrlog"},
		{"replay", "trunc.vrlog --tolerant --rate max --linger 0 --no-multicast --prefix %R%"},
	} {
		cases = append(cases, sysCase{name: c.verb, script: trunc + "vrlog " + c.verb + " -q " + c.args,
			once: []string{"torn tail at byte"}, check: offset(c.verb)})
	}
	cases = append(cases, sysCase{name: "a whole log says nothing", script: "vrlog cut -q run.vrlog -o c.vrlog && vrlog cat -q run.vrlog --limit 1 > /dev/null",
		not: []string{"warning"}})
	runSystem(t, map[string]string{"%R%": nameOf(t)}, cases)
}

// A log cut at its footer (a recorder killed with kill -9 at a chunk
// boundary: every chunk sound, no torn tail, no footer) is not intact:
// every verb that reads it says so once on stderr, -q included, and
// analyze --require-intact fails it (it said "whole and undamaged", and
// replay and the others said nothing).
func TestUnfinishedInputIsSaid(t *testing.T) {
	k9 := "head -c $(tail -c 24 run.vrlog | od -An -t u8 -N 8 | tr -d ' ') run.vrlog > k9.vrlog && "
	const said = "k9.vrlog: no footer: the log was not closed"
	var cases []sysCase
	for _, c := range []struct{ verb, args string }{
		{"info", "k9.vrlog"},
		{"cat", "k9.vrlog --limit 3"},
		{"cut", "k9.vrlog -o c.vrlog"},
		{"merge", "k9.vrlog run.vrlog -o m.vrlog"},
		{"export", "k9.vrlog -o x.mcap"},
		{"recover", "k9.vrlog -o r.vrlog"},
		{"analyze", "k9.vrlog"},
		{"replay", "k9.vrlog --rate max --linger 0 --no-multicast --prefix %R%"},
	} {
		cases = append(cases, sysCase{name: c.verb, script: k9 + "vrlog " + c.verb + " -q " + c.args,
			once: []string{c.verb + ": warning: " + said}})
	}
	cases = append(cases,
		sysCase{name: "analyze --require-intact fails it", script: k9 + "vrlog analyze -q --require-intact k9.vrlog", code: 1,
			want: []string{"FAIL  intact k9.vrlog: no footer: the log was not closed"}, not: []string{"whole and undamaged"}},
		sysCase{name: "verify says it", script: k9 + "vrlog verify k9.vrlog", code: 1, want: []string{"no footer: the log was not closed properly"}},
		sysCase{name: "analyze --require-intact passes a whole log", script: "vrlog analyze -q --require-intact run.vrlog", not: []string{"warning"}})
	runSystem(t, map[string]string{"%R%": nameOf(t)}, cases)
}

// `vrlog snapshot NAME` and `vrlog rec VERB NAME` for a NAME no running
// recorder has list the ones there are instead of waiting for their
// --timeout, exit 2, and say no more than that: nothing refused anything
// (rec said "1 of 1 recorders refused the request"). `rec --all` with no
// recorder at all gives up after vrlog recorders' 3 s discovery, not its
// --timeout (it waited the whole 30 s).
func TestSnapshotOfAnUnknownRecorder(t *testing.T) {
	r := nameOf(t)
	port := strconv.Itoa(freePort(t))
	dir := t.TempDir()
	rec := startCmd(t, func() *exec.Cmd {
		c := exec.Command(vrlogBin, "record", "-q", "--no-multicast", "--listen", "tcp/127.0.0.1:"+port, "-k", "vr/"+r+"/**",
			"-o", filepath.Join(dir, "s.vrlog"), "--snapshot", "5s", "--name", r+"good", "--duration", "2m")
		return c
	}())
	defer stopProc(t, rec)
	ep := " --no-multicast --connect tcp/127.0.0.1:" + port
	runSystem(t, nil, []sysCase{
		{name: "wrong name", script: "timeout 60 vrlog snapshot " + r + "wrong --timeout 2m" + ep, code: 2,
			want: []string{`no recorder named "` + r + `wrong" (the recorders running: ` + r + `good)`}, not: []string{"refused"}},
		{name: "rec status", script: "timeout 60 vrlog rec status " + r + "wrong --timeout 2m" + ep, code: 2,
			want: []string{"no such recorder", `no recorder named "` + r + `wrong" (the recorders running: ` + r + `good)`}, not: []string{"refused", "no answer"}},
		{name: "rec stop", script: "timeout 60 vrlog rec stop " + r + "wrong --timeout 2m" + ep, code: 2,
			want: []string{`no recorder named "` + r + `wrong" (the recorders running: ` + r + `good)`, `vrlog: no recorder named "` + r + `wrong" (see above)`}, not: []string{"refused"}},
		{name: "rec --all, none running", script: "timeout 20 vrlog rec status --all --timeout 60s --no-multicast --listen tcp/127.0.0.1:%FREEPORT%", code: 3,
			want: []string{"no recorder found within 3s"}},
		{name: "rec stop --json", script: "timeout 60 vrlog rec stop " + r + "wrong " + r + "good --json --timeout 2m" + ep, code: 2,
			want: []string{`"error": "no recorder named \"` + r + `wrong\"`, `vrlog: 1 of 2 recorders refused the request; no recorder named "` + r + `wrong" (see above)`}},
	})
}

// stopProc ends a process a test started the way a user does (SIGINT), so
// it closes its transports and removes its iceoryx2 files.
func stopProc(t *testing.T, p *proc) {
	t.Helper()
	p.signal(syscall.SIGINT)
	p.wait(t, 30*time.Second)
}

// On a terminal, info, analyze, cat and --help fit its width; off one the
// layout scripts read stays, except --help, which wraps at 80. (They
// printed up to 268, 181, 615 and 250 columns.) script(1) gives the
// command a terminal of 80 columns.
func TestTextFitsTheTerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) (util-linux) is not installed: no terminal to run the verbs on")
	}
	widest := func(limit int, wider bool) func(t *testing.T, dir string, r result) {
		return func(t *testing.T, _ string, r result) {
			w, line := 0, ""
			for _, l := range strings.Split(strings.ReplaceAll(r.stdout, "\r", ""), "\n") {
				if n := utf8.RuneCountInString(l); n > w {
					w, line = n, l
				}
			}
			if wider != (w > limit) {
				t.Errorf("widest line %d columns (limit %d, wider wanted: %v): %q", w, limit, wider, line)
			}
		}
	}
	tty := func(cmd string) string { return `script -qec "stty cols 80; ` + cmd + `" /dev/null` }
	var cases []sysCase
	for _, cmd := range []string{"vrlog info run.vrlog", "vrlog analyze run.vrlog", "vrlog cat run.vrlog --limit 20", "vrlog export --help", "vrlog --help"} {
		cases = append(cases, sysCase{name: cmd + " on a terminal", script: tty(cmd), check: widest(80, false)})
	}
	for _, cmd := range []string{"vrlog info run.vrlog", "vrlog analyze run.vrlog", "vrlog cat run.vrlog --limit 20"} {
		cases = append(cases, sysCase{name: cmd + " off a terminal", script: cmd, check: widest(80, true)})
	}
	for _, cmd := range []string{"vrlog export --help", "vrlog --help", "vrlog record --help"} {
		cases = append(cases, sysCase{name: cmd + " off a terminal", script: cmd, check: widest(80, false)})
	}
	// A binary output is refused on a terminal, as other tools refuse it
	// (export -o - wrote MCAP onto the screen); a CSV table or a pipe is fine.
	for _, cmd := range []string{"vrlog export run.vrlog -o -", "vrlog cut run.vrlog -o -", "vrlog merge run.vrlog run.vrlog -o -",
		"vrlog recover run.vrlog -o -"} {
		cases = append(cases, sysCase{name: cmd + " on a terminal", script: tty(cmd), code: 2, want: []string{"-o -: standard output is a terminal"}})
	}
	cases = append(cases,
		sysCase{name: "export csv to a terminal", script: tty("vrlog export run.vrlog --format csv -o - --end 0.1"), want: []string{"index,has_stamp"}},
		sysCase{name: "export to a pipe", script: tty("vrlog export run.vrlog -o - | head -c 8 | od -c"), want: []string{"M   C   A   P"}})
	runSystem(t, nil, cases)
}

// --help off a terminal fits 80 columns, leaves no word of a paragraph
// alone on a line, and never breaks an example mid-command without a
// backslash.
func TestHelpFitsAndFills(t *testing.T) {
	dir := t.TempDir()
	for _, verb := range []string{"analyze", "cat", "controller", "ctl", "cut", "export", "info", "merge", "record", "recover", "replay", "sim", "snapshot", "verify", "view"} {
		r := shell(t, dir, "vrlog "+verb+" --help")
		if r.code != 0 {
			t.Fatalf("%s --help: %s", verb, r)
		}
		lines := strings.Split(r.stdout, "\n")
		examples := false
		for i, l := range lines {
			if len(l) > 80 {
				t.Errorf("%s --help: %d columns: %q", verb, len(l), l)
			}
			trimmed := strings.TrimSpace(l)
			switch {
			case trimmed == "":
				examples = false
			case strings.HasSuffix(trimmed, "EXAMPLES:"):
				examples = true
			case examples && i > 0 && !strings.HasSuffix(lines[i-1], `\`) && !strings.HasSuffix(lines[i-1], "EXAMPLES:") &&
				!strings.HasPrefix(trimmed, verb+" ") && !strings.HasPrefix(trimmed, "vrlog ") && !strings.HasPrefix(trimmed, "#"):
				t.Errorf("%s --help: an example broken without a backslash: %q after %q", verb, l, lines[i-1])
			}
		}
	}
	for verb, whole := range map[string]string{
		"cut":      "that could not be written, interrupted",
		"snapshot": "(a recorder still starting is looked for until --timeout):",
		"sim":      "then come back with seq from 0",
	} {
		r := shell(t, dir, "vrlog "+verb+" --help")
		if flat := strings.Join(strings.Fields(r.stdout), " "); !strings.Contains(flat, whole) {
			t.Errorf("%s --help lacks %q", verb, whole)
		}
		for _, l := range strings.Split(r.stdout, "\n") {
			if f := strings.Fields(l); len(f) == 1 && (f[0] == "be" || f[0] == "answers):" || f[0] == "then") {
				t.Errorf("%s --help: a word alone on a line: %q", verb, l)
			}
		}
	}
}

// A terminal that reports its columns but 0 rows (script(1), CI
// pseudo-terminals) is as wide as it says: --help fits 50 columns and
// uses 200.
func TestHelpWidthWithZeroRows(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to run vrlog on a pseudo-terminal")
	}
	dir := t.TempDir()
	for _, cols := range []int{50, 200} {
		r := shell(t, dir, fmt.Sprintf("script -qec 'stty rows 0 cols %d; vrlog analyze --help' /dev/null", cols))
		if r.code != 0 {
			t.Fatalf("%d columns: %s", cols, r)
		}
		widest := 0 // of the flags' usage (the examples stay whole at any width)
		_, opts, _ := strings.Cut(strings.ReplaceAll(r.stdout, "\r", ""), "\nOPTIONS:")
		for _, l := range strings.Split(opts, "\n") {
			widest = max(widest, utf8.RuneCountInString(l))
		}
		if widest > cols || cols > 80 && widest <= 80 {
			t.Errorf("%d columns, 0 rows: the widest line is %d", cols, widest)
		}
	}
}
