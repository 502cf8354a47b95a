package ui

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Loop redraws a status line: on a terminal in place, every 200 ms, fitted
// to its width; off one as a plain line every Every (the job is alive,
// without a flood in a CI log). The one status loop of every verb: a long
// verb's progress bar (Progress), replay's position. A nil *Loop does
// nothing.
type Loop struct {
	w     io.Writer
	tty   bool
	width int
	line  func(tty bool, width int) string
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
	drawn bool
}

// LoopOptions say where the line goes.
type LoopOptions struct {
	// TTY redraws the line in place; Width is the terminal's (default 80).
	TTY   bool
	Width int
	// Every is the interval of plain lines off a terminal (default 10 s).
	Every time.Duration
}

// StartLoop draws line(tty, width) on w until Done. line gets the width
// a terminal line may take (0 off a terminal: no limit).
func StartLoop(w io.Writer, line func(tty bool, width int) string, o LoopOptions) *Loop {
	l := &Loop{w: w, tty: o.TTY, width: o.Width, line: line, stop: make(chan struct{})}
	if l.width <= 0 {
		l.width = 80
	}
	every := o.Every
	if every <= 0 {
		every = 10 * time.Second
	}
	if l.tty {
		every = 200 * time.Millisecond
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.draw()
			}
		}
	}()
	return l
}

func (l *Loop) draw() {
	l.drawn = true
	if l.tty {
		s := []rune(l.line(true, l.width-1)) // the last column would wrap on some terminals
		if len(s) > l.width-1 {
			s = s[:max(l.width-1, 0)]
		}
		fmt.Fprint(l.w, "\r\x1b[K"+string(s))
		return
	}
	fmt.Fprintln(l.w, l.line(false, 0))
}

// Done stops the loop and clears the line on a terminal. Idempotent.
func (l *Loop) Done() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		close(l.stop)
		l.wg.Wait()
		if l.drawn && l.tty {
			fmt.Fprint(l.w, "\r\x1b[K")
		}
	})
}
