package main

import (
	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/command/analyze"
	"github.com/vrlog/vrlog/internal/command/logtools"
	"github.com/vrlog/vrlog/internal/command/record"
	"github.com/vrlog/vrlog/internal/command/replay"
	"github.com/vrlog/vrlog/internal/command/sim"
)

// commands lists every verb. Each package under internal/command owns its
// verbs' definitions; the standalone binaries reuse them.
func commands() []*cli.Command {
	cmds := []*cli.Command{record.Command(), analyze.Command(), sim.Command()}
	cmds = append(cmds, logtools.Commands()...)
	cmds = append(cmds, replay.Command())
	return cmds
}
