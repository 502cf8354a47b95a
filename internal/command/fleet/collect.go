// Package fleet holds the verbs that drive several hosts' recorders:
// collect brings their finished logs back over zenoh and merges them on
// the simulator's clock.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/filexfer"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/command/logtools"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/internal/zenohflags"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// CollectCommand is `vrlog collect`.
func CollectCommand() *cli.Command {
	return &cli.Command{
		Name:      "collect",
		Usage:     "fetch the finished logs of recorders on other hosts over zenoh, and merge them on the simulator's clock",
		ArgsUsage: "NAME... | --all  -o DIR",
		Description: `Asks each named recorder (vrlog record --name NAME, on any host of the zenoh
network) for its finished logs and fetches them into DIR/NAME/, keeping their
file names, then merges everything fetched into one log on the simulator's
clock (what 'vrlog merge --clock sim' does), DIR/session.vrlog by default.

A recorder serves only the finished logs of its output directory: a log it
still writes is listed as pending and not fetched; a log a crash left
unfinished is recovered on its host first (NAME.recovered.vrlog, marked as
recovered; the merged log and analyze say so). Each file is verified end to
end (its size and the SHA-256 its recorder computed) and appears in DIR only
complete (written to a hidden partial file, then renamed). An interrupted
collection (Ctrl-C, a link down for longer than --patience) keeps its partial
files: the same command again resumes each where it stopped. A file already in
DIR with the same checksum is not fetched again; a file found in a --shared
directory (SHARED/NAME/FILE or SHARED/FILE, same size and checksum) is linked,
not copied. A full disk stops the collection with exit 3 and leaves no
partial file.

A NAME no recorder serving files has (none holds its liveliness token
after up to 3 s of looking) is said at once, with the recorders that do
serve files: exit 2, or 3 when none does. --patience is for a recorder found
that then goes away.

Run again into the same DIR (finished split files can be collected while the
recorders go on), it fetches only the files finished since and makes the
merged log again from every file collected: the merged log an earlier
collection made is replaced (no --force needed); each recorder's files are
one host in it (one clock model, one probe channel).

Who may list and fetch is decided by the zenoh router's access control, not
by vrlog: with the deployment of docs/deployment.md, only the controller's
identity (--zenoh-config deploy/controller.json5) gets an answer.

EXAMPLES:
   vrlog collect gpu-box robot-pc -o run1 --zenoh-config deploy/controller.json5
   vrlog collect --all -o run1 --shared /mnt/nfs/recordings --no-merge
   vrlog collect --all -o run1 --json > run1.json

` + cliutil.ExitCodesHelp,
		Flags: append(append(zenohflags.Flags(), collectFlags()...),
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "every recorder that serves files on the zenoh network (their liveliness tokens)"},
			&cli.BoolFlag{Name: "json", Usage: "print what was collected as JSON on stdout"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress"},
		),
		Action: runCollect,
	}
}

// CollectSchema names the JSON layout of `collect --json`.
const CollectSchema = "vrlog.collect/1"

// collectReport is `collect --json`'s output.
type collectReport struct {
	Schema    string                `json:"schema"`
	Dir       string                `json:"dir"`
	Recorders []filexfer.Collection `json:"recorders"`
	Merged    string                `json:"merged"` // "" with --no-merge
}

// collectFlags are the flags of collect and fleet that say where the
// logs go and how they are fetched and merged.
func collectFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "`DIR` to collect into: DIR/NAME/ per recorder (created)"},
		&cli.StringSliceFlag{Name: "shared", Usage: "`DIR` where recorders' logs are reachable already (a network file system): link them instead of copying (repeatable)"},
		&cli.StringFlag{Name: "merge", Usage: "merged log `FILE` (default DIR/session.vrlog)"},
		&cli.BoolFlag{Name: "no-merge", Usage: "only fetch; do not merge"},
		&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace different files already in DIR, and a file at the merged log's path that is not a merged log an earlier collection made"},
		&cli.DurationFlag{Name: "timeout", Value: filexfer.DefaultTimeout, Usage: "how long one request to a recorder waits for its answer (a byte range of a file is then asked again)"},
		&cli.DurationFlag{Name: "patience", Value: filexfer.DefaultPatience, Usage: "how long a recorder may stay unreachable (partition, router restart) before its collection gives up (its partial files are kept for the next run)"},
		&cli.IntFlag{Name: "window", Value: filexfer.DefaultWindow, Usage: "requests in flight per recorder (each of 1 MiB): enough for the link's round trip"},
	}
}

// collectSetup checks the flags of collectFlags and returns the output
// directory and the merged log ("" with --no-merge).
func collectSetup(c *cli.Context, verb string) (out, merged string, err error) {
	out = c.String("output")
	switch {
	case out == "":
		return "", "", cliutil.Usage("%s: give the directory to collect into with -o DIR (see --help)", verb)
	case c.Bool("no-merge") && c.IsSet("merge"):
		return "", "", cliutil.Usage("%s: --merge and --no-merge contradict each other", verb)
	case c.Int("window") < 1:
		return "", "", cliutil.Usage("%s: --window %d: want 1 or more requests in flight", verb, c.Int("window"))
	}
	if err := cliutil.Positive(c, "timeout", "patience"); err != nil {
		return "", "", err
	}
	merged = c.String("merge")
	if merged == "" && !c.Bool("no-merge") {
		merged = filepath.Join(out, "session.vrlog")
	}
	return out, merged, nil
}

