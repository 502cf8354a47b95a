// Command replay republishes a .vrlog log over zenoh and iceoryx2 at the
// original pacing into a controller under test (the same command as
// `vrlog replay`). It links the native transport library (make build).
package main

import (
	"os"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/command/replay"
)

func main() { cliutil.Run(cliutil.Single(replay.Command()), os.Args) }
