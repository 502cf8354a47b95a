// Command record captures zenoh and iceoryx2 streams into a .vrlog log (the
// same command as `vrlog record`).
package main

import (
	"os"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/command/record"
)

func main() { cliutil.Run(cliutil.Single(record.Command()), os.Args) }