// openSession opens the zenoh session of the flags; its error names the
// verb and keeps its exit code.
func openSession(c *cli.Context, verb string) (*zenoh.Session, error) {
	sess, err := zenohflags.Open(c)
	if err != nil {
		return nil, &cliutil.Error{Code: cliutil.Code(err), Err: fmt.Errorf("%s: %w", verb, err)}
	}
	return sess, nil
}

// fileClient is the file client of the flags.
func fileClient(c *cli.Context, sess *zenoh.Session) *filexfer.Client {
	return &filexfer.Client{Sess: sess, Window: c.Int("window"), Timeout: c.Duration("timeout"), Patience: c.Duration("patience")}
}

// recorderNames are the recorders the arguments name, checked; nil with
// --all.
func recorderNames(c *cli.Context, verb string) ([]string, error) {
	names := c.Args().Slice()
	switch {
	case c.Bool("all") && len(names) > 0:
		return nil, cliutil.Usage("%s: give recorder names or --all, not both", verb)
	case !c.Bool("all") && len(names) == 0:
		return nil, cliutil.Usage("%s: name the recorders (their --name) or give --all", verb)
	}
	if c.Bool("all") {
		return nil, nil
	}
	for _, n := range names {
		if err := filexfer.CheckName(n); err != nil {
			return nil, cliutil.Usage("%s: %v", verb, err)
		}
	}
	return names, nil
}

func runCollect(c *cli.Context) error {
	names, err := recorderNames(c, "collect")
	if err != nil {
		return err
	}
	out, merged, err := collectSetup(c, "collect")
	if err != nil {
		return err
	}
	sess, err := openSession(c, "collect")
	if err != nil {
		return err
	}
	defer sess.Close()
	cl := fileClient(c, sess)
	if c.Bool("all") {
		if names, err = cl.Discover(c.Context, 2*time.Second); err != nil {
			return cliutil.Runtime(fmt.Errorf("collect: %w", err))
		}
		if len(names) == 0 {
			return cliutil.Runtime(errors.New("collect --all: no recorder serves files on this zenoh network (none declared vrlog/record/*/files within 2 s: are they running with --name, and reachable?)"))
		}
	} else if err := checkServing(c.Context, cl, names); err != nil {
		return err
	}
	opts := filexfer.CollectOptions{Out: out, Shared: c.StringSlice("shared"), Force: c.Bool("force")}
	cols, err := collectMerge(c, c.Context, "collect", cl, names, opts, merged)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		b, _ := json.MarshalIndent(collectReport{Schema: CollectSchema, Dir: out, Recorders: cols, Merged: merged}, "", "  ")
		if _, err := fmt.Fprintf(c.App.Writer, "%s\n", b); err != nil {
			return cliutil.Runtime(err)
		}
	}
	return nil
}

// checkServing says which of names no recorder serving files has (exit
// 2 while others serve; 3 with none at all) after up to 3 s of looking
// for their tokens, rather than waiting --patience for each: --patience
// is for a recorder found that then goes away. Names all found end the
// look at once.
func checkServing(ctx context.Context, cl *filexfer.Client, names []string) error {
	missing, serving, err := cl.Await(ctx, names, 3*time.Second)
	if err != nil {
		return cliutil.Runtime(fmt.Errorf("collect: %w", err))
	}
	var absent []string
	for _, n := range missing {
		absent = append(absent, fmt.Sprintf("%q", n))
	}
	switch {
	case len(absent) == 0:
		return nil
	case len(serving) == 0:
		return cliutil.Runtime(fmt.Errorf("collect: no recorder named %s: no recorder serves files on this zenoh network (none declared vrlog/record/*/files within 3 s: are they running with --name, and reachable?)", strings.Join(absent, ", ")))
	}
	return cliutil.Usage("collect: no recorder named %s (the recorders serving files: %s)", strings.Join(absent, ", "), strings.Join(serving, ", "))
}

// collectMerge fetches the files of the recorders names (with progress,
// then a report of what each holds) and merges them on the simulator's
// clock into merged ("": not merged). The error carries its exit code.
func collectMerge(c *cli.Context, ctx context.Context, verb string, cl *filexfer.Client, names []string, opts filexfer.CollectOptions, merged string) ([]filexfer.Collection, error) {
	progs := make([]*filexfer.Progress, len(names))
	for i, n := range names {
		progs[i] = &filexfer.Progress{Name: n}
	}
	stop := showProgress(c, verb, progs)
	cols, err := cl.Collect(ctx, names, opts, progs)
	stop()
	report(c, verb, cols)
	if err != nil {
		return cols, collectError(ctx, verb, err)
	}
	if merged == "" {
		return cols, nil
	}
	var paths, hosts []string
	for _, col := range cols {
		for _, f := range col.Files {
			paths, hosts = append(paths, f.Path), append(hosts, col.Name)
		}
	}
	if len(paths) == 0 {
		return cols, cliutil.Runtime(fmt.Errorf("%s: the recorders hold no finished log: nothing to merge", verb))
	}
	return cols, logtools.MergeOnSimClock(c, paths, hosts, merged, c.Bool("force") || remade(merged))
}

