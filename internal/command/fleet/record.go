package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/filexfer"
	"github.com/vrlog/vrlog/fleetctl"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/recctl"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// FleetCommand is `vrlog fleet`.
func FleetCommand() *cli.Command {
	return &cli.Command{
		Name:      "fleet",
		Usage:     "record on several hosts as one: start their recorders at once, show them live, stop them together, then collect and merge their logs",
		ArgsUsage: "NAME... | --all  -o DIR",
		Description: `Drives the recorders NAME (vrlog record --name NAME --idle, one per host, on
any host of the zenoh network), or every one with --all, as one recording:

 1. asks each for its status: a recorder that does not answer, or is not
    idle, is said and left out (--require-all: exit before anything is
    recorded);
 2. starts them all at once (one request each, sent together);
 3. shows one status table, redrawn on a terminal (a line per recorder
    every 5 s off one): state, file, bytes written and drops since the
    start, what it receives, whether its disk keeps up, and which recorder
    has not answered for how long (a partition: the others record on);
 4. stops them all at once on Ctrl-C (or SIGTERM), when --duration has
    passed, or on a zenoh query on vrlog/fleet/NAME/stop (NAME: --name,
    by default DIR's name; any zenoh client, docs/deployment.md); a
    recorder that does not answer its stop is asked again every second
    for --patience, then reported as still recording;
 5. collects the files of this recording from each recorder into DIR/NAME/
    (what vrlog collect does: resumed, verified, atomic) and merges them
    on the simulator's clock into DIR/session.vrlog;
 6. reports the start skew (unless --no-merge): how far apart the
    recorders' first records are on the simulator's clock (each host's
    offset from its clock-sync probes, as the merge found it).

DIR is one recording: one that holds an earlier recording's output (its
merged log, or files in DIR/NAME/ of a recorder named) is refused before
anything is recorded (exit 2): give another -o, or --force to record into
it anyway (the merged log is then replaced and DIR/NAME/ holds the files of
both). vrlog collect into its DIR again is the way to fetch more.

A second Ctrl-C later than a second after the first stops at once (exit 3);
collected partial files are kept and vrlog collect resumes them. Who may
start, stop and fetch is decided by the zenoh router's access control
(deploy/router-acl.json5: only the controller's identity, --zenoh-config
deploy/controller.json5).

EXAMPLES:
   vrlog fleet gpu-box robot-pc -o run1 --duration 2m \
       --zenoh-config controller.json5 --connect tcp/ROUTER:7447
   vrlog fleet --all --require-all -o nightly --file 'nightly-{time}' --json

` + cliutil.ExitCodesHelp + `
   fleet: 2 when a recorder named refused (not idle, in snapshot mode, a bad
   --file) or DIR holds an earlier recording's output without --force; 3 when one did not answer (with --require-all, before anything
   is recorded), did not stop within --patience, or its files could not be
   collected. What could be recorded is collected and merged either way.`,
		Flags: append(append(zenohflags.Flags(), collectFlags()...),
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "every recorder on the zenoh network (their liveliness tokens); one that is not idle is said and left out"},
			&cli.DurationFlag{Name: "duration", Aliases: []string{"d"}, Usage: "stop the recording after `D` (default: on Ctrl-C or a stop query)"},
			&cli.BoolFlag{Name: "require-all", Usage: "exit before anything is recorded unless every recorder answers idle, and stop them all at once if one does not start"},
			&cli.StringFlag{Name: "file", Usage: "the `NAME` of each recorder's file, in its own directory ({time} and {n} filled in; default: each recorder's own)"},
			&cli.StringFlag{Name: "note", Usage: "a `TEXT` stored in every file"},
			&cli.StringFlag{Name: "name", Usage: "the recording's `NAME` on zenoh: a query on vrlog/fleet/NAME/stop stops it (default: DIR's name)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON lines on stdout: the recorders' status every 5 s (" + StatusSchema + "), then what was recorded, collected and merged (" + FleetSchema + ")"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no table or progress; warnings and errors only"},
		),
		Action: runFleet,
	}
}

