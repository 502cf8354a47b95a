// Command analyze is vrlog's offline timing audit (the same command as
// `vrlog analyze`). It needs neither cgo nor Rust:
//
//	go install ./cmd/analyze   (from a checkout)
package main

import (
	"os"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/command/analyze"
)

func main() { cliutil.Run(cliutil.Single(analyze.Command()), os.Args) }
