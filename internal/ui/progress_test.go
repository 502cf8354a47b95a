package ui

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLineFitsItsWidth(t *testing.T) {
	for _, w := range []int{20, 40, 79, 120} {
		l := Line("export run.vrlog", 3<<30, 8<<30, 10*time.Second, w)
		if n := len([]rune(l)); n > w {
			t.Errorf("width %d: %d columns: %q", w, n, l)
		}
	}
	l := Line("cut", 1<<30, 4<<30, 4*time.Second, 79)
	for _, want := range []string{"[", " 25% ", "1 GiB/4 GiB", "256 MiB/s", "ETA 12s"} {
		if !strings.Contains(l, want) {
			t.Errorf("%q lacks %q", l, want)
		}
	}
	if p := Plain("verify", 0, 0, 0); p != "verify: 0% (0 B of 0 B), 0 B/s, ETA --" {
		t.Errorf("%q", p)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestPlainLinesOffATerminal(t *testing.T) {
	var w syncBuf
	var n int64
	var mu sync.Mutex
	b := StartProgress(&w, "merge", 100, func() int64 { mu.Lock(); defer mu.Unlock(); return n }, LoopOptions{Every: 10 * time.Millisecond})
	mu.Lock()
	n = 50
	mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(w.String(), "merge: 50%") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	b.Done()
	b.Done()
	if !strings.Contains(w.String(), "merge: 50% (50 B of 100 B)") || strings.Contains(w.String(), "\r") {
		t.Fatalf("%q", w.String())
	}
	var none *Progress
	none.Done()
}

func TestProcessReads(t *testing.T) {
	f := ProcessReads()
	if f == nil {
		t.Skip("no /proc/self/io")
	}
	os.ReadFile("progress.go")
	if f() <= 0 {
		t.Fatal("reads not counted")
	}
}
