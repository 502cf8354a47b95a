package ui

// How far a long verb (export, recover, cut, merge, verify of a
// multi-GB log) has come: on a terminal a bar redrawn in place with the
// rate and the time left; off a terminal a plain line every ten seconds,
// so a CI log shows the job is alive without a flood.

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Progress reports the progress of one piece of work: a bar on a
// terminal, a plain line every ten seconds off one (Loop). A nil
// *Progress does nothing.
type Progress struct{ loop *Loop }

// StartProgress reports, until Done, how much of total (bytes) done()
// says is done, on w.
func StartProgress(w io.Writer, what string, total int64, done func() int64, o LoopOptions) *Progress {
	start := time.Now()
	return &Progress{loop: StartLoop(w, func(tty bool, width int) string {
		if tty {
			return Line(what, done(), total, time.Since(start), width)
		}
		return Plain(what, done(), total, time.Since(start))
	}, o)}
}

// Done stops the reports and clears the bar. Idempotent.
func (p *Progress) Done() {
	if p != nil {
		p.loop.Done()
	}
}

// Line is the terminal bar, at most width columns: what, bar, percent,
// done of total, rate and time left.
func Line(what string, done, total int64, elapsed time.Duration, width int) string {
	pct, rate, eta := figures(done, total, elapsed)
	tail := fmt.Sprintf(" %3.0f%% %s/%s %s %s", pct, Bytes(done), Bytes(total), Rate(rate), eta)
	bar := width - len([]rune(what)) - len([]rune(tail)) - 3
	if bar < 5 {
		s := what + tail
		if r := []rune(s); len(r) > width {
			s = string(r[:max(width, 0)])
		}
		return s
	}
	n := int(float64(bar) * pct / 100)
	return what + " [" + strings.Repeat("#", n) + strings.Repeat("-", bar-n) + "]" + tail
}

// Plain is the line off a terminal.
func Plain(what string, done, total int64, elapsed time.Duration) string {
	pct, rate, eta := figures(done, total, elapsed)
	return fmt.Sprintf("%s: %.0f%% (%s of %s), %s, %s", what, pct, Bytes(done), Bytes(total), Rate(rate), eta)
}

// figures are the percentage, the rate in units per second and the time
// left.
func figures(done, total int64, elapsed time.Duration) (pct, rate float64, eta string) {
	done = min(max(done, 0), max(total, 0))
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	eta = "ETA --"
	if rate > 0 && total > 0 {
		left := time.Duration(float64(total-done) / rate * float64(time.Second))
		eta = "ETA " + left.Round(time.Second).String()
	}
	return pct, rate, eta
}

// ProcessReads returns the bytes this process has read so far
// (/proc/self/io rchar): the progress of a library call that reads a file
// without reporting how far it is (verify, recover). It returns nil where
// the kernel does not count them.
func ProcessReads() func() int64 {
	read := func() (int64, bool) {
		b, err := os.ReadFile("/proc/self/io")
		if err != nil {
			return 0, false
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "rchar: "); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				return n, err == nil
			}
		}
		return 0, false
	}
	base, ok := read()
	if !ok {
		return nil
	}
	return func() int64 {
		n, _ := read()
		return n - base
	}
}
