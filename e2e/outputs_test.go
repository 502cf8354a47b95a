package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/outfile/outfiletest"
)

// Outputs onto devices, FIFOs, sockets, links and "-", and live logs
// (issues 24 and 29; docs/cli.md "Outputs"): each case asserts the exit
// code, the message, and that the device nodes, FIFOs, links and live
// logs are what they were afterwards. Device nodes are private (mknod in
// the test's directory), never the machine's /dev/null or /dev/full.

// nodes is the setup of every case: a null and a full device, a FIFO.
const nodes = "mknod null c 1 3 && mknod full c 1 7 && mkfifo fifo || exit 9\n"

// needMknod skips a test that needs private device nodes where they
// cannot be made (not root, or a container without CAP_MKNOD).
func needMknod(t *testing.T) { outfiletest.Mknod(t, "probe", outfiletest.NullMinor) }

// intactNodes fails the test unless null, full and fifo in dir are still
// the nodes nodes made.
func intactNodes(t *testing.T, dir string) {
	t.Helper()
	outfiletest.IsDevice(t, filepath.Join(dir, "null"), outfiletest.NullMinor)
	outfiletest.IsDevice(t, filepath.Join(dir, "full"), outfiletest.FullMinor)
	outfiletest.IsFIFO(t, filepath.Join(dir, "fifo"))
}

// onNodes runs cases after nodes, each checking the nodes intact.
func onNodes(t *testing.T, cases []contractCase) {
	needMknod(t)
	for i := range cases {
		c := &cases[i]
		c.script = nodes + c.script
		check := c.check
		c.check = func(t *testing.T, dir string, r result) {
			intactNodes(t, dir)
			if check != nil {
				check(t, dir, r)
			}
		}
	}
	runContract(t, cases)
}

// verifies is a check that the log FILE reads back (vrlog verify).
func verifies(file string) func(*testing.T, string, result) {
	return func(t *testing.T, dir string, _ result) {
		t.Helper()
		if r := shell(t, dir, "vrlog verify "+file); r.code != 0 {
			t.Errorf("vrlog verify %s: %s", file, r)
		}
	}
}

// 1. An existing device or FIFO is written in place, with no --force;
// a full device is exit 3; nothing is renamed over a node.
func TestOutputsOntoDevices(t *testing.T) {
	onNodes(t, []contractCase{
		{name: "analyze --csv null", script: "vrlog analyze run.vrlog --csv null"},
		{name: "analyze --html --junit null", script: "vrlog analyze run.vrlog --html null --junit null"},
		{name: "analyze --csv full", script: "vrlog analyze run.vrlog --csv full", code: 3, want: []string{"full: no space left on device"}},
		{name: "export null", script: "vrlog export run.vrlog -o null", want: []string{"wrote null:", "streamed in place, not read back"}},
		{name: "export --force null", script: "vrlog export run.vrlog -o null --force"},
		{name: "export csv null", script: "vrlog export run.vrlog --format csv -o null"},
		{name: "export full", script: "vrlog export run.vrlog -o full", code: 3, want: []string{"no space left on device"}},
		{name: "cut null", script: "vrlog cut run.vrlog -o null --force"},
		{name: "cut full", script: "vrlog cut run.vrlog -o full", code: 3, want: []string{"no space left on device"}},
		{name: "merge null", script: "vrlog merge run.vrlog run.vrlog -o null"},
		{name: "recover null", script: "vrlog recover run.vrlog -o null --force", want: []string{"streamed in place, not read back"}},
		{name: "recover full", script: "vrlog recover run.vrlog -o full", code: 3, want: []string{"no space left on device"}},
		// A FIFO is streamed to its reader: the saved stream is a finished log.
		{name: "cut fifo", script: "timeout 30 cat fifo > saved.vrlog & vrlog cut run.vrlog -o fifo && wait", check: verifies("saved.vrlog")},
		{name: "recover fifo", script: "timeout 30 cat fifo > saved.vrlog & vrlog recover run.vrlog -o fifo && wait", check: verifies("saved.vrlog")},
		{name: "export fifo", script: "timeout 30 cat fifo > saved.mcap & vrlog export run.vrlog -o fifo && wait", made: []string{"saved.mcap"},
			check: func(t *testing.T, dir string, _ result) { isMCAP(t, filepath.Join(dir, "saved.mcap")) }},
		{name: "analyze --junit fifo", script: "timeout 30 cat fifo > j.xml & vrlog analyze run.vrlog --max-skips 100 --junit fifo && wait",
			check: func(t *testing.T, dir string, _ result) { hasText(t, filepath.Join(dir, "j.xml"), "<testsuite") }},
	})
}

