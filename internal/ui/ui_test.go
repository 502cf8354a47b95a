package ui

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// One byte format for every verb and library (there were five: the
// progress bar's, a copy in logtools, record's, analyze's, the recorder's).
func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 512 << 20: "512 MiB",
		6_500_000_000: "6.1 GiB", 5 << 40: "5 TiB", -2048: "-2 KiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Rate(186 << 20); got != "186 MiB/s" {
		t.Errorf("Rate: %q", got)
	}
}

// The loop redraws in place on a terminal, within its width, and clears
// the line when done; off one it prints plain lines.
func TestLoop(t *testing.T) {
	var w syncBuf
	var calls sync.WaitGroup
	calls.Add(1)
	var once sync.Once
	l := StartLoop(&w, func(tty bool, width int) string {
		defer once.Do(calls.Done)
		if !tty || width != 39 {
			t.Errorf("tty %v width %d", tty, width)
		}
		return strings.Repeat("x", 100)
	}, LoopOptions{TTY: true, Width: 40})
	calls.Wait()
	l.Done()
	l.Done()
	s := w.String()
	if !strings.HasPrefix(s, "\r\x1b[K"+strings.Repeat("x", 39)) || strings.Contains(s, strings.Repeat("x", 40)) || !strings.HasSuffix(s, "\r\x1b[K") {
		t.Fatalf("%q", s)
	}
	var none *Loop
	none.Done()
	var plain syncBuf
	l = StartLoop(&plain, func(tty bool, width int) string { return "status" }, LoopOptions{Every: time.Millisecond})
	for !strings.Contains(plain.String(), "status\n") {
		time.Sleep(time.Millisecond)
	}
	l.Done()
	if strings.Contains(plain.String(), "\r") {
		t.Fatalf("%q", plain.String())
	}
}
