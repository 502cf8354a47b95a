// Package logtools holds the log maintenance verbs: info, cat, verify,
// recover, cut (filter), merge and export (MCAP, CSV). Each verb reads
// logs through logfmt and writes new logs atomically (a temporary file,
// verified by reading it back, then renamed), so a verb never reports
// success for a file it cannot read back.
package logtools

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/logfmt"
)

// Commands returns the log tools' verbs.
func Commands() []*cli.Command {
	cmds := []*cli.Command{infoCommand(), catCommand(), verifyCommand(), recoverCommand(), cutCommand(), mergeCommand(), exportCommand()}
	for _, c := range cmds {
		interspersed(c)
	}
	return cmds
}

// interspersed lets flags follow the positional arguments ("recover SRC -o
// DST"), which urfave/cli v2 does not: it stops parsing at the first
// argument. The command skips cli's parsing; its action moves every flag
// (with its value) in front of the arguments, up to a "--", parses them
// with the command's own flag definitions and runs the real action with a
// context over that flag set.
func interspersed(cmd *cli.Command) {
	action := cmd.Action
	cmd.SkipFlagParsing = true
	cmd.Action = func(c *cli.Context) error {
		set := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
		set.SetOutput(io.Discard)
		for _, f := range cmd.Flags {
			if err := f.Apply(set); err != nil {
				return cliutil.Runtime(err)
			}
		}
		for _, n := range []string{"help", "h"} { // cli adds its help flag to cmd.Flags
			if set.Lookup(n) == nil {
				set.Bool(n, false, "")
			}
		}
		if err := set.Parse(reorder(set, c.Args().Slice())); err != nil {
			return cliutil.Usage("%s: %v (see --help)", cmd.Name, err)
		}
		for _, n := range []string{"help", "h"} {
			if f := set.Lookup(n); f != nil && f.Value.String() == "true" {
				cli.HelpPrinter(c.App.Writer, cli.CommandHelpTemplate, cmd)
				return nil
			}
		}
		// Aliases of non-slice flags have their own storage: copy the value
		// given under one name to the others (what cli's normalizeFlags does).
		visited := map[string]bool{}
		set.Visit(func(f *flag.Flag) { visited[f.Name] = true })
		for _, f := range cmd.Flags {
			names := f.Names()
			for _, v := range names {
				if !visited[v] {
					continue
				}
				src := set.Lookup(v)
				for _, n := range names {
					if dst := set.Lookup(n); n != v && dst != nil && dst.Value != src.Value {
						_ = set.Set(n, src.Value.String())
					}
				}
				break
			}
		}
		nc := cli.NewContext(c.App, set, c)
		nc.Command = cmd
		return action(nc)
	}
}

// reorder moves flags (and the values of non-boolean flags) in front of
// the positional arguments; "--" ends the flags.
func reorder(set *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := set.Lookup(name)
		if f == nil {
			continue // Parse reports it
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(append(flags, "--"), pos...)
}

// ---- shared flags ----

func timeFormatFlag(def string) cli.Flag {
	return &cli.StringFlag{Name: "time-format", Value: def, Usage: "print times as `FORMAT`: unix (seconds, 9 decimals), elapsed (seconds since the log start), uts (100 ns ticks since 0001-01-01) or rfc3339 (UTC)"}
}

func channelFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "channel", Aliases: []string{"c"}, Usage: "select channels by name, glob (* matches any text, '/' included) or numeric id; repeatable"}
}

func windowFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "start", Usage: "keep records received at or after `T`: seconds from the log start (e.g. 12.5) or an RFC 3339 time (2024-05-01T10:00:00Z)"},
		&cli.StringFlag{Name: "end", Usage: "keep records received before `T` (same forms as --start)"},
	}
}

func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `PATH` (required)"},
		&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace PATH if it exists"},
	}
}

func parseTimeFormat(c *cli.Context) (codec.TimeFormat, error) {
	tf, err := codec.ParseTimeFormat(c.String("time-format"))
	if err != nil {
		return 0, cliutil.Usage("--time-format: %v", err)
	}
	return tf, nil
}

// ---- opening logs ----

// openLog opens a log; any failure is an input error (exit 2) naming the
// file (and, for damage, the byte offset and what was expected).
func openLog(path string, tolerant bool) (*logfmt.Reader, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, cliutil.Input(fmt.Errorf("%s: is a directory, not a .vrlog file", path))
	}
	r, err := logfmt.Open(path, logfmt.ReaderOptions{Tolerant: tolerant})
	if err != nil {
		return nil, cliutil.Input(explain(path, err))
	}
	return r, nil
}