// fleetReport is the last JSON line of `fleet --json`.
type fleetReport struct {
	Schema    string                `json:"schema"`
	Name      string                `json:"name"`
	Dir       string                `json:"dir"`
	StoppedBy string                `json:"stopped_by"`
	Recorders []fleetctl.Member     `json:"recorders"`
	Collected []filexfer.Collection `json:"collected"`
	Merged    string                `json:"merged"` // "" with --no-merge
	StartSkew *fleetctl.Skew        `json:"start_skew,omitempty"`
}

// pollTimeout bounds a status request while recording: the table moves
// on without a recorder that does not answer.
const pollTimeout = 2 * time.Second

func runFleet(c *cli.Context) error {
	names, err := recorderNames(c, "fleet")
	if err != nil {
		return err
	}
	if c.IsSet("duration") && c.Duration("duration") <= 0 {
		return cliutil.Usage("fleet: --duration %v: want a positive duration", c.Duration("duration"))
	}
	out, merged, err := collectSetup(c, "fleet")
	if err != nil {
		return err
	}
	name := c.String("name")
	if name == "" {
		name = filepath.Base(filepath.Clean(out))
		if fleetctl.CheckName(name) != nil {
			return cliutil.Usage("fleet: the directory's name %q is no zenoh key level (no /, *, $, ?, #): give --name", name)
		}
	}
	if err := fleetctl.CheckName(name); err != nil {
		return cliutil.Usage("fleet: --name: %v", err)
	}
	req := recctl.Request{File: c.String("file"), Note: c.String("note")}
	reqJSON, _ := json.Marshal(req) // two strings: never fails
	if _, err := recctl.ParseRequest(recctl.Start, reqJSON); err != nil {
		return cliutil.Usage("fleet: %v", err)
	}
	sess, err := openSession(c, "fleet")
	if err != nil {
		return err
	}
	defer sess.Close()
	cliutil.Graceful(c) // the first Ctrl-C stops the recording, then collects
	v := newView(c, name)

	fl, err := fleetctl.Find(c.Context, sess, names, c.Duration("timeout"))
	if c.Context.Err() != nil {
		return cliutil.Runtime(errors.New("fleet: interrupted before the start: nothing was recorded"))
	} else if err != nil {
		return cliutil.Runtime(fmt.Errorf("fleet: %w", err))
	}
	v.found(fl.Members())
	if earlier := earlierOutput(out, merged, fl.Members()); len(earlier) > 0 && !c.Bool("force") {
		return cliutil.Usage("fleet: %s holds an earlier recording's output already (%s): a second recording into it would replace its merged log and mix its files with the earlier ones; give another -o, or --force to record into it anyway: nothing was recorded", out, strings.Join(earlier, ", "))
	}
	if c.Bool("require-all") {
		if err := leftOut(fl.Members(), true, "--require-all: nothing was recorded"); err != nil {
			return err
		}
	}
	if !has(fl.Members(), fleetctl.Ready) {
		if err := leftOut(fl.Members(), true, "nothing was recorded"); err != nil {
			return err
		}
		return cliutil.Runtime(errors.New("fleet: no recorder answered idle: nothing was recorded"))
	}
	srv, err := fleetctl.ServeStop(sess, name)
	if err != nil {
		return cliutil.Runtime(fmt.Errorf("fleet: %w", err))
	}
	defer srv.Close()
	bg := context.Background() // from the start on, a signal stops the recording, which then finishes
	begun := time.Now()
	started, err := fl.Start(bg, req)
	if err != nil {
		return cliutil.Runtime(fmt.Errorf("fleet: %w", err))
	}
	ms := fl.Members()
	v.started(ms, time.Since(begun))
	if started == 0 && !has(ms, fleetctl.Unanswered) {
		return leftOut(ms, true, "nothing was recorded")
	}
	stoppedBy := ""
	if c.Bool("require-all") && (started < len(ms)) {
		stoppedBy = "--require-all: not every recorder started"
	} else {
		stoppedBy = record(c, fl, srv, v)
	}
	v.done()
	v.say(false, "stopping (%s)", stoppedBy)
	said := false
	fl.Stop(bg, c.Duration("patience"), func(silent []string, since time.Duration) {
		if !said { // once, then the verdict
			v.say(true, "%s: no answer to the stop yet: asking again every second for up to %v", strings.Join(silent, ", "), c.Duration("patience"))
			said = true
		}
	})
	ms = fl.Members()
	srv.Answer(fleetctl.StopReply{OK: true, Recorders: ms})
	stopped(v, ms)
	if c.Bool("require-all") && started < len(ms) {
		return leftOut(ms, true, "--require-all: the recorders that started were stopped at once (their files stay on their hosts: vrlog collect)")
	}

	rep := fleetReport{Schema: FleetSchema, Name: name, Dir: out, StoppedBy: stoppedBy, Recorders: ms}
	cerr := collectRecording(c, sess, v, &rep, merged)
	if c.Bool("json") {
		if err := v.printJSON(rep); err != nil {
			return cliutil.Runtime(err)
		}
	}
	return worst(cerr, leftOut(ms, !c.Bool("all"), "the others were recorded"))
}

