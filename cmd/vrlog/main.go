// Command vrlog is the umbrella binary: every verb of the toolkit under one
// name (vrlog record, vrlog analyze, vrlog info, ...). The standalone
// binaries record, replay and analyze run the same command definitions.
package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
)

func main() {
	cliutil.Run(newApp(), os.Args)
}

// newApp is the vrlog application: every verb, shell completion on.
func newApp() *cli.App {
	return &cli.App{
		Name:  "vrlog",
		Usage: "record, replay and audit robot-simulator streams (zenoh state, iceoryx2 camera frames)",
		Description: `vrlog records a simulator's zenoh and iceoryx2 streams into a chunked, indexed,
crash-safe .vrlog file, replays it at the original pacing into a controller
under test, and audits its timing offline (skips, restarts, outages, lag).

Shell completion: vrlog completion bash|zsh|fish. The manual: vrlog man.

` + cliutil.ExitCodesHelp,
		Commands:             commands(),
		HideHelpCommand:      true,
		EnableBashCompletion: true,
	}
}