// remade says whether merged is what an earlier collection merged: a log
// on the simulator's clock, which this one makes again from everything
// it collected, the new files too. Anything else there is kept unless
// --force.
func remade(merged string) bool {
	r, err := logfmt.Open(merged, logfmt.ReaderOptions{})
	if err != nil {
		return false
	}
	defer r.Close()
	sc, err := hostclock.ParseSimClock(r.Header().Metadata)
	return err == nil && sc != nil
}

// collectError says what a failed collection leaves, with its exit code.
func collectError(ctx context.Context, verb string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EFBIG), errors.Is(err, syscall.EDQUOT):
		return cliutil.Runtime(fmt.Errorf("%s: disk full: %w; nothing half-written is left (the files listed above as collected are complete)", verb, err))
	case errors.Is(err, filexfer.ErrExists):
		return cliutil.Output(fmt.Errorf("%s: %w; --force replaces it", verb, err))
	case ctx.Err() != nil:
		return cliutil.Runtime(fmt.Errorf("%s: interrupted: %w; the partial files are kept: vrlog collect resumes them", verb, err))
	}
	return cliutil.Runtime(fmt.Errorf("%s: %w", verb, err))
}

// report says on stderr what each recorder's collection holds.
func report(c *cli.Context, verb string, cols []filexfer.Collection) {
	if c.Bool("quiet") {
		return
	}
	w := c.App.ErrWriter
	for _, col := range cols {
		var total int64
		for _, f := range col.Files {
			total += f.Size
		}
		fmt.Fprintf(w, "%s: %s (host %s): %d files, %s into %s\n", verb, col.Name, orDash(col.Host), len(col.Files), ui.Bytes(total), col.Dir)
		for _, f := range col.Files {
			note := f.How
			if f.Recovered {
				note += ", RECOVERED from " + f.RecoveredFrom + " (its recorder never finished it)"
			}
			fmt.Fprintf(w, "  %s  %s  (%s)\n", f.Name, ui.Bytes(f.Size), note)
		}
		for _, p := range col.Pending {
			fmt.Fprintf(w, "  %s  not collected: %s\n", p.Name, p.Why)
		}
		if col.Err != "" {
			fmt.Fprintf(w, "  FAILED: %s\n", col.Err)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// showProgress draws one line per recorder: on a terminal redrawn in
// place every 200 ms, off one a line each 10 s and whenever a recorder's
// state changes. The returned func stops it.
func showProgress(c *cli.Context, verb string, ps []*filexfer.Progress) (stop func()) {
	if c.Bool("quiet") {
		return func() {}
	}
	w := c.App.ErrWriter
	tty := cliutil.IsTerminal(w)
	width := max(cliutil.TextWidth(w), 40)
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		every := 10 * time.Second
		if tty {
			every = 200 * time.Millisecond
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		poll := time.NewTicker(200 * time.Millisecond)
		defer poll.Stop()
		last := make([]string, len(ps))
		drawn := 0
		for {
			select {
			case <-done:
				if tty && drawn > 0 {
					fmt.Fprintf(w, "\x1b[%dA\x1b[J", drawn)
				}
				return
			case <-tick.C:
				if tty {
					drawn = redraw(w, ps, start, width, drawn)
					continue
				}
				for _, p := range ps {
					fmt.Fprintln(w, verb+": "+ui.Plain(p.Name, p.Done(), p.Total(), time.Since(start))+"; "+p.State())
				}
			case <-poll.C:
				if tty {
					continue
				}
				for i, p := range ps { // off a terminal, say each change of state once
					if s := stateWord(p.State()); s != last[i] {
						last[i] = s
						fmt.Fprintf(w, "%s: %s: %s\n", verb, p.Name, p.State())
					}
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// stateWord is the kind of a state ("fetching a.vrlog" and "fetching
// b.vrlog" are one kind apart from "waiting: ...").
func stateWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return strings.TrimSuffix(w, ":")
}

// redraw replaces the n lines drawn before by one per recorder, and
// returns how many it drew.
func redraw(w io.Writer, ps []*filexfer.Progress, start time.Time, width, n int) int {
	var sb strings.Builder
	if n > 0 {
		fmt.Fprintf(&sb, "\x1b[%dA", n)
	}
	sorted := append([]*filexfer.Progress{}, ps...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, p := range sorted {
		f, of := p.Files()
		line := ui.Line(fmt.Sprintf("%s %d/%d", p.Name, f, of), p.Done(), p.Total(), time.Since(start), width/2) + "  " + p.State()
		if r := []rune(line); len(r) > width-1 {
			line = string(r[:width-1])
		}
		sb.WriteString("\x1b[2K" + line + "\n")
	}
	io.WriteString(w, sb.String())
	return len(sorted)
}
