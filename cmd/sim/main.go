// Command sim is the bundled simulator (the same command as `vrlog sim`).
package main

import (
	"os"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/command/sim"
)

func main() { cliutil.Run(cliutil.Single(sim.Command()), os.Args) }
