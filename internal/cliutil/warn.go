package cliutil

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/logfmt"
)

// Warn prints each line on the verb's stderr as "VERB: warning: LINE",
// -q included: what a warning says is never status.
func Warn(c *cli.Context, lines ...string) {
	name := c.App.Name
	if c.Command != nil && c.Command.Name != "" {
		name = c.Command.Name
	}
	w := c.App.ErrWriter
	if w == nil {
		w = os.Stderr
	}
	for _, l := range lines {
		fmt.Fprintf(w, "%s: warning: %s\n", name, l)
	}
}

// WarnDamage says, once per input, what of the inputs was not read as
// written: a torn tail with its offset, corrupt chunks skipped, damage
// read around (logfmt.Damage). Every verb that reads a log calls it after
// reading, so a torn or damaged input never passes in silence.
func WarnDamage(c *cli.Context, ds ...logfmt.Damage) {
	for _, d := range ds {
		Warn(c, d.Lines()...)
	}
}
