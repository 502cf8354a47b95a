package cliutil

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// unknownCommand is the usage error for a first argument that names no
// verb ("vrlog inf x": unknown command "inf"; did you mean info?), nil when
// args name a verb, begin with a flag, or app has no verbs. urfave/cli
// would answer "No help topic" with exit 3.
func unknownCommand(app *cli.App, args []string) error {
	if len(app.Commands) == 0 || len(args) < 2 {
		return nil
	}
	name := args[1]
	if name == "" || name[0] == '-' || app.Command(name) != nil {
		return nil
	}
	var names []string
	for _, c := range app.VisibleCommands() {
		names = append(names, c.Name)
	}
	if s := suggest(name, names); s != "" {
		return Usage("unknown command %q; did you mean %s? (see --help)", name, s)
	}
	return Usage("unknown command %q (the commands: %s)", name, strings.Join(names, ", "))
}

// helpVerb turns "vrlog help [VERB]" into "vrlog [VERB] --help" (the
// apps hide urfave/cli's help command, which answers an unknown verb with
// exit 3).
func helpVerb(app *cli.App, args []string) []string {
	if len(app.Commands) == 0 || len(args) < 2 || args[1] != "help" || app.Command("help") != nil {
		return args
	}
	return append(append([]string{args[0]}, args[2:]...), "--help")
}

// suggest is the name of names that typed most likely means: the shortest
// one it begins (a verb cut short), else the nearest within a few edits (a
// typo); "" when none is near.
func suggest(typed string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		if strings.HasPrefix(n, typed) && (best == "" || len(n) < len(best)) {
			best = n
		}
	}
	if best != "" {
		return best
	}
	limit := max(1, len(typed)/3)
	for _, n := range names {
		if d := edits(typed, n); d <= limit && (best == "" || d < bestD) {
			best, bestD = n, d
		}
	}
	return best
}

// edits is the edit distance of a and b in bytes: insertions, deletions,
// substitutions and swaps of neighbours ("mrege" is one from "merge").
func edits(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			sub := d[i-1][j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			d[i][j] = min(sub, d[i-1][j]+1, d[i][j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
