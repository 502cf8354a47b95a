package replay

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/player"
)

// ui prints progress (a live line on a terminal, a plain line every few
// seconds otherwise) and, on a terminal, reads the keyboard.
type ui struct {
	done    chan struct{}
	wg      sync.WaitGroup
	restore func()
	mu      sync.Mutex
	ctrlC   bool // the user pressed Ctrl-C (raw mode): an interrupt, not q
	tty     bool
	w       io.Writer
}

func startUI(ctx context.Context, p *player.Player, w io.Writer, quiet bool, span time.Duration) *ui {
	u := &ui{done: make(chan struct{}), w: w, tty: cliutil.IsTerminal(w)}
	if keyboard(w) {
		if st, err := term.MakeRaw(int(os.Stdin.Fd())); err == nil {
			u.restore = func() { term.Restore(int(os.Stdin.Fd()), st) }
			go u.keys(p) // blocks in Read until a key; not joined (stdin cannot be unblocked)
		}
	}
	if quiet {
		return u
	}
	every := 5 * time.Second
	if u.tty {
		every = 200 * time.Millisecond
	}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-u.done:
				if u.tty {
					fmt.Fprint(w, "\r\x1b[K")
				}
				return
			case <-t.C:
				u.line(p.Status(), span)
			}
		}
	}()
	return u
}

// keyboard reports whether keys can control the replay: stdin and the
// progress writer w are terminals.
func keyboard(w io.Writer) bool {
	return cliutil.IsTerminal(w) && term.IsTerminal(int(os.Stdin.Fd()))
}

func (u *ui) line(s player.Status, span time.Duration) {
	rate := fmt.Sprintf("%.2f×", s.Rate)
	if s.RateMax {
		rate = "max"
	}
	state := "playing"
	switch {
	case s.Starting:
		state = "waiting for subscribers (or the controller)"
	case s.Waiting:
		state = "waiting for the answer"
	case s.Paused:
		state = "paused"
	}
	pos := fmt.Sprintf("%s / %s", fmtSec(s.Position), fmtSec(span))
	bar := ""
	if span > 0 {
		const width = 30
		n := min(max(int(float64(width)*float64(s.Position)/float64(span)), 0), width)
		bar = "[" + repeat("#", n) + repeat("-", width-n) + "] "
	}
	if u.tty {
		fmt.Fprintf(u.w, "\r\x1b[K%s%s  pass %d  %d sent  %s %s", bar, pos, s.Pass, s.Sent, rate, state)
		return
	}
	fmt.Fprintf(u.w, "replay: %s, pass %d, %d sent, rate %s, %s\n", pos, s.Pass, s.Sent, rate, state)
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// keys maps keys to player controls.
func (u *ui) keys(p *player.Player) {
	buf := make([]byte, 16)
	for {
		n, err := os.Stdin.Read(buf)
		if err != nil {
			return
		}
		b := buf[:n]
		for len(b) > 0 {
			switch {
			case b[0] == ' ':
				p.TogglePause()
			case b[0] == 'q' || b[0] == 3: // q, Ctrl-C (raw mode)
				u.mu.Lock()
				u.ctrlC = b[0] == 3
				u.mu.Unlock()
				p.Stop()
			case len(b) >= 3 && b[0] == 0x1b && b[1] == '[':
				switch b[2] {
				case 'C':
					p.Step()
				case 'A':
					p.SetRate(p.Rate() * 1.1)
				case 'B':
					p.SetRate(p.Rate() / 1.1)
				}
				b = b[2:]
			}
			b = b[1:]
		}
	}
}

// stop ends the progress output, restores the terminal and reports
// whether the user pressed Ctrl-C (which the terminal's raw mode turns
// into a key, not a SIGINT).
func (u *ui) stop() bool {
	close(u.done)
	u.wg.Wait()
	if u.restore != nil {
		u.restore()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.ctrlC
}
