package record

import (
	"errors"
	"fmt"
	"slices"
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
recorder), and waits until each recorder answers with the snapshot it wrote
(it asks again until one answers): the window before the query and its
--after window, verified and renamed into place. Without NAME it asks every recorder ('*'). --note adds a text to the
snapshot's cause.

Prints one line per snapshot written. Exit 3 when no recorder answered within
--timeout, or one could not write its snapshot; exit 2, at once, when
recorders are running but none has that NAME (it lists the ones there are).

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
		replies, err := ask(c, sess, n, key, payload, deadline)
		var missing *noSuchRecorder
		if errors.As(err, &missing) {
			return cliutil.Usage("%v", err)
		}
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

// noSuchRecorder is a NAME that no running recorder has, while others run.
type noSuchRecorder struct {
	name  string
	names []string // the recorders there are
}

func (e *noSuchRecorder) Error() string {
	return fmt.Sprintf("no recorder named %q (the recorders running with --snapshot: %s)", e.name, strings.Join(e.names, ", "))
}

// ask queries key until a recorder answers or the deadline passes: a new
// session learns the routes to the recorders' queryables in its first
// moments (zenoh's gossip), and a query before then reaches none. When
// recorders are there (each holds a liveliness token on its query key)
// and none of them is name, twice in a row, it returns a noSuchRecorder
// instead of waiting for the deadline.
func ask(c *cli.Context, sess *zenoh.Session, name, key string, payload []byte, deadline time.Time) ([]zenoh.GetReply, error) {
	pat, err := keyexpr.Parse(name)
	if err != nil {
		return nil, err // checked by runSnapshot
	}
	misses := 0
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		replies, err := sess.Get(c.Context, key, payload, left)
		if err != nil || len(replies) > 0 {
			return replies, err
		}
		wait := min(250*time.Millisecond, left)
		if names := recorders(sess, wait); len(names) > 0 && !slices.ContainsFunc(names, pat.Match) {
			if misses++; misses == 2 {
				return nil, &noSuchRecorder{name: name, names: names}
			}
		} else {
			misses = 0
		}
		select {
		case <-c.Context.Done():
			return nil, c.Context.Err()
		case <-time.After(wait):
		}
	}
}

// recorders are the --names of the recorders running with --snapshot that
// sess reaches, from their liveliness tokens (vrlog/record/NAME/snapshot).
func recorders(sess *zenoh.Session, timeout time.Duration) []string {
	keys, err := sess.LiveTokens("vrlog/record/*/snapshot", timeout)
	if err != nil {
		return nil
	}
	var names []string
	for _, k := range keys {
		if parts := strings.Split(k, "/"); len(parts) == 4 && !slices.Contains(names, parts[2]) {
			names = append(names, parts[2])
		}
	}
	return names
}
