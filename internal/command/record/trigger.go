package record

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// SnapshotCommand returns the snapshot command: the zenoh client of
// record --snapshot's queryable.
func SnapshotCommand() *cli.Command {
	return &cli.Command{
		Name:      "snapshot",
		Usage:     "trigger a snapshot in the recorders running with record --snapshot, and print the files they wrote",
		ArgsUsage: "[NAME ...]",
		Description: `Sends a zenoh query to vrlog/record/NAME/snapshot for each NAME (a recorder's
--name, by default its -o file's name; a pattern such as '*' reaches every
recorder), and waits until each recorder answers with the snapshot it wrote (it asks again until one
answers):
the window before the query and its --after window, verified and renamed into
place. Without NAME it asks every recorder ('*'). --note adds a text to the
snapshot's cause.

Prints one line per snapshot written. Exit 3 when no recorder answered within
--timeout, or one could not write its snapshot.

EXAMPLES:
   snapshot bug --note "controller oscillated"
   snapshot --connect tcp/ROUTER:7447 --mode client '*'

` + cliutil.ExitCodesHelp,
		Flags: append(zenohflags.Flags(),
			&cli.StringFlag{Name: "note", Usage: "`TEXT` added to the snapshot's cause"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "how long to wait for the recorders' answers (their --after window and the writing)"},
		),
		Action: runSnapshot,
	}
}

func runSnapshot(c *cli.Context) error {
	names := c.Args().Slice()
	if len(names) == 0 {
		names = []string{"*"}
	}
	for _, n := range names {
		if _, err := keyexpr.Parse(n); err != nil || strings.Contains(n, "/") {
			return cliutil.Usage("%q: want a recorder's --name, one level of a zenoh key, or a pattern such as '*'", n)
		}
	}
	if c.Duration("timeout") <= 0 {
		return cliutil.Usage("--timeout: want a positive duration")
	}
	zc, err := zenohflags.Config(c)
	if err != nil {
		return err
	}
	sess, err := zenoh.Open(zc)
	if err != nil {
		return zenohflags.OpenError(fmt.Errorf("zenoh: %w", err))
	}
	defer sess.Close()
	var payload []byte
	if n := c.String("note"); n != "" {
		payload = []byte(n)
	}
	deadline := time.Now().Add(c.Duration("timeout"))
	var failed []string
	for _, n := range names {
		key := "vrlog/record/" + n + "/snapshot"
		replies, err := ask(c, sess, key, payload, deadline)
		if err != nil {
			return cliutil.Runtime(fmt.Errorf("zenoh query %s: %w", key, err))
		}
		if len(replies) == 0 {
			failed = append(failed, fmt.Sprintf("no recorder answered %s within %s (is one running with --snapshot, and does zenoh reach it?)", key, c.Duration("timeout")))
		}
		for _, r := range replies {
			if r.Err {
				failed = append(failed, fmt.Sprintf("%s: %s", r.Key, r.Payload))
				continue
			}
			fmt.Fprintf(c.App.Writer, "%s: wrote %s\n", r.Key, r.Payload)
		}
	}
	if len(failed) > 0 {
		return cliutil.Runtime(fmt.Errorf("%s", strings.Join(failed, "; ")))
	}
	return nil
}

// ask queries key until a recorder answers or the deadline passes: a new
// session learns the routes to the recorders' queryables in its first
// moments (zenoh's gossip), and a query before then reaches none.
func ask(c *cli.Context, sess *zenoh.Session, key string, payload []byte, deadline time.Time) ([]zenoh.GetReply, error) {
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		replies, err := sess.Get(c.Context, key, payload, left)
		if err != nil || len(replies) > 0 {
			return replies, err
		}
		select {
		case <-c.Context.Done():
			return nil, c.Context.Err()
		case <-time.After(min(250*time.Millisecond, left)):
		}
	}
}
