package record

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/foxws"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/viewer"
)

// viewFlags are record's live view: what it records, served to Foxglove
// as it comes (vrlog view --live, without a second subscription).
func viewFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "view", Usage: "also serve what is recorded to Foxglove over its WebSocket protocol, as it comes (as vrlog view --live, on the recorder's own subscriptions; a slow viewer loses only its own frames, never a record of the log)"},
		&cli.StringFlag{Name: "view-addr", Value: viewer.DefaultAddr, Usage: "with --view: the `ADDR` to listen on (another interface than loopback only when given)"},
	}
}

// recordView is a live viewer fed by the recorder's writer stage
// (recorder.View): every channel and record it accounts for, on the log's
// receive clock.
type recordView struct{ s *foxws.Server }

func (v recordView) Channel(c *logfmt.Channel) { v.s.AddChannel(*c) }
func (v recordView) Record(r *logfmt.Record)   { v.s.Write(r, r.RecvWallNs) } // a client that cannot keep up loses its own messages, counted

// startView serves the recording to Foxglove with --view; the returned
// func stops serving, once the recording is over.
func startView(c *cli.Context, cfg *recorder.Config, errw io.Writer) (stop func(), err error) {
	if !c.Bool("view") {
		if c.IsSet("view-addr") {
			return nil, cliutil.Usage("--view-addr needs --view")
		}
		return func() {}, nil
	}
	l, err := net.Listen("tcp", c.String("view-addr"))
	if err != nil {
		return nil, cliutil.Usage("--view-addr %s: %v", c.String("view-addr"), err)
	}
	srv := foxws.New(foxws.Options{Name: "vrlog record --view"})
	cfg.View = recordView{srv}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ctx, l) }()
	fmt.Fprintf(errw, "record: viewing on ws://%s (Foxglove: Open connection, Foxglove WebSocket)\n", l.Addr())
	return func() { cancel(); <-done }, nil
}
