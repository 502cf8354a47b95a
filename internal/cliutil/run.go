package cliutil

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/outfile"
)

// Run runs app with args and exits with the code its error maps to.
func Run(app *cli.App, args []string) { os.Exit(Execute(app, args)) }

// Execute runs app with args under the command-line contract and returns
// the exit code: flags anywhere, -q/--quiet on every verb, usage errors 2
// (an unknown verb included), an interrupt that removes
// unfinished outputs, standard output checked to the end; an error is
// printed once to app.ErrWriter (stderr by default).
func Execute(app *cli.App, args []string) int {
	app.Version = version()
	app.ExitErrHandler = func(*cli.Context, error) {} // we exit below, once
	app.OnUsageError = usageErrorOf(args)
	everyVerbQuiet(app)
	for _, c := range app.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = usageErrorOf(args)
		}
	}
	if app.ErrWriter == nil {
		app.ErrWriter = os.Stderr
	}
	if app.Writer == nil {
		app.Writer = os.Stdout
	}
	args = helpVerb(app, args)
	if err := unknownCommand(app, args); err != nil {
		fmt.Fprintf(app.ErrWriter, "%s: %v\n", app.Name, err)
		return Code(err)
	}
	st := &runState{width: TextWidth(app.Writer)}
	helpWidth(st.width)
	stdout := outfile.NewStream(app.Writer)
	app.Writer = stdout
	ctx, stop := interrupts(app.Name, app.ErrWriter, st)
	defer stop()
	err := app.RunContext(ctx, interspersed(app, args))
	if cerr := stdout.Close(); err == nil && cerr != nil {
		err = Runtime(cerr)
	}
	if err != nil {
		fmt.Fprintf(app.ErrWriter, "%s: %s\n", app.Name, Readable(err.Error()))
	}
	return Code(err)
}

// runState is what the runner knows of the running verb: whether it stops
// cleanly on a signal, and the width its standard output's text fits.
type runState struct {
	graceful atomic.Bool
	width    int
}

type stateKey struct{}

// Graceful declares that the running verb stops cleanly when c.Context is
// cancelled (record finishes its log, replay its report, sim its truth
// log). SIGINT or SIGTERM cancels the context; for a verb that did not call
// Graceful, and for a signal that comes later than SameRequest after the
// first, the runner removes every output not yet committed
// (outfile.Discard) and exits 3 at once.
func Graceful(c *cli.Context) {
	if st, ok := c.Context.Value(stateKey{}).(*runState); ok {
		st.graceful.Store(true)
	}
}

// SameRequest is how long after the first SIGINT or SIGTERM further ones
// count as the same request to stop. GNU timeout signals its child and
// then the child's process group, two signals microseconds apart; a
// wrapper that forwards Ctrl-C to a child in the terminal's process group
// does the same. Only a signal after this interval means "stop at once".
const SameRequest = time.Second

// signalCount tells a repeated request to stop from the echo of the
// first: signals within window of the first are one request.
type signalCount struct {
	window time.Duration
	first  time.Time
}

// add counts a signal received at now: first is true for the first
// signal, again for one that comes later than the window after it (a
// signal within the window is neither).
func (s *signalCount) add(now time.Time) (first, again bool) {
	if s.first.IsZero() {
		s.first = now
		return true, false
	}
	return false, now.Sub(s.first) > s.window
}

// interrupts returns the verb's context, cancelled by SIGINT or SIGTERM.
// SIGXFSZ is ignored, so a file size limit fails a write with EFBIG like a
// full disk instead of killing the process.
func interrupts(name string, errw io.Writer, st *runState) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), stateKey{}, st))
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	signal.Ignore(syscall.SIGXFSZ)
	done := make(chan struct{})
	go func() {
		count := signalCount{window: SameRequest}
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				first, again := count.add(time.Now())
				switch {
				case first && st.graceful.Load():
					cancel()
					// Finishing may take a while (a recorder writes what it
					// has queued): say so, and how to stop at once.
					fmt.Fprintf(errw, "%s: %s: finishing (another signal after %v stops at once)\n", name, signalName(sig), SameRequest)
					continue
				case !first && !again:
					continue // the same request, echoed (GNU timeout, a process group)
				}
				cancel()
				removed := outfile.Discard()
				fmt.Fprintf(errw, "%s: interrupted by %s: stopped; %d unfinished output file(s) removed\n", name, signalName(sig), removed)
				os.Exit(ExitRuntime)
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}
