// Package e2e runs vrlog's binaries end to end on this machine's real
// transports: the bundled simulator and the Python peers publish over zenoh
// (loopback TCP, multicast scouting off) and iceoryx2 (shared memory), the
// recorder records, and the tests compare the log with what was published.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/logfmt"
)

var vrlogBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vrlog-e2e-")
	if err != nil {
		panic(err)
	}
	vrlogBin = filepath.Join(dir, "vrlog")
	// The native library's hash in the link flags relinks vrlog when the
	// library changed (Go's cache does not look inside it; see the Makefile).
	lib, _ := os.ReadFile(filepath.Join(root(), "native", "target", "release", "libvrlog_native.a"))
	build := exec.Command("go", "build", "-ldflags=-X=main.nativeLib="+hexsum(lib)[:16], "-o", vrlogBin, "./cmd/vrlog")
	build.Dir = root()
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building vrlog: %v\n%s", err, out)
		os.Exit(1)
	}
	// What killed processes and killed test runs left, before and after.
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "e2e: "+f+"\n", a...) }
	cleanupDeadNodes(logf)
	removeStaleReadmePrefixes()
	code := m.Run()
	cleanupDeadNodes(logf)
	os.RemoveAll(dir)
	os.Exit(code)
}

func root() string { return peertest.Root() }

func freePort(t *testing.T) int { return peertest.FreePort(t) }

// robot is a name unique to this test run, so iceoryx2 services of parallel
// runs never meet.
func robot(t *testing.T) string {
	return fmt.Sprintf("e2e%d%s", os.Getpid(), strings.ToLower(strings.ReplaceAll(t.Name(), "/", "")))
}

type proc struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer // stdout and stderr; safe to read while it runs
	done   chan error
}

// lockedBuffer is a bytes.Buffer a process writes while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	return startCmd(t, exec.Command(name, args...))
}

// startCmd starts cmd with its output collected; the test's cleanup kills
// it, waits for it and removes what its iceoryx2 node left.
func startCmd(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	errb := &lockedBuffer{}
	cmd.Stderr, cmd.Stdout = errb, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: errb, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.Process.Kill() == nil {
			<-p.done
		}
		cleanupDeadNodes(t.Logf)
	})
	return p
}

func (p *proc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case err := <-p.done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		t.Fatalf("%s did not finish within %s:\n%s", p.cmd.Args[0], timeout, p.stderr)
	}
	return -1
}

func (p *proc) signal(sig syscall.Signal) { p.cmd.Process.Signal(sig) }

// truth is one published sample as the simulator's --log and the Python
// peers write it.
type truth struct {
	Channel       string `json:"channel"`
	Seq           uint64 `json:"seq"`
	TNs           int64  `json:"t_ns"`
	HeaderSHA256  string `json:"header_sha256"`
	PayloadSHA256 string `json:"payload_sha256"`
}

func readTruth(t *testing.T, path string) []truth {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []truth
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var x truth
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, x)
	}
	return out
}

func hexsum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// logged is one record of a log, hashed like a truth line.
type logged struct {
	channel string
	truth
	drops     uint64
	publisher string
}

func readLog(t *testing.T, path string) (recs []logged, r *logfmt.Reader) {
	t.Helper()
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return records(t, r), r
}

// records reads every record of r.
func records(t *testing.T, r *logfmt.Reader) (recs []logged) {
	t.Helper()
	names := map[uint16]string{}
	for _, c := range r.Channels() {
		names[c.ID] = c.Name
	}
	it := r.Records(logfmt.Filter{})
	for it.Next() {
		rec := it.Record()
		recs = append(recs, logged{channel: names[rec.Channel], truth: truth{Channel: names[rec.Channel], Seq: rec.Seq, TNs: rec.CaptureNs,
			HeaderSHA256: hexsum(rec.Header), PayloadSHA256: hexsum(rec.Payload)}, publisher: string(rec.PublisherID)})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// contains checks that every truth line of channel ch appears in the log's
// records of that channel, byte-exact and in the published order.
func contains(t *testing.T, recs []logged, published []truth, ch string) int {
	t.Helper()
	var got []truth
	for _, r := range recs {
		if r.channel == ch {
			got = append(got, r.truth)
		}
	}
	var want []truth
	for _, p := range published {
		if p.Channel == ch {
			want = append(want, p)
		}
	}
	if len(want) == 0 {
		t.Fatalf("nothing published on %s", ch)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: log has %d records, %d were published", ch, len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		w.Channel, g.Channel = "", ""
		if w != g {
			t.Fatalf("%s record %d: log %+v, published %+v", ch, i, g, w)
		}
	}
	return len(want)
}

func analyzeJSON(t *testing.T, paths ...string) map[string]any {
	t.Helper()
	out, err := exec.Command(vrlogBin, append([]string{"analyze", "--json"}, paths...)...).Output()
	if err != nil {
		t.Fatalf("analyze %s: %v", paths, err)
	}
	var rep map[string]any
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// interiorOutages are a channel's outages between two of its samples:
// not the silence after its last one, when the simulator stopped before
// the recorder did (ended).
func interiorOutages(ch map[string]any) []any {
	var out []any
	for _, o := range ch["outages"].([]any) {
		if ended, _ := o.(map[string]any)["ended"].(bool); !ended {
			out = append(out, o)
		}
	}
	return out
}

func channelReport(t *testing.T, rep map[string]any, name string) map[string]any {
	t.Helper()
	for _, c := range rep["channels"].([]any) {
		if m := c.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("report has no channel %s", name)
	return nil
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func execCommand(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// endRecording waits for the publisher peer to finish, then ends the
// recorder (SIGINT) once what it sent has arrived; both must exit 0.
func endRecording(t *testing.T, pub, rec *proc, pubTimeout time.Duration) {
	t.Helper()
	if code := pub.wait(t, pubTimeout); code != 0 {
		t.Fatalf("publisher peer exit %d:\n%s", code, pub.stderr)
	}
	time.Sleep(300 * time.Millisecond)
	rec.signal(syscall.SIGINT)
	if code := rec.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("record exit %d:\n%s", code, rec.stderr)
	}
}