// A socket is written in place (connected to), never replaced.
func TestOutputOntoASocket(t *testing.T) {
	dir := sampleDir(t)
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(c)
		c.Close()
		got <- b
	}()
	if r := shell(t, dir, "vrlog analyze run.vrlog --max-skips 100 --junit sock"); r.code != 0 {
		t.Fatalf("--junit onto a socket: %s", r)
	}
	if b := <-got; !bytes.Contains(b, []byte("<testsuite")) {
		t.Fatalf("the socket's listener got %q", b)
	}
	if st, err := os.Lstat(sock); err != nil || st.Mode()&fs.ModeSocket == 0 {
		t.Fatalf("the socket was replaced: %v %v", st, err)
	}
}

// A link is followed (the target written, the link kept); "-" is stdout
// for every output that streams; one --force rule for every verb.
func TestOutputsLinksDashForce(t *testing.T) {
	link := func(name, target string) func(*testing.T, string, result) {
		return func(t *testing.T, dir string, _ result) {
			t.Helper()
			st, err := os.Lstat(filepath.Join(dir, name))
			if err != nil || st.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("%s is no longer a link: %v %v", name, st, err)
			}
			if st, err := os.Stat(filepath.Join(dir, target)); err != nil || st.Size() == 0 {
				t.Errorf("the link's target %s was not written: %v", target, err)
			}
		}
	}
	runContract(t, []contractCase{
		{name: "analyze --csv dangling link", script: "mkdir out && ln -s out/t.csv link.csv && vrlog analyze run.vrlog --csv link.csv", check: link("link.csv", "out/t.csv")},
		{name: "analyze --csv link to a file", script: "echo old > t.csv && ln -s t.csv link.csv && vrlog analyze run.vrlog --csv link.csv", code: 2,
			want: []string{"link.csv: file already exists (use --force to replace it)"}},
		{name: "analyze --csv link --force", script: "echo old > t.csv && ln -s t.csv link.csv && vrlog analyze run.vrlog --csv link.csv --force", check: link("link.csv", "t.csv")},
		{name: "cut link --force", script: "echo old > c.vrlog && ln -s c.vrlog l.vrlog && vrlog cut run.vrlog -o l.vrlog --force && vrlog verify c.vrlog", check: link("l.vrlog", "c.vrlog")},
		{name: "analyze --csv -", script: "vrlog analyze run.vrlog -q --csv - > t.csv", check: func(t *testing.T, dir string, _ result) { hasText(t, filepath.Join(dir, "t.csv"), "channel,seq") }},
		{name: "analyze --junit -", script: "vrlog analyze run.vrlog -q --max-skips 100 --junit - > j.xml", check: func(t *testing.T, dir string, _ result) { hasText(t, filepath.Join(dir, "j.xml"), "<testsuite") }},
		{name: "analyze --html -", script: "vrlog analyze run.vrlog -q --html - > h.html", check: func(t *testing.T, dir string, _ result) { hasText(t, filepath.Join(dir, "h.html"), "<html") }},
		{name: "analyze two -", script: "vrlog analyze run.vrlog -q --csv - --junit -", code: 2, want: []string{"--csv - and --junit - all write to stdout"}},
		{name: "analyze - without -q", script: "vrlog analyze run.vrlog --junit -", code: 2, want: []string{"--junit - writes the JUnit report to stdout: add -q"}},
		{name: "export -", script: "vrlog export run.vrlog -o - > s.mcap", want: []string{"wrote -:"}, check: func(t *testing.T, dir string, r result) {
			isMCAP(t, filepath.Join(dir, "s.mcap"))
		}},
		{name: "export csv -", script: "vrlog export run.vrlog --format csv -o - > s.csv", check: func(t *testing.T, dir string, _ result) { hasText(t, filepath.Join(dir, "s.csv"), "channel") }},
		{name: "cut -o /dev/stdout > file", script: "vrlog cut run.vrlog -o /dev/stdout > c.vrlog", want: []string{"wrote /dev/stdout"}, check: verifies("c.vrlog")},
		{name: "cut -o /dev/stdout | pipe", script: "vrlog cut run.vrlog -o /dev/stdout | cat > c.vrlog", check: verifies("c.vrlog")},
		{name: "analyze --csv /dev/stdout", script: "vrlog analyze run.vrlog --csv /dev/stdout > t.csv", code: 2, want: []string{"--csv /dev/stdout writes the CSV to stdout: add -q"}},
		{name: "cut -", script: "vrlog cut run.vrlog -o - > c.vrlog", check: verifies("c.vrlog")},
		{name: "merge -", script: "vrlog merge run.vrlog run.vrlog -o - > m.vrlog", check: verifies("m.vrlog")},
		{name: "recover -", script: "vrlog recover run.vrlog -o - > r.vrlog", check: verifies("r.vrlog")},
		{name: "recover - --json", script: "vrlog recover run.vrlog -o - --json", code: 2, want: []string{"drop --json"}},
		// One --force rule: an existing regular file needs it, for every verb.
		{name: "analyze --csv exists", script: "touch t.csv && vrlog analyze run.vrlog --csv t.csv", code: 2, want: []string{"t.csv: file already exists (use --force to replace it)"}},
		{name: "analyze --junit exists", script: "touch j.xml && vrlog analyze run.vrlog --junit j.xml", code: 2, want: []string{"use --force"}},
		{name: "analyze --csv --force", script: "touch t.csv && vrlog analyze run.vrlog --csv t.csv --force", check: func(t *testing.T, dir string, _ result) { hasText(t, filepath.Join(dir, "t.csv"), "channel,seq") }},
		{name: "export exists", script: "touch m.mcap && vrlog export run.vrlog -o m.mcap", code: 2, want: []string{"use --force"}},
		{name: "recover exists", script: "touch r.vrlog && vrlog recover run.vrlog -o r.vrlog", code: 2, want: []string{"create r.vrlog: file already exists (use --force to replace it)"}},
		{name: "record exists", script: "touch o.vrlog && vrlog record --no-multicast -o o.vrlog -k 'x/**' -d 1s", code: 2, want: []string{"create o.vrlog: file already exists (use --force to replace it)"},
			check: func(t *testing.T, _ string, r result) {
				if strings.Contains(r.stderr, "record: writing") {
					t.Errorf("said it was writing an output it refused: %s", r)
				}
			}},
		{name: "record -o -", script: "vrlog record --no-multicast -o - -k 'x/**' -d 1s", code: 2, want: []string{"record -o -: a recording cannot go to standard output as '-'", "use -o /dev/stdout"}},
		{name: "sim --log exists", script: "touch truth.jsonl && vrlog sim --log truth.jsonl --duration 1s", code: 2, want: []string{"truth.jsonl: file already exists (use --force to replace it)"}},
	})
}

