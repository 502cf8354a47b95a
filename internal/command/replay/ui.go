package replay

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/player"
)

// keysUI prints progress (the status loop of every verb, ui.Loop: a
// live line on a terminal, a plain line every few seconds otherwise) and,
// on a terminal, reads the keyboard.
type keysUI struct {
	loop    *ui.Loop
	restore func()
	mu      sync.Mutex
	ctrlC   bool // the user pressed Ctrl-C (raw mode): an interrupt, not q
}

func startUI(p *player.Player, w io.Writer, quiet bool, span time.Duration) *keysUI {
	u := &keysUI{}
	if keyboard(w) {
		if st, err := term.MakeRaw(int(os.Stdin.Fd())); err == nil {
			u.restore = func() { term.Restore(int(os.Stdin.Fd()), st) }
			go u.keys(p) // blocks in Read until a key; not joined (stdin cannot be unblocked)
		}
	}
	if !quiet {
		width, _, tty := cliutil.Terminal(w)
		u.loop = ui.StartLoop(w, func(tty bool, _ int) string { return statusLine(p.Status(), span, tty) },
			ui.LoopOptions{TTY: tty, Width: width, Every: 5 * time.Second})
	}
	return u
}

// keyboard reports whether keys can control the replay: stdin and the
// progress writer w are terminals.
func keyboard(w io.Writer) bool {
	return cliutil.IsTerminal(w) && term.IsTerminal(int(os.Stdin.Fd()))
}

// statusLine is the replay's position, pass, records sent, rate and state:
// with a bar on a terminal, as a plain line off one.
func statusLine(s player.Status, span time.Duration, tty bool) string {
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
		bar = "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "] "
	}
	if tty {
		return fmt.Sprintf("%s%s  pass %d  %d sent  %s %s", bar, pos, s.Pass, s.Sent, rate, state)
	}
	return fmt.Sprintf("replay: %s, pass %d, %d sent, rate %s, %s", pos, s.Pass, s.Sent, rate, state)
}

// keys maps keys to player controls.
func (u *keysUI) keys(p *player.Player) {
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
func (u *keysUI) stop() bool {
	u.loop.Done()
	if u.restore != nil {
		u.restore()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.ctrlC
}
