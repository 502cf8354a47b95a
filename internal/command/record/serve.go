package record

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/ctlaccess"
	"github.com/vrlog/vrlog/filexfer"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// serveFiles, with --name, opens the recording's zenoh session itself and
// serves the finished logs of the output's directory on it
// (vrlog/record/NAME/files, `vrlog collect`); it says once when that is
// open to anyone on the zenoh network. The returned func stops serving
// and closes the session, after the recording.
func serveFiles(c *cli.Context, cfg *recorder.Config, errw io.Writer) (stop func(), err error) {
	name := c.String("name")
	if name == "" {
		return func() {}, nil
	}
	if err := filexfer.CheckName(name); err != nil {
		return nil, cliutil.Usage("--name %q: want one level of a zenoh key (no /, *, $, ?, #)", name)
	}
	sess, err := zenoh.Open(cfg.Zenoh)
	if errors.Is(err, zenoh.ErrInvalid) {
		return nil, cliutil.Usage("%v", err)
	} else if err != nil {
		return nil, cliutil.Runtime(err)
	}
	srv, err := filexfer.Serve(sess, name, filepath.Dir(cfg.Output))
	if err != nil {
		sess.Close()
		return nil, cliutil.Runtime(err)
	}
	if why := ctlaccess.Open(sess); why != "" {
		fmt.Fprintf(errw, "record: warning: the control plane of %s (vrlog/record/%s/...) is open to anyone on this zenoh network: %s; docs/deployment.md \"Access control\"\n", name, name, why)
	}
	cfg.Session = sess
	return func() { srv.Close(); sess.Close() }, nil
}
