// Package rec holds the verbs that drive running recorders over zenoh
// (package recctl): `recorders` lists them, `rec VERB` drives one,
// several or all, `snapshot` triggers snapshots.
package rec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/recctl"
	"github.com/vrlog/vrlog/textfit"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Commands returns recorders, rec and snapshot.
func Commands() []*cli.Command {
	return []*cli.Command{recordersCommand(), recCommand(), snapshotCommand()}
}

const exitHelp = `
   rec, snapshot: 2 when a recorder refused the request (not in its state or
   mode, a file name outside its directory, a file that exists) or no
   recorder has a NAME given while others run (said at once); 3 when a
   recorder did not answer within --timeout (no recorder running at all
   included) or could not carry the request out. Every recorder's outcome
   is printed either way.`

// discoveryWait is how long recorders, and rec --all, look for the
// recorders' liveliness tokens (until the first, then while new ones
// arrive: recctl.List); rec's --timeout is for their answers.
const discoveryWait = 3 * time.Second

func recordersCommand() *cli.Command {
	return &cli.Command{
		Name:      "recorders",
		Usage:     "list the recorders running on the zenoh network (record --name, --idle or --snapshot) with their state",
		ArgsUsage: " ",
		Description: `Finds every recorder from its liveliness token (vrlog/record/NAME), asks each
for its status, and prints one line per recorder: its name, host, state
(idle, recording, paused), the file it writes, the bytes written, the rate it
receives, its recorder drops and whether its disk keeps up. --json prints the
statuses (schema ` + recctl.StatusSchema + `, docs/cli.md).

EXAMPLES:
   vrlog recorders
   vrlog recorders --connect tcp/ROUTER:7447 --json

` + cliutil.ExitCodesHelp,
		Flags: append([]cli.Flag{
			&cli.DurationFlag{Name: "timeout", Value: discoveryWait, Usage: "how long to look for recorders and wait for their answers"},
			&cli.BoolFlag{Name: "json", Usage: "print the statuses as JSON"},
		}, zenohflags.Flags()...),
		Action: runRecorders,
	}
}

