// Package zenohflags holds the zenoh session flags that sim, record and
// replay share, so each command spells them the same way.
package zenohflags

import (
	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/transport/zenoh"
)

// Flags are --connect, --listen, --mode, --zenoh-config and
// --no-multicast-scouting (alias --no-multicast).
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "connect", Usage: "zenoh `ENDPOINT` to connect to, e.g. tcp/127.0.0.1:7447 (repeatable)"},
		&cli.StringSliceFlag{Name: "listen", Usage: "zenoh `ENDPOINT` to listen on (repeatable)"},
		&cli.StringFlag{Name: "mode", Usage: "zenoh `MODE`: peer (the default: meets other peers directly) or client (only through the router given by --connect; docs/deployment.md)"},
		&cli.StringFlag{Name: "zenoh-config", Usage: "zenoh JSON5 configuration `FILE`, e.g. deploy/client.json5 (--mode, --connect, --listen and --no-multicast-scouting override it)"},
		&cli.BoolFlag{Name: "no-multicast-scouting", Aliases: []string{"no-multicast"},
			Usage: "disable zenoh multicast discovery (loopback-only set-ups: give --connect or --listen)"},
	}
}

// Config reads the Flags.
func Config(c *cli.Context) zenoh.Config {
	return zenoh.Config{
		ConfigFile: c.String("zenoh-config"), Mode: zenoh.Mode(c.String("mode")),
		Connect: c.StringSlice("connect"), Listen: c.StringSlice("listen"),
		DisableMulticastScouting: c.Bool("no-multicast-scouting"),
	}
}
