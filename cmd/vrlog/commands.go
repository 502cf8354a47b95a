package main

import (
	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/command/analyze"
	"github.com/vrlog/vrlog/internal/command/controller"
	"github.com/vrlog/vrlog/internal/command/ctl"
	"github.com/vrlog/vrlog/internal/command/fleet"
	"github.com/vrlog/vrlog/internal/command/logtools"
	"github.com/vrlog/vrlog/internal/command/rec"
	"github.com/vrlog/vrlog/internal/command/record"
	"github.com/vrlog/vrlog/internal/command/replay"
	"github.com/vrlog/vrlog/internal/command/sim"
	"github.com/vrlog/vrlog/internal/command/view"
)

// commands lists every verb, grouped for --help. Each package under
// internal/command owns its verbs' definitions; the standalone binaries
// reuse them.
func commands() []*cli.Command {
	var cmds []*cli.Command
	add := func(category string, cs ...*cli.Command) {
		for _, c := range cs {
			c.Category = category
			cmds = append(cmds, c)
		}
	}
	add("jobs", record.Command(), replay.Command(), analyze.Command())
	add("recorders", rec.Commands()...)
	add("test fixture", ctl.Command(), controller.Command())
	add("fleet", fleet.FleetCommand(), fleet.CollectCommand())
	add("log tools", logtools.Commands()...)
	add("viewer", view.Command())
	add("simulator", sim.Command())
	add("help", docCommands()...)
	return cmds
}
