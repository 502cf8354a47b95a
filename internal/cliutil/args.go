package cliutil

import (
	"flag"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// interspersed is the one rule for where flags go, for every verb: before,
// between or after the file arguments ("vrlog analyze run.vrlog --json");
// "--" ends the flags. urfave/cli v2 stops parsing at the first argument,
// so the runner moves every flag, with its value, in front of the
// arguments before cli parses them.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	if len(app.Commands) == 0 {
		return append([]string{args[0]}, reorder(app.Flags, true, args[1:])...)
	}
	cmd := app.Command(args[1])
	if cmd == nil || cmd.SkipFlagParsing {
		return args
	}
	return append([]string{args[0], args[1]}, reorder(cmd.Flags, false, args[2:])...)
}

// reorder puts flags (and the values of flags that take one) first, then
// "--" and the arguments. A flag it does not know is moved too: cli then
// reports it.
func reorder(flags []cli.Flag, app bool, args []string) []string {
	set := flag.NewFlagSet("", flag.ContinueOnError)
	set.SetOutput(io.Discard)
	for _, f := range flags {
		f.Apply(set) // a definition error surfaces when cli applies it again
	}
	builtins := []string{"help", "h"} // cli adds these (and --version to apps)
	if app {
		builtins = append(builtins, "version", "v")
	}
	for _, n := range builtins {
		if set.Lookup(n) == nil {
			set.Bool(n, false, "")
		}
	}
	var fl, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || isNumber(a) {
			pos = append(pos, a) // a negative number is an argument: ctl seek -1, rate -1 (then refused as such)
			continue
		}
		name := strings.TrimLeft(a, "-")
		if n, v, ok := strings.Cut(name, "="); ok {
			if f := set.Lookup(n); f != nil {
				a = a[:len(a)-len(v)] + seconds(f, v)
			}
			fl = append(fl, a)
			continue
		}
		fl = append(fl, a)
		f := set.Lookup(name)
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 == len(args) {
			return fl // its value is missing: the flag parser says so (nothing after it, not "--")
		}
		fl = append(fl, seconds(f, args[i+1]))
		i++
	}
	if len(pos) == 0 {
		return fl
	}
	return append(append(fl, "--"), pos...)
}

// seconds is the value v of flag f, a plain number of seconds written as
// a Go duration when f takes a duration: one grammar for every duration
// flag, as replay's --duration 10 and the time windows (record --duration
// 1 was "invalid value for flag -duration: parse error").
func seconds(f *flag.Flag, v string) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return v
	}
	if _, dur := g.Get().(time.Duration); !dur {
		return v
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(s) || math.IsInf(s, 0) {
		return v
	}
	return strconv.FormatFloat(s, 'f', -1, 64) + "s"
}

// isNumber reports whether a is a number ("-1", "-2.5"): no flag is named so.
func isNumber(a string) bool {
	_, err := strconv.ParseFloat(a, 64)
	return err == nil
}
