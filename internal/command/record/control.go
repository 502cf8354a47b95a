package record

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/ctlaccess"
	"github.com/vrlog/vrlog/filexfer"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/recctl"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// controlFlags are record's control plane: a name to be driven by over
// zenoh, and starting armed.
func controlFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "name", Usage: "answer the control plane as `NAME`: vrlog rec status|start|stop|pause|resume|split|snapshot NAME, from anywhere on the zenoh network (queries on vrlog/record/NAME/VERB; default with --snapshot or --idle: the -o file's name)"},
		&cli.BoolFlag{Name: "idle", Usage: "open the transports and write nothing until 'vrlog rec start NAME' (a recorder armed on every host, driven from one place)"},
	}
}

// controlName is the recorder's name on the control plane, "" for none:
// --name, else, when the recorder must be reachable (snapshot mode, an
// idle recorder), the -o file's name.
func controlName(c *cli.Context, cfg *recorder.Config) (string, error) {
	name := c.String("name")
	if name == "" && (cfg.Snapshot != nil || cfg.Idle) {
		name = strings.TrimSuffix(filepath.Base(cfg.Output), ".vrlog")
		if recctl.CheckName(name) != nil {
			return "", cliutil.Usage("the -o file's name %q is no recorder name (one level of a zenoh key: no /, *, $, ?, #): give --name", name)
		}
	}
	if name != "" && recctl.CheckName(name) != nil {
		return "", cliutil.Usage("--name %q: want one level of a zenoh key (no /, *, $, ?, #)", name)
	}
	return name, nil
}

// mountControl serves the control plane as name once the recorder runs:
// the verbs (recctl) and the finished logs of the output's directory
// (filexfer, vrlog collect); it says once when they are open to anyone
// on the zenoh network.
func mountControl(c *cli.Context, cfg *recorder.Config, name string, errw io.Writer) {
	if name == "" {
		return
	}
	cfg.Mount = func(r *recorder.Recorder, sess *zenoh.Session) (io.Closer, error) {
		files, err := filexfer.Serve(sess, name, r.Dir())
		if err != nil {
			return nil, err
		}
		verbs, err := recctl.Serve(sess, name, r, recctl.Options{Version: cliutil.Version()})
		if err != nil {
			files.Close()
			return nil, err
		}
		if why := ctlaccess.Open(sess); why != "" {
			fmt.Fprintf(errw, "record: warning: the control plane of %s (vrlog/record/%s/...) is open to anyone on this zenoh network: %s; docs/deployment.md \"Access control\"\n", name, name, why)
		}
		if !c.Bool("quiet") {
			fmt.Fprintf(errw, "record: control plane: %s (vrlog rec status %s; vrlog collect %s)\n", recctl.TokenKey(name), name, name)
		}
		return closers{verbs, files}, nil
	}
}

// closers closes each, in order; the first error is theirs.
type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
