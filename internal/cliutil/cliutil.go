// Package cliutil holds what every vrlog command shares: exit codes, the
// error type that carries one, TTY detection, and the runner the binaries'
// mains call (run.go), which gives every verb the same command-line
// contract: flags anywhere (args.go), interrupts that remove unfinished
// outputs, a checked standard output, --version from the build (version.go).
package cliutil

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/outfile"
)

// Exit codes, the same for every vrlog command (documented in the README and
// in each command's --help).
const (
	ExitOK          = 0 // success
	ExitCheckFailed = 1 // the command ran, and a check failed (analyze threshold, verify found damage)
	ExitUsage       = 2 // bad flags or arguments, unreadable or invalid input
	ExitRuntime     = 3 // a failure while running (transport error, disk full)
)

// ExitCodesHelp is appended to commands' descriptions.
const ExitCodesHelp = `EXIT CODES:
   0  success
   1  a check failed (analyze: a threshold was crossed; verify: damage found;
      record: a pattern or the whole recording captured nothing, or a
      --snapshot-on check watched nothing)
   2  usage or input error (bad flags, unreadable, corrupt or foreign file)
   3  runtime failure (transport error, disk full, an output that could not be
      written, interrupted by SIGINT/SIGTERM, except where that is the
      way to stop: record, sim, controller, fleet)
   See docs/cli.md for the whole command-line contract.`

// Error is an error with an exit code.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usage wraps err with ExitUsage.
func Usage(format string, args ...any) error {
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// Input marks err as an input error (ExitUsage).
func Input(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: ExitUsage, Err: err}
}

// Runtime marks err as a runtime failure (ExitRuntime).
func Runtime(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: ExitRuntime, Err: err}
}

// CheckFailed marks err as a failed check (ExitCheckFailed).
func CheckFailed(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: ExitCheckFailed, Err: err}
}

// Output classifies a failure to create or write an output: an output that
// exists is a usage error (the user can pass --force), anything else a
// runtime failure.
func Output(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return &Error{Code: ExitUsage, Err: fmt.Errorf("%w (use --force to replace it)", err)}
	case errors.Is(err, outfile.ErrNoDir):
		return &Error{Code: ExitUsage, Err: err}
	}
	return Runtime(err)
}

// Code is the exit code for err: 0 for nil, the carried code for *Error,
// ExitUsage for flag-parsing errors, ExitRuntime otherwise.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return ExitRuntime
}

// Single wraps one command as a whole app (the design card's standalone
// binaries: record, replay, analyze, sim).
func Single(c *cli.Command) *cli.App {
	return &cli.App{
		Name:            c.Name,
		Usage:           c.Usage,
		UsageText:       c.UsageText,
		Description:     c.Description,
		ArgsUsage:       c.ArgsUsage,
		Flags:           c.Flags,
		Action:          c.Action,
		Before:          c.Before,
		HideHelpCommand: true,
	}
}
