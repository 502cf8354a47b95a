// Package peertest runs the Python interop peers (peers/*.py) from Go tests.
package peertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Root is the repository root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Python returns the venv's interpreter or fails the test saying how to make it.
func Python(t testing.TB) string {
	t.Helper()
	p := filepath.Join(Root(), ".venv", "bin", "python")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("interop peers: %s missing: run `make peers` (creates the venv with eclipse-zenoh and iceoryx2)", p)
	}
	return p
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Peer is a running peer process.
type Peer struct {
	t      testing.TB
	cmd    *exec.Cmd
	ready  chan struct{}
	done   chan struct{}
	err    error
	mu     sync.Mutex
	stderr bytes.Buffer
	Log    string // path of its JSON lines
}

// Start runs peers/<script> with args plus --log/--out into a temp file and
// waits for its "ready" line (or fails after 30 s).
func Start(t testing.TB, script string, args ...string) *Peer {
	t.Helper()
	py := Python(t)
	log := filepath.Join(t.TempDir(), strings.TrimSuffix(script, ".py")+".jsonl")
	flag := "--log"
	if script == "subscriber.py" {
		flag = "--out"
	}
	args = append([]string{filepath.Join(Root(), "peers", script)}, append(args, flag, log)...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Peer{t: t, cmd: cmd, ready: make(chan struct{}), done: make(chan struct{}), Log: log}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", script, err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			if line == "ready" {
				once.Do(func() { close(p.ready) })
			}
		}
		p.err = cmd.Wait()
		cancel()
		close(p.done)
	}()
	t.Cleanup(func() { p.Kill() })
	select {
	case <-p.ready:
	case <-p.done:
		t.Fatalf("%s exited before ready: %v\n%s", script, p.err, p.Stderr())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s not ready after 30 s\n%s", script, p.Stderr())
	}
	return p
}

// Stderr returns what the peer printed on stderr so far.
func (p *Peer) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Wait waits for the peer to exit and returns its error.
func (p *Peer) Wait(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		return fmt.Errorf("peer still running after %v\n%s", timeout, p.Stderr())
	}
}

// Kill stops the peer if it still runs.
func (p *Peer) Kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Record is one JSON line written by a peer.
type Record struct {
	Channel       string  `json:"channel"`
	Seq           *uint64 `json:"seq"`
	TNs           *int64  `json:"t_ns"`
	HeaderSHA256  string  `json:"header_sha256"`
	PayloadSHA256 string  `json:"payload_sha256"`
	Size          int     `json:"size"`
}

// Records reads a peer's JSON lines.
func Records(t testing.TB, path string) []Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// a line still being written (no newline yet) is not read
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	var out []Record
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v: %q", path, err, line)
		}
		out = append(out, r)
	}
	return out
}

// Run runs peers/<script> to completion and returns its combined output.
func Run(t testing.TB, script string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, Python(t), append([]string{filepath.Join(Root(), "peers", script)}, args...)...)
	return cmd.CombinedOutput()
}

// Vector is one valid codec test vector's bytes.
type Vector struct {
	Name            string
	Header, Payload []byte // states: Payload only
}

// Vectors reads the valid test vectors of schema from testdata/codec, in
// the order the publisher peer sends them (sorted by JSON file name).
func Vectors(t testing.TB, schema string) []Vector {
	t.Helper()
	dir := filepath.Join(Root(), "testdata", "codec")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test vectors in %s: %v", dir, err)
	}
	var out []Vector
	for _, f := range files { // Glob sorts
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Schema      string          `json:"schema"`
			File        string          `json:"file"`
			HeaderFile  string          `json:"header_file"`
			PayloadFile string          `json:"payload_file"`
			Error       json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if v.Schema != schema || v.Error != nil {
			continue
		}
		read := func(name string) []byte {
			if name == "" {
				return nil
			}
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		vec := Vector{Name: strings.TrimSuffix(filepath.Base(f), ".json")}
		if v.File != "" {
			vec.Payload = read(v.File)
		} else {
			vec.Header, vec.Payload = read(v.HeaderFile), read(v.PayloadFile)
		}
		out = append(out, vec)
	}
	if len(out) == 0 {
		t.Fatalf("no valid %s vectors in %s", schema, dir)
	}
	return out
}
