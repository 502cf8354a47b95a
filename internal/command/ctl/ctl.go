// Package ctl is the `ctl` command: it sends one command to a running
// replay's control channel over zenoh (package replayctl) and prints the
// status the replay answers with, for shells and CI scripts.
package ctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/replayctl"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Command returns the ctl command.
func Command() *cli.Command {
	return &cli.Command{
		Name:      "ctl",
		Usage:     "control a running replay over zenoh: pause, resume, step, seek, rate, status, stop",
		ArgsUsage: "COMMAND [ARG]",
		Description: `Sends one command to the replay started with --control NAME (without
--replay: the one replay that answers on the network; --start-paused off a
terminal names its channel replay-PID and prints it), as a zenoh query on
vrlog/replay/NAME/control, and prints the replay's status once the command
took effect: a step once its records are out, a seek once the position
moved. Any zenoh client can do the same (docs/replay.md, "Remote control").

COMMANDS:
   ` + replayctl.Commands + `

EXAMPLES:
   vrlog ctl status
   vrlog ctl --replay ci step 10
   vrlog ctl --replay ci seek 12.5 --json
   vrlog ctl --replay ci rate 0.5 --connect tcp/127.0.0.1:7447

` + cliutil.ExitCodesHelp + `
   ctl: 2 also when the replay refused the command (e.g. a seek outside its
   window), 3 when no replay answered within --timeout.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "replay", Usage: "the replay's control `NAME` (its --control); default: the one replay that answers"},
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long to wait for the answer"},
			&cli.BoolFlag{Name: "json", Usage: "print the status as JSON (schema " + replayctl.StatusSchema + ", docs/replay.md)"},
		}, zenohflags.Flags()...),
		Action: run,
	}
}

func run(c *cli.Context) error {
	if c.NArg() == 0 {
		return cliutil.Usage("no command: give one of %s", replayctl.Commands)
	}
	cmd := strings.Join(c.Args().Slice(), " ")
	if _, err := replayctl.ParseCommand(cmd); err != nil {
		return cliutil.Usage("%v", err)
	}
	name := c.String("replay")
	if name != "" {
		if err := replayctl.CheckName(name); err != nil {
			return cliutil.Usage("--replay: %v", err)
		}
	}
	if c.Duration("timeout") <= 0 {
		return cliutil.Usage("--timeout %v: want a duration > 0", c.Duration("timeout"))
	}
	sess, err := zenohflags.Open(c)
	if err != nil {
		return err
	}
	defer sess.Close()
	if name == "" {
		if name, err = theReplay(c, sess); err != nil {
			return err
		}
	}
	st, err := sendWhenReachable(c, sess, name, cmd)
	switch {
	case errors.Is(err, replayctl.ErrRefused):
		return cliutil.Usage("%v", err)
	case err != nil:
		return cliutil.Runtime(err)
	}
	out := c.App.Writer
	if c.Bool("json") {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(st)
	} else {
		_, err = fmt.Fprintln(out, st)
	}
	return cliutil.Runtime(err)
}

// sendWhenReachable sends the command once the replay answers: a fresh
// session needs a moment before zenoh routes a query to a queryable it has
// only just learned of, so it asks for the status (which changes nothing)
// until one answers, and only then sends the command, once, with the time
// left. A command is never sent twice: a step or seek repeated after a
// reply that came too late would be carried out twice.
func sendWhenReachable(c *cli.Context, sess *zenoh.Session, name, cmd string) (replayctl.Status, error) {
	timeout := c.Duration("timeout")
	end := time.Now().Add(timeout)
	noReplay := func() error {
		return fmt.Errorf("%w on %s within %v (is it running with --control %s, and reachable over zenoh?)",
			replayctl.ErrNoReplay, replayctl.ControlKey(name), timeout, name)
	}
	for {
		st, err := replayctl.Send(c.Context, sess, name, "status", min(time.Until(end), time.Second))
		if errors.Is(err, replayctl.ErrNoReplay) {
			if time.Until(end) <= 0 {
				return st, noReplay()
			}
			time.Sleep(min(50*time.Millisecond, max(time.Until(end), 0))) // zenoh answers at once when no queryable is known: do not spin
			continue
		}
		if err != nil || strings.Fields(cmd)[0] == "status" {
			return st, err
		}
		break
	}
	left := time.Until(end)
	if left <= 0 {
		return replayctl.Status{}, noReplay()
	}
	st, err := replayctl.Send(c.Context, sess, name, cmd, left)
	if errors.Is(err, replayctl.ErrNoReplay) {
		err = fmt.Errorf("%w on %s within %v: the replay was reachable, so it may still carry out %q when its turn comes (a step waits for its records)",
			replayctl.ErrNoReplay, replayctl.ControlKey(name), timeout, cmd)
	}
	return st, err
}

// gatherWindow is how long ctl without --replay goes on asking after the
// first replay answered: a fresh session learns of the queryables one by
// one, so a first answer from one replay does not mean there is no other.
const gatherWindow = 500 * time.Millisecond

// theReplay is the name of the one replay that answers on the network
// (ctl without --replay), asked until one does or --timeout passes; after
// the first answer it gathers the answers for gatherWindow (within
// --timeout), and several replays are a usage error naming them.
func theReplay(c *cli.Context, sess *zenoh.Session) (string, error) {
	end := time.Now().Add(c.Duration("timeout"))
	seen := map[string]bool{}
	var names []string
	var settled time.Time // when the gathering ends, once one answered
	for {
		wait := min(max(time.Until(end), time.Millisecond), time.Second)
		if !settled.IsZero() {
			wait = min(max(time.Until(settled), time.Millisecond), wait)
		}
		sts, err := replayctl.Running(c.Context, sess, wait)
		if err != nil {
			return "", cliutil.Runtime(err)
		}
		for _, st := range sts {
			if !seen[st.Name] {
				seen[st.Name] = true
				names = append(names, st.Name)
			}
		}
		if len(names) > 0 && settled.IsZero() {
			settled = time.Now().Add(gatherWindow)
			if settled.After(end) {
				settled = end
			}
		}
		switch {
		case len(names) > 1:
			sort.Strings(names)
			return "", cliutil.Usage("%d replays answer (%s): choose one with --replay NAME", len(names), strings.Join(names, ", "))
		case len(names) == 1 && !time.Now().Before(settled):
			return names[0], nil
		case len(names) == 0 && time.Until(end) <= 0:
			return "", cliutil.Runtime(fmt.Errorf("%w on %s within %v (is one running with --control, and reachable over zenoh?)",
				replayctl.ErrNoReplay, replayctl.ControlKey("*"), c.Duration("timeout")))
		}
		time.Sleep(min(50*time.Millisecond, max(time.Until(end), 0)))
	}
}