// collectRecording collects into rep.Dir the files of the recording of
// each recorder that recorded, merges them into merged ("": not merged)
// and measures the start skew, all into rep. The error carries its exit
// code.
func collectRecording(c *cli.Context, sess *zenoh.Session, v *view, rep *fleetReport, merged string) error {
	var recorded []string
	recording := map[string]string{}
	for _, m := range rep.Recorders {
		if m.Recorded() {
			recorded = append(recorded, m.Name)
			recording[m.Name] = filepath.Base(m.File)
		}
	}
	if len(recorded) == 0 {
		return cliutil.Runtime(errors.New("fleet: no recorder finished a file: nothing to collect"))
	}
	opts := filexfer.CollectOptions{Out: rep.Dir, Shared: c.StringSlice("shared"), Force: c.Bool("force"), Recording: recording}
	var err error
	// Not the verb's context: a signal stopped the recording, and the
	// collection of what it recorded goes on (a second one ends it).
	if rep.Collected, err = collectMerge(c, context.Background(), "fleet", fileClient(c, sess), recorded, opts, merged); err != nil || merged == "" {
		return err
	}
	rep.Merged, rep.StartSkew = merged, startSkew(v, merged, rep.Collected)
	return nil
}

// record shows the recording until it is to stop, and says why it stops.
func record(c *cli.Context, fl *fleetctl.Fleet, srv *fleetctl.StopServer, v *view) string {
	until := "on Ctrl-C or a query on " + fleetctl.StopKey(v.name)
	var timeUp <-chan time.Time
	if d := c.Duration("duration"); d > 0 {
		timeUp = time.After(d)
		until = fmt.Sprintf("after %v, %s", d, until)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		pollStart := time.Now()
		ctx, cancel := context.WithTimeout(c.Context, pollTimeout)
		fl.Poll(ctx, pollTimeout)
		cancel()
		v.update(fl.Members(), until, pollStart)
		select {
		case <-c.Context.Done():
			return "interrupted (SIGINT or SIGTERM)"
		case <-timeUp:
			return fmt.Sprintf("--duration %v passed", c.Duration("duration"))
		case <-srv.Requested():
			if r := srv.Reason(); r != "" {
				return fmt.Sprintf("a stop query on %s: %q", fleetctl.StopKey(v.name), r)
			}
			return "a stop query on " + fleetctl.StopKey(v.name)
		case <-tick.C:
		}
	}
}

// earlierOutput names what an earlier fleet recording into out left
// there: its merged log and the folders of these recorders that hold
// files. Unlike collect, which fetches again into its DIR on purpose, a
// fleet's DIR is one recording.
func earlierOutput(out, merged string, ms []fleetctl.Member) []string {
	var found []string
	if _, err := os.Stat(merged); merged != "" && err == nil {
		found = append(found, merged)
	}
	for _, m := range ms {
		dir := filepath.Join(out, m.Name)
		if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
			found = append(found, fmt.Sprintf("%s/ with %d files", dir, len(ents)))
		}
	}
	return found
}

