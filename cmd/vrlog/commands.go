package main

import "github.com/urfave/cli/v2"

// commands lists every verb. Each package under internal/command owns its
// verbs' definitions; the standalone binaries reuse them.
func commands() []*cli.Command {
	var cmds []*cli.Command
	return cmds
}
