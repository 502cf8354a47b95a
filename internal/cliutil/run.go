package cliutil

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/outfile"
)

// Run runs app with args and exits with the code its error maps to.
func Run(app *cli.App, args []string) { os.Exit(Execute(app, args)) }

// Execute runs app with args under the command-line contract and returns
// the exit code: flags anywhere, usage errors 2, an interrupt that removes
// unfinished outputs, standard output checked to the end; an error is
// printed once to app.ErrWriter (stderr by default).
func Execute(app *cli.App, args []string) int {
	app.Version = version()
	app.ExitErrHandler = func(*cli.Context, error) {} // we exit below, once
	app.OnUsageError = usageError
	for _, c := range app.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = usageError
		}
	}
	if app.ErrWriter == nil {
		app.ErrWriter = os.Stderr
	}
	if app.Writer == nil {
		app.Writer = os.Stdout
	}
	stdout := outfile.NewStream(app.Writer)
	app.Writer = stdout
	ctx, stop := interrupts(app.Name, app.ErrWriter)
	defer stop()
	err := app.RunContext(ctx, interspersed(app, args))
	if cerr := stdout.Close(); err == nil && cerr != nil {
		err = Runtime(cerr)
	}
	if err != nil {
		fmt.Fprintf(app.ErrWriter, "%s: %v\n", app.Name, err)
	}
	return Code(err)
}

// runState is what the signal handler knows of the running verb.
type runState struct{ graceful atomic.Bool }

type stateKey struct{}

// Graceful declares that the running verb stops cleanly when c.Context is
// cancelled (record finishes its log, replay its report, sim its truth
// log). SIGINT or SIGTERM cancels the context; for a verb that did not call
// Graceful, and for a second signal, the runner removes every output not
// yet committed (outfile.Discard) and exits 3 at once.
func Graceful(c *cli.Context) {
	if st, ok := c.Context.Value(stateKey{}).(*runState); ok {
		st.graceful.Store(true)
	}
}

// interrupts returns the verb's context, cancelled by SIGINT or SIGTERM.
// SIGXFSZ is ignored, so a file size limit fails a write with EFBIG like a
// full disk instead of killing the process.
func interrupts(name string, errw io.Writer) (context.Context, func()) {
	st := &runState{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), stateKey{}, st))
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	signal.Ignore(syscall.SIGXFSZ)
	done := make(chan struct{})
	go func() {
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case sig := <-sigs:
				cancel()
				if n == 1 && st.graceful.Load() {
					// Finishing may take a while (a recorder writes what it
					// has queued): say so, and how to stop at once.
					fmt.Fprintf(errw, "%s: %s: finishing (again to stop at once)\n", name, signalName(sig))
					continue
				}
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