func recCommand() *cli.Command {
	var verbs []string
	for _, v := range recctl.Verbs {
		verbs = append(verbs, string(v))
	}
	return &cli.Command{
		Name:      "rec",
		Usage:     "drive running recorders over zenoh: " + strings.Join(verbs, ", "),
		ArgsUsage: "VERB NAME... | VERB --all",
		Description: `Sends VERB to the recorders NAME (their record --name; a pattern such as
'cam-$*', a zenoh key expression, names every recorder it matches), or every recorder with --all, at
once, and prints what each did:
   status    its state, file, bytes, rates, drops (as vrlog recorders)
   start     start recording: into --file (a name in the recorder's directory,
             {time} and {n} filled in) or its default (the -o file, then
             BASE-N.vrlog), with --note as the file's note
   stop      finish the file (its name, size and records are printed) and
             stay up, idle: start again later
   pause     stop writing, the file left open; what is received meanwhile is
             counted per channel and stored at resume, and analyze reports the
             pause as "not captured" (no skip, no outage)
   resume    go on writing
   split     finish the file and go on in BASE_001.vrlog, ...: no record is
             lost or written twice across the seam
   snapshot  (snapshot mode) write the last moments and --after, as vrlog snapshot
A recorder that answers nothing within --timeout is reported; one request is
sent once, never again. --json prints a JSON array of the answers (schema
` + recctl.ReplySchema + `, docs/cli.md).

EXAMPLES:
   vrlog rec start cam-host --file 'run-{time}' --note "nightly"
   vrlog rec split --all
   vrlog rec stop cam-host arm-host --json

` + cliutil.ExitCodesHelp + exitHelp,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "every recorder on the network: those whose liveliness tokens appear within 3 s, as vrlog recorders finds them (none: exit 3 then)"},
			&cli.StringFlag{Name: "file", Usage: "with start: the `NAME` of the file, in the recorder's directory"},
			&cli.StringFlag{Name: "note", Usage: "with start or snapshot: a `TEXT` stored in the file"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "how long to wait for the answers (a stop waits for the file's footer; a snapshot for its --after window)"},
			&cli.BoolFlag{Name: "json", Usage: "print the answers as JSON"},
		}, zenohflags.Flags()...),
		Action: runRec,
	}
}

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:      "snapshot",
		Usage:     "trigger a snapshot in the recorders running with record --snapshot, and print the files they wrote",
		ArgsUsage: "[NAME ...]",
		Description: `Sends a snapshot request (vrlog/record/NAME/snapshot) to each NAME (a
recorder's --name, by default its -o file's name; a pattern such as '*'
reaches every recorder), and waits until each recorder answers with the
snapshot it wrote (a recorder still starting is looked for until --timeout):
the window before the query and its --after window, verified and renamed
into place. Without NAME it asks every recorder.
--note adds a text to the snapshot's cause. The same as vrlog rec snapshot.

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

func runRecorders(c *cli.Context) error {
	if c.NArg() > 0 {
		return cliutil.Usage("unexpected argument %q: recorders lists every recorder", c.Args().First())
	}
	sess, err := zenohflags.Open(c)
	if err != nil {
		return err
	}
	defer sess.Close()
	answers, err := recctl.Ask(c.Context, sess, nil, recctl.Status, recctl.Request{}, c.Duration("timeout"))
	if err != nil {
		return cliutil.Runtime(err)
	}
	if c.Bool("json") {
		out := []any{}
		for _, a := range answers {
			if a.Err != nil {
				out = append(out, map[string]string{"name": a.Name, "error": a.Err.Error()})
			} else {
				out = append(out, a.Reply.Status)
			}
		}
		return printJSON(c.App.Writer, out)
	}
	if len(answers) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "recorders: none found within %s (started with record --name, --idle or --snapshot, and reachable over zenoh?)\n", c.Duration("timeout"))
		return nil
	}
	printTable(c.App.Writer, answers)
	return nil
}

// printTable prints one line per recorder, fitted to the terminal (a
// table too wide splits into groups of columns, each led by the name).
func printTable(w io.Writer, answers []recctl.Answer) {
	t := textfit.Table{Keep: 1}
	t.Row("NAME", "HOST", "STATE", "FILE", "WRITTEN", "RECEIVING", "DROPS", "DISK")
	for _, a := range answers {
		var absent *absentError
		switch {
		case errors.As(a.Err, &absent):
			t.Row(a.Name, "-", "no such recorder", "-", "-", "-", "-", "-")
			continue
		case a.Err != nil:
			t.Row(a.Name, "-", "no answer", "-", "-", "-", "-", "-")
			continue
		}
		st := a.Reply.Status
		var hz, mbps float64
		for _, ch := range st.Channels {
			hz += ch.Hz
			mbps += ch.MBps
		}
		disk := "keeps up"
		if !st.DiskKeepsUp {
			disk = "behind by " + ui.Bytes(st.BacklogBytes)
		}
		file := st.File
		if file == "" {
			file = "-"
		}
		t.Row(st.Name, st.Host, st.State, file, ui.Bytes(st.BytesWritten), fmt.Sprintf("%.0f msg/s, %.1f MB/s", hz, mbps), fmt.Sprint(st.Drops), disk)
	}
	t.Write(w, cliutil.TextWidth(w))
}

func runRec(c *cli.Context) error {
	if c.NArg() == 0 {
		return cliutil.Usage("no verb: give one of status, start, stop, pause, resume, split, snapshot, and NAME... or --all")
	}
	v, err := recctl.ParseVerb(c.Args().First())
	if err != nil {
		return cliutil.Usage("%v", err)
	}
	pats := c.Args().Tail()
	if c.Bool("all") == (len(pats) > 0) {
		return cliutil.Usage("rec %s: give recorder NAMEs or --all (not both)", v)
	}
	if c.Bool("all") {
		pats = nil // every recorder
	}
	req := recctl.Request{File: c.String("file"), Note: c.String("note")}
	if _, err := recctl.ParseRequest(v, mustJSON(req)); err != nil {
		return cliutil.Usage("%v (--file goes with start; --note with start and snapshot)", err)
	}
	answers, err := drive(c, pats, v, req)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if err := printJSON(c.App.Writer, answersJSON(answers)); err != nil {
			return err
		}
	} else if v == recctl.Status {
		printTable(c.App.Writer, answers)
	} else {
		for _, a := range answers {
			fmt.Fprintln(c.App.Writer, describe(a, v, c.Duration("timeout")))
		}
	}
	return outcome(answers, v, c.Duration("timeout"), c.Bool("json") || v != recctl.Status) // the status table says no more than "no answer"
}

// drive resolves the recorders named by pats (nil: every one) and sends
// them v.
func drive(c *cli.Context, pats []string, v recctl.Verb, req recctl.Request) ([]recctl.Answer, error) {
	for _, p := range pats {
		if _, err := keyexpr.Parse(p); err != nil || strings.Contains(p, "/") {
			return nil, cliutil.Usage("%q: want a recorder's --name (one zenoh key level) or a pattern such as 'cam-$*' or '*' (zenoh key expressions: $* inside a name)", p)
		}
	}
	if c.Duration("timeout") <= 0 {
		return nil, cliutil.Usage("--timeout: want a positive duration")
	}
	sess, err := zenohflags.Open(c)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	deadline := time.Now().Add(c.Duration("timeout"))
	var names, absent, running []string
	looked := c.Duration("timeout")
	if pats == nil { // --all: whoever is there, found as vrlog recorders finds them
		looked = min(discoveryWait, looked)
		if names, err = recctl.List(c.Context, sess, looked); err != nil {
			return nil, cliutil.Runtime(err)
		}
	} else if names, absent, running, err = resolve(c.Context, sess, pats, deadline); err != nil {
		return nil, err
	}
	var answers []recctl.Answer
	if len(names) > 0 {
		if answers, err = recctl.Ask(c.Context, sess, names, v, req, time.Until(deadline)); err != nil {
			return nil, cliutil.Runtime(err)
		}
	}
	for _, p := range absent {
		answers = append(answers, recctl.Answer{Name: p, Err: &absentError{p, running}})
	}
	if len(answers) == 0 {
		return nil, cliutil.Runtime(fmt.Errorf("no recorder found within %s (started with record --name, --idle or --snapshot, and reachable over zenoh?)", looked))
	}
	return answers, nil
}

// resolve names the recorders pats match (nil: every one), looking until
// each pattern matches one or the deadline passes (a recorder may be
// starting). A pattern that matches none twice in a row while other
// recorders run is absent (and reported so); with none running, a
// literal name is asked at the deadline all the same.
func resolve(ctx context.Context, sess *zenoh.Session, pats []string, deadline time.Time) (found, absent, running []string, err error) {
	if pats == nil {
		return nil, nil, nil, nil
	}
	misses := 0
	for {
		running, err = recctl.List(ctx, sess, min(time.Second, max(time.Until(deadline), time.Millisecond)))
		if err != nil {
			return nil, nil, nil, cliutil.Runtime(err)
		}
		found, absent = nil, nil
		for _, p := range pats {
			kp, _ := keyexpr.Parse(p) // checked by drive
			matched := false
			for _, r := range running {
				if kp.Match(r) {
					matched = true
					if !slices.Contains(found, r) { // a name given twice is asked once
						found = append(found, r)
					}
				}
			}
			if !matched && !slices.Contains(absent, p) {
				absent = append(absent, p)
			}
		}
		switch {
		case len(absent) == 0:
			return found, nil, running, nil
		case len(running) > 0:
			if misses++; misses == 2 {
				return found, absent, running, nil
			}
		case time.Now().After(deadline):
			for _, p := range absent {
				if kp, _ := keyexpr.Parse(p); kp.Literal() && !slices.Contains(found, p) {
					found = append(found, p) // asked, and reported as not answering
				}
			}
			return found, nil, running, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func quote(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// absentError is a NAME that no running recorder has, while others run.
type absentError struct {
	name    string
	running []string
}

func (e *absentError) Error() string {
	return fmt.Sprintf("no recorder named %q (the recorders running: %s)", e.name, strings.Join(e.running, ", "))
}

// noAnswer says that a recorder did not answer, and what may be why.
func noAnswer(a recctl.Answer, v recctl.Verb, timeout time.Duration) string {
	if errors.Is(a.Err, recctl.ErrIgnored) {
		return fmt.Sprintf("%s: %v", a.Name, a.Err) // it is there: the answer says why it may be silent
	}
	return fmt.Sprintf("no recorder answered %s within %s (is one running with --name %s, and does zenoh reach it?)", recctl.Key(a.Name, v), timeout, a.Name)
}

// describe says in one line what a recorder did.
func describe(a recctl.Answer, v recctl.Verb, timeout time.Duration) string {
	var absent *absentError
	switch {
	case errors.As(a.Err, &absent):
		return fmt.Sprintf("%s: %v", a.Name, a.Err)
	case a.Err != nil:
		return a.Name + ": " + noAnswer(a, v, timeout)
	}
	r := a.Reply
	if !r.OK {
		return fmt.Sprintf("%s: %s refused (%s): %s", a.Name, r.Verb, r.Code, r.Error)
	}
	var parts []string
	if f := r.Finished; f != nil {
		parts = append(parts, fmt.Sprintf("finished %s (%s, %d records)", f.Path, ui.Bytes(f.Bytes), f.Records))
	}
	if r.File != "" {
		switch r.Verb {
		case recctl.Split:
			parts = append(parts, "goes on in "+r.File)
		default:
			parts = append(parts, "writing "+r.File)
		}
	}
	if s := r.Snapshot; s != nil {
		parts = append(parts, fmt.Sprintf("wrote %s (%d records, %.3f s before, %.3f s after)", s.Path, s.Records, s.BeforeS, s.AfterS))
	}
	parts = append(parts, "now "+r.State)
	return fmt.Sprintf("%s: %s: %s", a.Name, r.Verb, strings.Join(parts, "; "))
}

// outcome is the exit code of a set of answers to v: the worst of them;
// with printed, each answer was printed already, and the error only
// counts them. A NAME no recorder has is exit 2 like a refusal, but is
// said as what it is: nothing refused it.
func outcome(answers []recctl.Answer, v recctl.Verb, timeout time.Duration, printed bool) error {
	var refused, failed, absent, absentWhy []string
	for _, a := range answers {
		var ab *absentError
		switch {
		case errors.As(a.Err, &ab):
			absent, absentWhy = append(absent, fmt.Sprintf("%q", ab.name)), append(absentWhy, ab.Error())
		case errors.Is(a.Err, recctl.ErrIgnored):
			failed = append(failed, a.Err.Error())
		case a.Err != nil:
			failed = append(failed, noAnswer(a, v, timeout))
		case a.Reply.OK:
		case a.Reply.Code == recctl.CodeFailed || a.Reply.Code == recctl.CodeClosed:
			failed = append(failed, a.Name+": "+a.Reply.Error)
		default:
			refused = append(refused, a.Name+": "+a.Reply.Error)
		}
	}
	none := "" // the NAMEs no recorder has
	if len(absent) > 0 {
		none = "no recorder named " + strings.Join(absent, ", ")
	}
	switch {
	case printed && len(failed) > 0:
		return cliutil.Runtime(fmt.Errorf("%d of %d recorders failed or did not answer, %d refused%s (see above)", len(failed), len(answers), len(refused), also(none)))
	case printed && len(refused) > 0:
		return cliutil.Usage("%d of %d recorders refused the request%s (see above)", len(refused), len(answers), also(none))
	case printed && none != "":
		return cliutil.Usage("%s (see above)", none)
	case len(failed) == 1 && len(answers) == 1:
		return cliutil.Runtime(errors.New(failed[0]))
	case len(failed) > 0:
		return cliutil.Runtime(fmt.Errorf("%d of %d recorders: %s%s", len(failed)+len(refused), len(answers), strings.Join(append(failed, refused...), "; "), also(none)))
	case len(refused) == 1 && len(answers) == 1:
		return cliutil.Usage("%s", refused[0])
	case len(refused) > 0:
		return cliutil.Usage("%d of %d recorders refused: %s%s", len(refused), len(answers), strings.Join(refused, "; "), also(none))
	case none != "":
		return cliutil.Usage("%s", strings.Join(absentWhy, "; "))
	}
	return nil
}

// also is "; " and s, or nothing when s is empty.
func also(s string) string {
	if s == "" {
		return ""
	}
	return "; " + s
}

// answerJSON is an answer as --json prints it.
type answerJSON struct {
	Name  string        `json:"name"`
	Reply *recctl.Reply `json:"reply,omitempty"`
	Error string        `json:"error,omitempty"` // no answer
}

func answersJSON(answers []recctl.Answer) []answerJSON {
	out := make([]answerJSON, 0, len(answers))
	for _, a := range answers {
		j := answerJSON{Name: a.Name}
		if a.Err != nil {
			j.Error = a.Err.Error()
		} else {
			j.Reply = &a.Reply
		}
		out = append(out, j)
	}
	return out
}

func runSnapshot(c *cli.Context) error {
	pats := c.Args().Slice()
	if len(pats) == 0 {
		pats = []string{"*"}
	}
	answers, err := drive(c, pats, recctl.Snapshot, recctl.Request{Note: c.String("note")})
	if err != nil {
		return err
	}
	for _, a := range answers {
		if a.Err == nil && a.Reply.OK && a.Reply.Snapshot != nil {
			fmt.Fprintf(c.App.Writer, "%s: wrote %s\n", recctl.Key(a.Name, recctl.Snapshot), a.Reply.Snapshot.Path)
		}
	}
	return outcome(answers, recctl.Snapshot, c.Duration("timeout"), false)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func mustJSON(r recctl.Request) []byte {
	b, _ := json.Marshal(r)
	return b
}