func isMCAP(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89MCAP0\r\n")) || !bytes.HasSuffix(b, []byte("\x89MCAP0\r\n")) {
		t.Errorf("%s is not a complete MCAP file (%d bytes, %v)", p, len(b), err)
	}
}

func hasText(t *testing.T, p, text string) {
	t.Helper()
	if b, err := os.ReadFile(p); err != nil || !strings.Contains(string(b), text) {
		t.Errorf("%s lacks %q (%d bytes, %v)", p, text, len(b), err)
	}
}

// recorder starts `vrlog record` of robot r's keys listening on port,
// writing out; extra flags after.
func recorder(t *testing.T, r, port, out string, extra ...string) *proc {
	t.Helper()
	return start(t, vrlogBin, append([]string{"record", "--listen", "tcp/127.0.0.1:" + port, "--no-multicast", "-q", "-o", out,
		"-k", "vr/" + r + "/**", "--probe-interval", "0"}, extra...)...)
}

// simFor runs the simulator for d against the recorder on port.
func simFor(t *testing.T, r, port, d string, extra ...string) *proc {
	t.Helper()
	return start(t, vrlogBin, append([]string{"sim", "--connect", "tcp/127.0.0.1:" + port, "--no-multicast", "-q", "--robot", r,
		"--width", "64", "--height", "48", "--frame-hz", "5", "--state-hz", "50", "--start-delay", "1s", "--duration", d}, extra...)...)
}

