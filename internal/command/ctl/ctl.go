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
--replay: the one replay that answers on the network, several being a usage
error naming them; --start-paused off a terminal names its channel
replay-PID and prints it), as a zenoh query on vrlog/replay/NAME/control,
and prints the replay's status once the command took effect: a step once
its records are out, a seek once the position moved. --timeout bounds the
whole command. Any zenoh client can do the same (docs/replay.md, "Remote
control").

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
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long the command may take: the session, the queries, the answer"},
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
	end := time.Now().Add(c.Duration("timeout")) // --timeout bounds the whole command: session, queries, close
	sess, err := openBy(c, end)
	if err != nil {
		return err
	}
	defer closeBy(sess, end)
	if name == "" {
		if name, err = theReplay(c, sess, end); err != nil {
			return err
		}
	}
	st, err := sendWhenReachable(c, sess, name, cmd, end)
	switch {
	case errors.Is(err, replayctl.ErrRefused):
		return cliutil.Usage("%v", err)
	case errors.Is(err, replayctl.ErrSeveralReplays):
		return cliutil.Runtime(fmt.Errorf("%w (replay --control NAME)", err))
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
// until one answers (or end passes), and only then sends the command,
// once, with the time left. A command is never sent twice: a step or seek repeated after a
// reply that came too late would be carried out twice.
func sendWhenReachable(c *cli.Context, sess *zenoh.Session, name, cmd string, end time.Time) (replayctl.Status, error) {
	timeout := c.Duration("timeout")
	noReplay := func() error {
		return fmt.Errorf("%w on %s within %v (is it running with --control %s, and reachable over zenoh?)",
			replayctl.ErrNoReplay, replayctl.ControlKey(name), timeout, name)
	}
	for {
		if time.Until(end) <= 0 {
			return replayctl.Status{}, noReplay()
		}
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
// (ctl without --replay), asked until one does or end passes; after
// the first answer it gathers the answers for gatherWindow (within
// --timeout), and several replays are a usage error naming them.
func theReplay(c *cli.Context, sess *zenoh.Session, end time.Time) (string, error) {
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

// closeWait is the longest ctl waits for its session to close once it
// has its answer: closing waits for the connections zenoh is still
// opening, and one to a peer that accepts TCP but never answers (a frozen
// process) waits for zenoh's open timeout (10 s). ctl declares nothing, so
// nothing is lost when the process ends first.
const closeWait = 250 * time.Millisecond

// openBy opens the session of the zenoh flags, failing when it has not
// opened by end (a --connect endpoint that accepts but never answers).
func openBy(c *cli.Context, end time.Time) (*zenoh.Session, error) {
	type opened struct {
		s   *zenoh.Session
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		s, err := zenohflags.Open(c)
		ch <- opened{s, err}
	}()
	t := time.NewTimer(time.Until(end))
	defer t.Stop()
	select {
	case o := <-ch:
		return o.s, o.err
	case <-t.C:
		go func() { // opened after all: close it in the background; the process ends anyway
			if o := <-ch; o.s != nil {
				o.s.Close()
			}
		}()
		return nil, cliutil.Runtime(fmt.Errorf("%w: the zenoh session did not open within --timeout %v", replayctl.ErrNoReplay, c.Duration("timeout")))
	}
}

// closeBy closes the session, waiting at most closeWait and never past
// end; a close still under way is left to the end of the process.
func closeBy(s *zenoh.Session, end time.Time) {
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	t := time.NewTimer(max(min(closeWait, time.Until(end)), 0))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
