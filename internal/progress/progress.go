// Package progress shows how far a long verb (export, recover, cut, merge,
// verify of a multi-GB log) has come: on a terminal a bar redrawn in place
// with the rate and the time left; off a terminal a plain line every ten
// seconds, so a CI log shows the job is alive without a flood.
package progress

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bar reports the progress of one piece of work. A nil *Bar does nothing.
type Bar struct {
	w     io.Writer
	what  string
	total int64
	done  func() int64
	tty   bool
	width int
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
	drawn bool
}

// Options tune a Bar.
type Options struct {
	// TTY draws the bar in place; otherwise plain lines every Every.
	TTY bool
	// Width of the terminal (default 80).
	Width int
	// Every is the interval of plain lines (default 10 s); the bar is
	// redrawn every 200 ms.
	Every time.Duration
}

// Start reports, until Done, how much of total (bytes) done() says is
// done, on w.
func Start(w io.Writer, what string, total int64, done func() int64, o Options) *Bar {
	b := &Bar{w: w, what: what, total: total, done: done, tty: o.TTY, width: o.Width, start: time.Now(), stop: make(chan struct{})}
	if b.width <= 0 {
		b.width = 80
	}
	every := o.Every
	if every <= 0 {
		every = 10 * time.Second
	}
	if b.tty {
		every = 200 * time.Millisecond
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				b.draw()
			}
		}
	}()
	return b
}

// Done stops the reports and clears the bar. Idempotent.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.once.Do(func() {
		close(b.stop)
		b.wg.Wait()
		if b.drawn && b.tty {
			fmt.Fprint(b.w, "\r\x1b[K")
		}
	})
}

func (b *Bar) draw() {
	b.drawn = true
	if b.tty {
		fmt.Fprint(b.w, "\r\x1b[K"+Line(b.what, b.done(), b.total, time.Since(b.start), b.width-1))
		return
	}
	fmt.Fprintln(b.w, Plain(b.what, b.done(), b.total, time.Since(b.start)))
}

// Line is the terminal bar, at most width columns: what, bar, percent,
// done of total, rate and time left.
func Line(what string, done, total int64, elapsed time.Duration, width int) string {
	pct, rate, eta := figures(done, total, elapsed)
	tail := fmt.Sprintf(" %3.0f%% %s/%s %s/s %s", pct, Bytes(done), Bytes(total), Bytes(int64(rate)), eta)
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
	return fmt.Sprintf("%s: %.0f%% (%s of %s), %s/s, %s", what, pct, Bytes(done), Bytes(total), Bytes(int64(rate)), eta)
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

// Bytes prints n with a binary unit.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
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
