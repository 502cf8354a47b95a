// Package zenohflags holds the zenoh session flags that sim, record and
// replay share, so each command spells and checks them the same way.
package zenohflags

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Flags are --connect, --listen, --mode, --zenoh-config (or $ZENOH_CONFIG,
// as zenoh's own tools read it) and --no-multicast-scouting (alias
// --no-multicast).
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "connect", Usage: "zenoh `ENDPOINT` to connect to, e.g. tcp/127.0.0.1:7447 (repeatable)"},
		&cli.StringSliceFlag{Name: "listen", Usage: "zenoh `ENDPOINT` to listen on (repeatable)"},
		&cli.StringFlag{Name: "mode", Usage: "zenoh `MODE`: peer (the default: meets other peers directly) or client (only through the router given by --connect; docs/deployment.md)"},
		&cli.StringFlag{Name: "zenoh-config", EnvVars: []string{"ZENOH_CONFIG"}, Usage: "zenoh JSON5 configuration `FILE`, e.g. deploy/client.json5 (--mode, --connect, --listen and --no-multicast-scouting override it)"},
		&cli.BoolFlag{Name: "no-multicast-scouting", Aliases: []string{"no-multicast"},
			Usage: "disable zenoh multicast discovery (loopback-only set-ups: give --connect or --listen)"},
	}
}

// Config reads and checks the Flags: a malformed endpoint, an unknown mode
// or a missing configuration file is a usage error (exit 2) in every verb,
// before anything is opened.
func Config(c *cli.Context) (zenoh.Config, error) {
	cfg := zenoh.Config{
		ConfigFile: c.String("zenoh-config"), Mode: zenoh.Mode(c.String("mode")),
		Connect: c.StringSlice("connect"), Listen: c.StringSlice("listen"),
		DisableMulticastScouting: c.Bool("no-multicast-scouting"),
	}
	switch cfg.Mode {
	case zenoh.ModeDefault, zenoh.ModePeer, zenoh.ModeClient:
	default:
		return cfg, cliutil.Usage("--mode %q: want peer or client", cfg.Mode)
	}
	if cfg.ConfigFile != "" {
		if _, err := os.Stat(cfg.ConfigFile); err != nil {
			return cfg, cliutil.Usage("--zenoh-config: %v", err)
		}
	}
	for _, f := range []struct {
		flag string
		eps  []string
	}{{"connect", cfg.Connect}, {"listen", cfg.Listen}} {
		for _, ep := range f.eps {
			if err := CheckEndpoint(ep); err != nil {
				return cfg, cliutil.Usage("--%s %q: %v", f.flag, ep, err)
			}
		}
	}
	return cfg, nil
}

// ipLinks are the zenoh link protocols whose address is HOST:PORT.
var ipLinks = map[string]bool{"tcp": true, "udp": true, "tls": true, "quic": true, "ws": true}

// otherLinks take a path or device name.
var otherLinks = map[string]bool{"unixsock-stream": true, "unixpipe": true, "serial": true, "vsock": true}

// CheckEndpoint checks a zenoh endpoint, PROTOCOL/ADDRESS[?METADATA][#CONFIG]
// (e.g. tcp/127.0.0.1:7447, tcp/[::1]:7447, udp/host.example:7447).
func CheckEndpoint(ep string) error {
	proto, addr, ok := strings.Cut(ep, "/")
	if !ok || proto == "" {
		return fmt.Errorf("want PROTOCOL/ADDRESS, e.g. tcp/127.0.0.1:7447")
	}
	if i := strings.IndexAny(addr, "?#"); i >= 0 {
		addr = addr[:i]
	}
	switch {
	case ipLinks[proto]:
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("want %s/HOST:PORT: %v", proto, err)
		}
		if host == "" {
			return fmt.Errorf("want %s/HOST:PORT: no host (listen on all interfaces with 0.0.0.0 or [::])", proto)
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return fmt.Errorf("port %q: want a number 0..65535", port)
		}
	case otherLinks[proto]:
		if addr == "" {
			return fmt.Errorf("want %s/ADDRESS", proto)
		}
	default:
		return fmt.Errorf("unknown protocol %q (want tcp, udp, tls, quic, ws, unixsock-stream, unixpipe, serial or vsock)", proto)
	}
	return nil
}

// OpenError classifies a failure to open a zenoh session: a configuration
// zenoh refused is a usage error, anything else a runtime failure, said
// with its usual causes (a client's router unreachable, or refusing it).
func OpenError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, zenoh.ErrInvalid) {
		return cliutil.Usage("%v", err)
	}
	return cliutil.Runtime(fmt.Errorf("%w (is the router running and reachable? a router with access control, deploy/router-acl.json5, refuses a client whose --zenoh-config gives no user and password of its own)", err))
}

// Open reads the Flags and opens a session with them; the error carries
// its exit code (Config's usage errors, then OpenError's).
func Open(c *cli.Context) (*zenoh.Session, error) {
	zc, err := Config(c)
	if err != nil {
		return nil, err
	}
	s, err := zenoh.Open(zc)
	if err != nil {
		return nil, OpenError(zenoh.Named(err))
	}
	return s, nil
}