// waitFile waits until p exists with at least n bytes.
func waitFile(t *testing.T, p string, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if st, err := os.Stat(p); err == nil && st.Size() >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached %d bytes", p, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// 3. A live log is locked: a second recorder (--force too) is refused
// naming the first one's PID, the live file is untouched, readers say
// "being written" and read it; replacing the finished log is a new inode.
func TestTwoRecordersOnOneFile(t *testing.T) {
	r := robot(t)
	dir := t.TempDir()
	port := strconv.Itoa(freePort(t))
	live := filepath.Join(dir, "live.vrlog")
	first := recorder(t, r, port, live)
	sim := simFor(t, r, port, "6s")
	waitFile(t, live, 4096)
	ino := inode(t, live)
	pid := strconv.Itoa(first.cmd.Process.Pid)
	for _, force := range []string{"", "--force"} {
		args := []string{"record", "--no-multicast", "-q", "-o", live, "-k", "vr/" + r + "/**", "--duration", "5s"}
		if force != "" {
			args = append(args, force)
		}
		res := run(t, dir, args...)
		if res.code != 3 || !strings.Contains(res.stderr, "live.vrlog: being written by PID "+pid) || !strings.Contains(res.stderr, "refused whatever the options") {
			t.Fatalf("second recorder %s: %s", force, res)
		}
		if inode(t, live) != ino {
			t.Fatal("the second recorder replaced the live log")
		}
	}
	if res := run(t, dir, "info", live); res.code != 0 || !strings.Contains(res.stdout, "being written by PID "+pid) || strings.Contains(res.stdout, "hint:") {
		t.Fatalf("info of the live log: %s", res)
	}
	if res := run(t, dir, "cat", live, "--limit", "1"); res.code != 0 || !strings.Contains(res.stderr, "being written by PID "+pid+" (vrlog); reading what is there") {
		t.Fatalf("cat of the live log: %s", res)
	}
	if res := run(t, dir, "analyze", live); res.code != 0 || !strings.Contains(res.stderr, "being written by PID "+pid) || strings.Contains(res.stderr, "torn tail") {
		t.Fatalf("analyze of the live log: %s", res)
	}
	if code := sim.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("sim exit %d:\n%s", code, sim.stderr)
	}
	first.signal(syscall.SIGINT)
	if code := first.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("first recorder exit %d:\n%s", code, first.stderr)
	}
	if res := run(t, dir, "verify", live); res.code != 0 {
		t.Fatalf("the first recorder's log: %s", res)
	}
	// Finished: a recorder with --force replaces it by a rename.
	third := recorder(t, r, port, live, "--force", "--duration", "1s")
	third.wait(t, 20*time.Second)
	if inode(t, live) == ino {
		t.Fatal("the finished log was truncated in place, not replaced")
	}
	noTemporaries(t, dir)
}

