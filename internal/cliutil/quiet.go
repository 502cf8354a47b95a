package cliutil

import "github.com/urfave/cli/v2"

// QuietUsage is what -q/--quiet means for a verb that does not say more.
const QuietUsage = "print no progress or status lines (results, warnings and errors still print)"

// everyVerbQuiet gives every verb (and a single-command app) -q/--quiet:
// a verb that declares its own keeps it, the others get QuietFlag, so a
// script can pass -q to any verb.
func everyVerbQuiet(app *cli.App) {
	if len(app.Commands) == 0 && app.Action != nil && !hasFlag(app.Flags, "quiet") {
		app.Flags = append(app.Flags, quietFlag())
	}
	for _, c := range app.Commands {
		if !hasFlag(c.Flags, "quiet") {
			c.Flags = append(c.Flags, quietFlag())
		}
	}
}

func quietFlag() cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: QuietUsage}
}

func hasFlag(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
