package cliutil

import (
	"fmt"
	"os"
	"regexp"

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
		fmt.Fprintf(w, "%s: warning: %s\n", name, Readable(l))
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

// goPackage is a Go package name of this module leading an error text
// ("logfmt: CRC mismatch"): the library's, for its callers; the command
// line says the rest. The transports' names (zenoh, iceoryx2) stay: they
// tell the user which one.
var goPackage = regexp.MustCompile(`\b(logfmt|player|replayer|recorder|codec|hostclock|replayctl|outfile|keyexpr|mcapexport|sampler|analyzer|livecheck|recctl|filexfer|fleetctl): `)

// Readable is an error or warning text as a verb prints it: without the
// Go package names the library's errors begin with.
func Readable(msg string) string { return goPackage.ReplaceAllString(msg, "") }