// stopped says what each recorder did at the stop.
func stopped(v *view, ms []fleetctl.Member) {
	for _, m := range ms {
		switch m.Role {
		case fleetctl.Stopped:
			if f := m.Finished; f != nil {
				v.say(false, "%s: stopped: finished %s (%s, %d records)", m.Name, f.Path, ui.Bytes(f.Bytes), f.Records)
			} else {
				v.say(false, "%s: stopped: %s", m.Name, m.Why)
			}
		case fleetctl.NotStopped:
			v.say(true, "%s: NOT STOPPED: %s; stop it with vrlog rec stop %s, collect it with vrlog collect %s -o DIR", m.Name, m.Why, m.Name, m.Name)
		case fleetctl.LeftOut:
			if m.Why != "" && strings.Contains(m.Why, "start went unanswered") {
				v.say(true, "%s: %s", m.Name, m.Why)
			}
		}
	}
}

// startSkew measures and says the recording's start skew; nil when it
// cannot be measured (said as a warning).
func startSkew(v *view, merged string, cols []filexfer.Collection) *fleetctl.Skew {
	files := map[string][]string{}
	for _, col := range cols {
		for _, f := range col.Files {
			files[col.Name] = append(files[col.Name], f.Path)
		}
	}
	sk, err := fleetctl.StartSkew(merged, files)
	if err != nil {
		v.say(true, "warning: the start skew could not be measured: %v", err)
		return nil
	}
	var firsts []string
	for _, f := range sk.Firsts {
		firsts = append(firsts, fmt.Sprintf("%s +%s", f.Name, msStr(f.AfterNs)))
	}
	v.say(false, "start skew %s ± %s (each recorder's first record on the simulator's clock: %s)", msStr(sk.SpreadNs), msStr(sk.UncertaintyNs), strings.Join(firsts, ", "))
	return &sk
}

// leftOut is the error of the recorders not recorded (nil if none),
// each said with its own reason: exit 3 when one did not answer or did
// not stop, else 2 when one was left out answering (busy, refused);
// named false counts only those that did not answer or stop (--all: a
// recorder busy with another recording is not an error).
func leftOut(ms []fleetctl.Member, named bool, then string) error {
	var why []string
	silent, answered := false, false
	for _, m := range ms {
		r := leftOutReason(m)
		switch {
		case r == "":
			continue
		case m.Role == fleetctl.LeftOut && !m.Silent:
			answered = answered || named
		default:
			silent = true
		}
		why = append(why, fmt.Sprintf("%s (%s)", m.Name, r))
	}
	switch {
	case silent:
		return cliutil.Runtime(fmt.Errorf("fleet: left out or not stopped: %s (said above); %s", strings.Join(why, ", "), then))
	case answered:
		return cliutil.Usage("fleet: left out: %s (said above); %s", strings.Join(why, ", "), then)
	}
	return nil
}

// leftOutReason says in a few words why m is not part of the recording
// or not stopped ("" when it is).
func leftOutReason(m fleetctl.Member) string {
	switch {
	case m.Role == fleetctl.NotStopped:
		return "did not stop"
	case m.Role == fleetctl.Unanswered:
		return "did not answer its start"
	case m.Role != fleetctl.LeftOut:
		return ""
	case m.Left != "":
		return m.Left
	}
	return "did not record"
}

// worst is the error with the higher exit code.
func worst(a, b error) error {
	if cliutil.Code(b) > cliutil.Code(a) {
		return b
	}
	if a == nil {
		return b
	}
	return a
}

func has(ms []fleetctl.Member, r fleetctl.Role) bool {
	for _, m := range ms {
		if m.Role == r {
			return true
		}
	}
	return false
}

func msStr(ns int64) string { return fmt.Sprintf("%.1f ms", float64(ns)/1e6) }
