// Package viewer serves logs or live streams to Foxglove (vrlog view):
// a foxws.Server fed by a log playback (the logs merged as replay merges
// them, played by the replay's engine, steered by the clients: ranged
// playback) or by a live bridge of the zenoh and iceoryx2 streams. The
// encodings are package foxglove's, the MCAP export's.
package viewer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vrlog/vrlog/foxws"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/replayer"
)

// DefaultAddr is where a viewer listens unless told otherwise: this
// machine only.
const DefaultAddr = "127.0.0.1:8765"

// Config says what to serve and where.
type Config struct {
	// Files are logs to play back (merged by receive time, as replay
	// merges them), their channels and window; or Live, streams to bridge.
	Files    []string
	Tolerant bool
	Channels *keyexpr.Set
	Window   logfmt.Window
	Live     *Live
	// Addr is the listen address (DefaultAddr); Listener, if set, is used
	// instead.
	Addr     string
	Listener net.Listener
	// Speed is the playback's speed until a client changes it (default 1).
	Speed float64
	// Server configures the WebSocket server (queues, clients, timeouts).
	Server foxws.Options
	// OnListen, if set, is told the address once the server listens.
	OnListen func(addr string)
	// OnStatus, if set, is called about once a second.
	OnStatus func(Status)
	// Warn receives warnings, a line each (nil: discarded).
	Warn func(string)
}

// Status is the viewer's state for a status line.
type Status struct {
	foxws.Stats
	Playback       *foxws.PlaybackState // a log playback's, nil live
	TransportDrops uint64               // live: samples the subscriptions' native queues dropped
}

// ErrNoInput: neither logs nor live streams were given.
var ErrNoInput = errors.New("viewer: give logs to play back or live streams to bridge")

// Run serves until ctx ends. Errors opening the logs are the replayer's
// (*replayer.ConfigError, replayer.ErrInput).
func Run(ctx context.Context, cfg Config) error {
	if (len(cfg.Files) == 0) == (cfg.Live == nil) {
		return ErrNoInput
	}
	warn := cfg.Warn
	if warn == nil {
		warn = func(string) {}
	}
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	so := cfg.Server
	var pb *playback
	var logs *replayer.Logs
	if len(cfg.Files) > 0 {
		var err error
		if logs, err = replayer.OpenLogs(replayer.Config{Files: cfg.Files, Tolerant: cfg.Tolerant, Channels: cfg.Channels, Window: cfg.Window}); err != nil {
			return err
		}
		defer logs.Close()
		pb = newPlayback(ctx, logs, cfg.Speed)
		defer pb.wait()
		so.Playback, so.OnSubscribe = pb, pb.Start
		if so.Name == "" {
			so.Name = "vrlog view " + filesText(cfg.Files)
		}
	} else if so.Name == "" {
		so.Name = "vrlog view --live"
	}
	srv := foxws.New(so)
	var br *bridge
	if pb != nil {
		pb.srv = srv // before any client: nothing calls the playback yet
		for i, c := range logs.Channels() {
			if err := srv.AddChannel(logfmt.Channel{ID: uint16(i), Name: c.Name, Transport: c.Transport, Topic: c.Topic, Schema: c.Schema, Meta: c.Meta}); err != nil {
				return err
			}
		}
	} else {
		var stop func()
		var err error
		if br, stop, err = runLive(ctx, *cfg.Live, srv, warn); err != nil {
			return err
		}
		defer stop()
	}
	l := cfg.Listener
	if l == nil {
		addr := cfg.Addr
		if addr == "" {
			addr = DefaultAddr
		}
		var err error
		if l, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("viewer: listen: %w", err)
		}
	}
	if cfg.OnListen != nil {
		cfg.OnListen(l.Addr().String())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if cfg.OnStatus != nil {
				st := Status{Stats: srv.Stats()}
				if pb != nil {
					ps := pb.State()
					st.Playback = &ps
				}
				if br != nil {
					st.TransportDrops = br.Dropped()
				}
				cfg.OnStatus(st)
			}
			if pb != nil {
				select {
				case err := <-pb.errs:
					warn("playback: " + err.Error())
				default:
				}
			}
		}
	}()
	err := srv.Serve(ctx, l)
	cancel()
	<-done
	return err
}

func filesText(files []string) string {
	if len(files) == 1 {
		return files[0]
	}
	return fmt.Sprintf("%s and %d more", files[0], len(files)-1)
}