// run runs vrlog with args in dir.
func run(t *testing.T, dir string, args ...string) result {
	t.Helper()
	script := "vrlog"
	for _, a := range args {
		script += " '" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return shell(t, dir, script)
}

// nodeDir makes the nodes in a directory of the test's and returns it,
// the path of the node named out and, for the FIFO, what its reader gets.
func nodeDir(t *testing.T, out string) (dir, node string, saved <-chan []byte) {
	t.Helper()
	dir = t.TempDir()
	if res := shell(t, dir, nodes); res.code != 0 {
		t.Fatal(res)
	}
	node = filepath.Join(dir, out)
	if out == "fifo" {
		saved = outfiletest.Reader(node)
	}
	return dir, node, saved
}

// Issue 29: record -o DEV|FIFO and sim --log DEV|FIFO are written
// sequentially and completely (the saved FIFO stream verifies), exit 0;
// an explicit --sync says once that it does not apply; a full device is
// exit 3.
func TestStreamingOutputs(t *testing.T) {
	needMknod(t)
	for _, c := range []struct {
		name     string
		out      string // null, full, fifo
		extra    []string
		code     int
		want     string
		simOnLog bool // the node is sim's --log, the recorder writes a file
	}{
		{name: "record null", out: "null"},
		{name: "record null --sync flush", out: "null", extra: []string{"--sync", "flush"}, want: "null is not a regular file: --sync flush does not apply"},
		{name: "record fifo", out: "fifo"},
		{name: "record full", out: "full", code: 3, want: "no space left on device: the stream ended early"},
		{name: "sim --log null", out: "null", simOnLog: true},
		{name: "sim --log fifo", out: "fifo", simOnLog: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := robot(t)
			dir, node, saved := nodeDir(t, c.out)
			port := strconv.Itoa(freePort(t))
			recOut, simArgs := node, []string{}
			if c.simOnLog {
				recOut, simArgs = filepath.Join(dir, "rec.vrlog"), []string{"--log", node}
			}
			rec := recorder(t, r, port, recOut, c.extra...)
			sim := simFor(t, r, port, "3s", simArgs...)
			simCode := sim.wait(t, 30*time.Second)
			time.Sleep(300 * time.Millisecond)
			rec.signal(syscall.SIGINT)
			recCode := rec.wait(t, 20*time.Second)
			code, stderr := recCode, rec.stderr.String()
			if c.simOnLog {
				code, stderr = simCode, sim.stderr.String()
			} else if simCode != 0 {
				t.Fatalf("sim exit %d:\n%s", simCode, sim.stderr)
			}
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, want %d and %q:\n%s", code, c.code, c.want, stderr)
			}
			if c.code != 0 && (strings.Contains(stderr, "vrlog recover") || strings.Contains(stderr, "record: left")) {
				t.Errorf("a stream that ended early is no log to verify or recover:\n%s", stderr)
			}
			if c.want != "" && strings.Count(stderr, c.want) != 1 {
				t.Errorf("said %d times: %q", strings.Count(stderr, c.want), c.want)
			}
			if c.out == "fifo" {
				b := <-saved
				if c.simOnLog {
					if n := bytes.Count(b, []byte("\n")); n < 50 {
						t.Fatalf("the FIFO's reader got %d lines", n)
					}
				} else {
					p := filepath.Join(dir, "saved.vrlog")
					os.WriteFile(p, b, 0o644)
					if res := run(t, dir, "verify", p); res.code != 0 {
						t.Fatalf("the log read from the FIFO, saved: %s", res)
					}
					recs, _ := readLog(t, p)
					if len(recs) < 50 {
						t.Fatalf("the log read from the FIFO holds %d records", len(recs))
					}
				}
			}
			intactNodes(t, dir)
		})
	}
}

// Issue 29: replay --capture -o DEV|FIFO into the example controller: the
// response log is streamed completely (the saved FIFO stream verifies),
// exit 0; a full device is exit 3.
func TestCaptureOntoDevices(t *testing.T) {
	needMknod(t)
	for _, c := range []struct {
		out  string
		code int
		want string
	}{{"null", 0, ""}, {"fifo", 0, ""}, {"full", 3, "no space left on device"}} {
		t.Run(c.out, func(t *testing.T) {
			r := robot(t)
			dir, node, saved := nodeDir(t, c.out)
			ep := "tcp/127.0.0.1:" + strconv.Itoa(freePort(t))
			state, cmd := "vr/"+r+"/state", "vr/"+r+"/cmd"
			ctl := start(t, vrlogBin, "controller", "--state", state, "--command", cmd, "--delay", "2ms", "--connect", ep, "--no-multicast")
			res := run(t, dir, "replay", filepath.Join(root(), "testdata", "sample.vrlog"), "--channel", "vr/r1/state", "--remap", "vr/r1/state="+state,
				"--start", "1", "--duration", "2", "--rate", "max", "--listen", ep, "--no-multicast", "--quiet",
				"--wait-for-subscribers", "1", "--wait-timeout", "60s", "--lockstep", cmd, "--capture", cmd, "-o", node)
			ctl.signal(syscall.SIGINT)
			ctl.wait(t, 20*time.Second)
			if res.code != c.code || !strings.Contains(res.stderr, c.want) {
				t.Fatalf("replay --capture -o %s: want exit %d and %q; %s", c.out, c.code, c.want, res)
			}
			if c.out == "fifo" {
				p := filepath.Join(dir, "saved.vrlog")
				os.WriteFile(p, <-saved, 0o644)
				if res := run(t, dir, "verify", p); res.code != 0 {
					t.Fatalf("the response log read from the FIFO, saved: %s", res)
				}
			}
			intactNodes(t, dir)
		})
	}
}