// warnDamage reports damage the reader read around without losing a
// record (a damaged footer index, header block or prelude).
func warnDamage(w io.Writer, r *logfmt.Reader) {
	for _, d := range r.Warnings() {
		fmt.Fprintf(w, "warning: %v (read around it, no record lost; `vrlog recover` writes a repaired copy)\n", d)
	}
}

// explain adds a hint to errors a user can act on.
func explain(path string, err error) error {
	switch {
	case errors.Is(err, logfmt.ErrBadMagic):
		return fmt.Errorf("%w (not a vrlog log?)", err)
	case errors.Is(err, logfmt.ErrUnsupportedVersion):
		return fmt.Errorf("%w (written by a newer vrlog; upgrade to read it)", err)
	case errors.Is(err, logfmt.ErrBadCRC), errors.Is(err, logfmt.ErrMalformed), errors.Is(err, logfmt.ErrTornTail), errors.Is(err, logfmt.ErrTooLarge):
		return fmt.Errorf("%w (try `vrlog verify %s`, then `vrlog recover %s -o FIXED.vrlog`)", err, path, path)
	}
	return err
}

// ---- channel selection ----

// globRE compiles a channel glob: * matches any text (also '/'), ?
// one character; everything else is literal.
func globRE(pat string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range pat {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// selectChannels returns the ids of chans matching any pattern (all when
// there is none). A pattern that matches nothing is a usage error.
// openSelection opens path and reads the --channel and --start/--end flags
// against it: what cat, cut and export all begin with. The caller closes r.
func openSelection(c *cli.Context, path string, tolerant bool) (r *logfmt.Reader, ids []uint16, w window, err error) {
	if r, err = openLog(path, tolerant); err != nil {
		return nil, nil, w, err
	}
	warnDamage(c.App.ErrWriter, r)
	if ids, err = selectChannels(path, r.Channels(), c.StringSlice("channel")); err == nil {
		w, err = parseWindow(c, r)
	}
	if err != nil {
		r.Close()
		return nil, nil, w, err
	}
	return r, ids, w, nil
}

func selectChannels(path string, chans []logfmt.Channel, pats []string) ([]uint16, error) {
	if len(pats) == 0 {
		ids := make([]uint16, len(chans))
		for i, c := range chans {
			ids[i] = c.ID
		}
		return ids, nil
	}
	sel := map[uint16]bool{}
	for _, p := range pats {
		re := globRE(p)
		id, idErr := strconv.ParseUint(p, 10, 16)
		hit := false
		for _, c := range chans {
			if re.MatchString(c.Name) || (idErr == nil && uint64(c.ID) == id) {
				sel[c.ID], hit = true, true
			}
		}
		if !hit {
			names := make([]string, len(chans))
			for i, c := range chans {
				names[i] = c.Name
			}
			return nil, cliutil.Usage("%s: --channel %q matches no channel (have: %s)", path, p, strings.Join(names, ", "))
		}
	}
	ids := make([]uint16, 0, len(sel))
	for id := range sel {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// ---- time windows ----

// window is a receive-wall-clock window [start, end); has* say whether a
// bound was given.
type window struct {
	start, end       int64
	hasStart, hasEnd bool
}

func (w window) contains(wall int64) bool {
	return (!w.hasStart || wall >= w.start) && (!w.hasEnd || wall < w.end)
}

func (w window) any() bool { return w.hasStart || w.hasEnd }

// logStart is the earliest receive wall stamp of the log, from the index.
func logStart(r *logfmt.Reader) (int64, bool) {
	cs := r.Chunks()
	if len(cs) == 0 {
		return 0, false
	}
	m := cs[0].MinWallNs
	for _, c := range cs[1:] {
		m = min(m, c.MinWallNs)
	}
	return m, true
}

func logEnd(r *logfmt.Reader) int64 {
	var m int64
	for i, c := range r.Chunks() {
		if i == 0 || c.MaxWallNs > m {
			m = c.MaxWallNs
		}
	}
	return m
}

// parseTime reads a --start/--end value: an RFC 3339 time, or seconds
// from base.
func parseTime(flag, s string, base int64) (int64, error) {
	if strings.ContainsAny(s, "T:") {
		t, err := codec.ParseRFC3339(s)
		if err != nil {
			return 0, cliutil.Usage("--%s %q: not an RFC 3339 time: %v", flag, s, err)
		}
		return t, nil
	}
	d, err := codec.ParseSeconds(s)
	if err != nil {
		return 0, cliutil.Usage("--%s %q: want seconds from the log start (12.5) or an RFC 3339 time: %v", flag, s, err)
	}
	return base + d, nil
}

func parseWindow(c *cli.Context, r *logfmt.Reader) (window, error) {
	var w window
	base, _ := logStart(r)
	var err error
	if s := c.String("start"); s != "" {
		if w.start, err = parseTime("start", s, base); err != nil {
			return w, err
		}
		w.hasStart = true
	}
	if s := c.String("end"); s != "" {
		if w.end, err = parseTime("end", s, base); err != nil {
			return w, err
		}
		w.hasEnd = true
	}
	if w.hasStart && w.hasEnd && w.end <= w.start {
		return w, cliutil.Usage("--end must be after --start")
	}
	return w, nil
}

// filter is the logfmt filter for channels ids and window w. logfmt
// filters on the monotonic receive clock; w is on the wall clock, so the
// monotonic bounds are widened by the spread of wall-mono offsets seen in
// the index (plus a second) and the caller checks each record's wall
// stamp with w.contains.
func filter(r *logfmt.Reader, ids []uint16, w window, metaOnly bool) logfmt.Filter {
	f := logfmt.Filter{Channels: ids, MetaOnly: metaOnly}
	if !w.any() || len(r.Chunks()) == 0 {
		return f
	}
	offMin, offMax := int64(0), int64(0)
	for i, c := range r.Chunks() {
		a, b := c.MinWallNs-c.MinMonoNs, c.MaxWallNs-c.MaxMonoNs
		if i == 0 {
			offMin, offMax = min(a, b), max(a, b)
		}
		offMin, offMax = min(offMin, a, b), max(offMax, a, b)
	}
	const slack = int64(1e9)
	if w.hasStart {
		f.Start = satSub(w.start, offMax+slack)
		if f.Start == 0 {
			f.Start = 1 // 0 means unbounded
		}
	}
	if w.hasEnd {
		f.End = satSub(w.end, offMin-slack)
		if f.End == 0 {
			f.End = 1
		}
	}
	return f
}

// satSub is a-b saturated to the int64 range.
func satSub(a, b int64) int64 {
	d := a - b
	if (b > 0 && d > a) || (b < 0 && d < a) {
		if b > 0 {
			return -1 << 63
		}
		return 1<<63 - 1
	}
	return d
}

// ---- atomic output ----

// output is a file written as PATH.tmp-*, then renamed over PATH once the
// caller has verified it.
type output struct {
	path, tmp string
}

// newOutput checks that path may be written (refusing to replace an
// existing file without force) and reserves a temporary name next to it.
func newOutput(path string, force bool) (*output, error) {
	if path == "" || path == "-" {
		return nil, cliutil.Usage("--output: give a file path")
	}
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return nil, cliutil.Usage("%s is a directory", path)
		}
		if !force {
			return nil, cliutil.Usage("%s exists: use --force to replace it", path)
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, cliutil.Runtime(err)
	}
	tmp := f.Name()
	f.Close()
	return &output{path: path, tmp: tmp}, nil
}

// commit renames the verified temporary file over path and syncs the
// directory.
func (o *output) commit() error {
	if err := os.Rename(o.tmp, o.path); err != nil {
		o.abort()
		return cliutil.Runtime(err)
	}
	if d, err := os.Open(filepath.Dir(o.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (o *output) abort() { os.Remove(o.tmp) }

// readBack opens a written log, checks it end to end (logfmt.Verify) and
// reads every record (payloads included); it returns the record count.
func readBack(path string) (uint64, error) {
	rep, err := logfmt.Verify(path, logfmt.ReaderOptions{})
	if err != nil {
		return 0, err
	}
	if !rep.OK() {
		msg := fmt.Sprintf("%s: verification failed: footer %v, %d problems", path, rep.HasFooter, len(rep.Problems))
		if len(rep.Problems) > 0 {
			msg += ": " + rep.Problems[0].Error()
		}
		if rep.TornTail != nil {
			msg += ": torn tail: " + rep.TornTail.Error()
		}
		return 0, errors.New(msg)
	}
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if !r.Indexed() {
		return 0, fmt.Errorf("%s: no index after writing", path)
	}
	var n uint64
	it := r.Records(logfmt.Filter{})
	for it.Next() {
		n++
	}
	if err := it.Err(); err != nil {
		return n, err
	}
	if n != rep.Records {
		return n, fmt.Errorf("%s: read %d records, verify counted %d", path, n, rep.Records)
	}
	return n, nil
}

// ---- small printing helpers ----

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := marshalJSON(v)
	if err != nil {
		return cliutil.Runtime(err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
