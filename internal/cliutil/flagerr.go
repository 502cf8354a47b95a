package cliutil

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Go's flag package names every flag with one dash (-json, -duration)
// and says "parse error" of a bad value; these find its messages.
var (
	notDefined = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	badValue   = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for flag -+([^:]+): (.*)$`)
	needsValue = regexp.MustCompile(`^flag needs an argument: -+(.+)$`)
)

// usageErrorOf is the runner's usage error for a flag-parsing error of
// the command line args: the flag named as it was typed (--json, -o), a
// bad value said with what the flag wants, and "(see --help)".
func usageErrorOf(args []string) func(*cli.Context, error, bool) error {
	return func(c *cli.Context, err error, _ bool) error {
		var flags []cli.Flag
		if c != nil && c.Command != nil {
			flags = c.Command.Flags
		}
		if c != nil && c.App != nil && len(flags) == 0 {
			flags = c.App.Flags
		}
		return &Error{Code: ExitUsage, Err: fmt.Errorf("%w (see --help)", flagError(err, args, flags))}
	}
}

// flagError rewrites one of Go's flag messages, naming the flag as typed
// and saying what a flag of flags wants.
func flagError(err error, args []string, flags []cli.Flag) error {
	msg := err.Error()
	if m := notDefined.FindStringSubmatch(msg); m != nil {
		return errors.New("unknown flag " + typed(m[1], args))
	}
	if m := needsValue.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s needs a value", typed(m[1], args))
	}
	if m := badValue.FindStringSubmatch(msg); m != nil {
		why := m[3]
		if why == "parse error" {
			why = wants(m[2], flags)
		}
		return fmt.Errorf("%s %q: %s", typed(m[2], args), m[1], why)
	}
	return err
}

// wants says what the value of flag name wants.
func wants(name string, flags []cli.Flag) string {
	for _, f := range flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		switch f.(type) {
		case *cli.DurationFlag:
			return "want seconds (2.5) or a duration (300ms, 1m30s)"
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
			return "want a whole number"
		case *cli.Float64Flag:
			return "want a number"
		case *cli.BoolFlag:
			return "want true or false"
		}
	}
	return "not a valid value"
}

// typed is how flag name was typed in args (--json, -json, -o), else its
// usual form: one dash for a one-letter name, two for the others.
func typed(name string, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		flag, _, _ := strings.Cut(a, "=")
		if strings.HasPrefix(flag, "-") && strings.TrimLeft(flag, "-") == name {
			return flag
		}
	}
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