// The messages of outputs written in place say what was written: export
// --format csv onto a stream writes one table with one header (not files
// under a directory); recover counts the bytes it wrote, also onto a
// device or stdout (of which it cannot stat a size): its "kept:" line is
// that of the same recovery into a file.
func TestStreamedOutputMessages(t *testing.T) {
	kept := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "kept:") {
				return l
			}
		}
		return ""
	}
	sameKept := func(t *testing.T, dir string, r result) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "f.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if want, got := kept(string(b)), kept(r.stdout+r.stderr); want == "" || got != want {
			t.Errorf("kept line %q, want %q (recovered into a file)\n%s", got, want, r)
		}
	}
	const file = "vrlog recover run.vrlog -o f.vrlog > f.txt 2>&1 && "
	onNodes(t, []contractCase{
		{name: "export csv null", script: "vrlog export run.vrlog --format csv -o null", want: []string{"rows as one CSV table of 3 channel(s), one header, to null (streamed in place)"}},
		{name: "export csv -", script: "vrlog export run.vrlog --format csv -o - > s.csv", want: []string{"rows as one CSV table of 3 channel(s), one header, to - (streamed in place)"}},
		{name: "export csv fifo", script: "timeout 30 cat fifo > s.csv & vrlog export run.vrlog --format csv -o fifo && wait", want: []string{"one CSV table of 3 channel(s), one header, to fifo (streamed in place)"}},
		{name: "export csv file", script: "vrlog export run.vrlog --format csv -o s.csv", want: []string{"one CSV table of 3 channel(s), one header, to s.csv\n"}},
		{name: "export csv dir", script: "vrlog export run.vrlog --format csv -o out/", want: []string{"rows as 3 CSV file(s) under out/"}},
		{name: "recover --json file", script: "vrlog recover run.vrlog -o r.vrlog --json", check: func(t *testing.T, dir string, r result) {
			st, err := os.Stat(filepath.Join(dir, "r.vrlog"))
			if err != nil {
				t.Fatal(err)
			}
			if want := `"dest_bytes":` + strconv.FormatInt(st.Size(), 10) + ","; !strings.Contains(r.stdout, want) {
				t.Errorf("want %s in %s", want, r)
			}
		}},
		{name: "recover null", script: file + "vrlog recover run.vrlog -o null", check: sameKept},
		{name: "recover -", script: file + "vrlog recover run.vrlog -o - > r.vrlog", check: sameKept},
		{name: "recover fifo", script: file + "(timeout 30 cat fifo > r.vrlog &) && vrlog recover run.vrlog -o fifo", check: sameKept},
		{name: "recover link to null", script: file + "ln -s null l && vrlog recover run.vrlog -o l", check: sameKept},
	})
}

// A record without a capture stamp (a clock probe) has no seq, t_ns or
// elapsed in cat --json: the keys are absent, not 0 or a time before the
// epoch (docs/log-tools.md cat).
func TestCatJSONUnstamped(t *testing.T) {
	runContract(t, []contractCase{
		{name: "cat --json probe", script: "vrlog cat run.vrlog --json --channel 'vrlog/clock/**' --limit 3", check: func(t *testing.T, dir string, r result) {
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if len(lines) != 3 {
				t.Fatalf("want 3 lines: %s", r)
			}
			for _, l := range lines {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("%q: %v", l, err)
				}
				d, _ := m["decoded"].(map[string]any)
				_, seq := m["seq"]
				_, tns := m["t_ns"]
				_, el := d["elapsed"]
				if seq || tns || el || d == nil {
					t.Errorf("unstamped record with seq, t_ns or elapsed (or not decoded): %s", l)
				}
			}
		}},
	})
}

// One rule for every output's directory: it must exist (exit 2, naming
// it), for a file and for a CSV directory's parent alike; export --format
// csv creates its DIR, not the directories above it (CSV export created
// them, MCAP export failed with exit 3).
func TestOutputDirectoryMustExist(t *testing.T) {
	var cases []contractCase
	for _, cmd := range []string{"vrlog export run.vrlog -o nodir/x.mcap", "vrlog export run.vrlog --format csv -o nodir/csv",
		"vrlog cut run.vrlog -o nodir/x.vrlog", "vrlog analyze run.vrlog -q --junit nodir/j.xml"} {
		cases = append(cases, contractCase{name: cmd, script: cmd, code: 2, want: []string{"no such directory: nodir (create it first)"}, absent: []string{"nodir"}})
	}
	cases = append(cases, contractCase{name: "a CSV directory is created", script: "vrlog export run.vrlog --format csv -o csv", made: []string{"csv/vr_r1_state.csv"}})
	runContract(t, cases)
}
