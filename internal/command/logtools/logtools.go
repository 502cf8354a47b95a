// Package logtools holds the log maintenance verbs: info, cat, verify,
// recover, cut (filter), merge and export (MCAP, CSV). Each verb selects,
// cuts and merges through logfmt and writes its outputs through package
// output (a temporary file, verified by reading it back, then renamed), so
// a verb never reports success for a file it cannot read back.
package logtools

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
)

// Commands returns the log tools' verbs.
func Commands() []*cli.Command {
	return []*cli.Command{infoCommand(), catCommand(), verifyCommand(), recoverCommand(), cutCommand(), mergeCommand(), exportCommand()}
}

// ---- shared flags ----

func timeFormatFlag() cli.Flag {
	return &cli.StringFlag{Name: "time-format", Value: "elapsed", Usage: "print times as `FORMAT`: elapsed (seconds since the session epoch: the first state sample), unix (seconds since 1970), uts (100 ns ticks since 0001-01-01) or rfc3339 (UTC)"}
}

func channelFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "channel", Aliases: []string{"c"}, Usage: "select channels by name or topic: a key expression (* one level, ** any levels, $* inside a level) or a numeric id; repeatable"}
}

func windowFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "start", Usage: "keep records received at or after `T`: seconds (12.5) or a duration (1m30s) from the log start, or an RFC 3339 time"},
		&cli.StringFlag{Name: "end", Usage: "keep records received before `T` (same forms as --start)"},
		&cli.StringFlag{Name: "duration", Usage: "keep `D` (seconds or a duration) from --start, instead of --end"},
	}
}

func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `PATH` (required; - for stdout; a device or FIFO is written in place, a link followed)"},
		&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace PATH if it is an existing file"},
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
func openLog(path string, o logfmt.ReaderOptions) (*logfmt.Reader, error) {
	r, err := logfmt.Open(path, o)
	if err != nil {
		return nil, cliutil.Input(explain(path, err))
	}
	return r, nil
}

// noteLive says on stderr that path is a live log another process is
// writing, read as far as it was when opened.
func noteLive(c *cli.Context, path string, r *logfmt.Reader) {
	if w := r.BeingWritten(); w != "" {
		fmt.Fprintf(c.App.ErrWriter, "%s: %s: %s; reading what is there (no footer yet)\n", c.Command.Name, path, w)
	}
}

// warnDamage says on stderr, once per input and after reading it, that
// an input was torn or damaged (cliutil.WarnDamage): a verb defers it
// once its inputs are open.
func warnDamage(c *cli.Context, rs ...*logfmt.Reader) {
	for _, r := range rs {
		cliutil.WarnDamage(c, r.Damage())
	}
}

// explain adds a hint to errors a user can act on (cliutil.LogHint).
func explain(_ string, err error) error { return cliutil.LogHint(err) }

// readError classifies an error of reading path: damage is an input
// error (exit 2), anything else (an I/O error) a runtime failure.
func readError(path string, err error) error {
	var ce *logfmt.CorruptionError
	if errors.As(err, &ce) {
		return cliutil.Input(explain(path, err))
	}
	return cliutil.Runtime(err)
}

// openSelection opens path and resolves the --channel and --start, --end,
// --duration flags against it: what cat, cut and export begin with. The
// caller closes r, and says what was damaged (warnDamage) after reading.
func openSelection(c *cli.Context, path string, o logfmt.ReaderOptions, metaOnly bool) (*logfmt.Reader, *logfmt.Selection, error) {
	w, err := logfmt.ParseWindow(c.String("start"), c.String("end"), c.String("duration"))
	if err != nil {
		return nil, nil, cliutil.WindowUsage(err)
	}
	r, err := openLog(path, o)
	if err != nil {
		return nil, nil, err
	}
	noteLive(c, path, r)
	sel, err := r.Select(logfmt.Select{Channels: c.StringSlice("channel"), Window: w, MetaOnly: metaOnly})
	if err != nil {
		r.Close()
		if errors.Is(err, keyexpr.ErrNoMatch) || errors.Is(err, keyexpr.ErrSyntax) {
			return nil, nil, cliutil.Usage("%s: --channel %v", path, err)
		}
		return nil, nil, cliutil.Usage("%s: %v", path, err)
	}
	return r, sel, nil
}

// createOutput starts the -o output, refusing to overwrite an input; -o -
// is standard output, which the verb's own report then leaves (report).
func createOutput(c *cli.Context, inputs ...string) (*outfile.File, error) {
	return createOutputAt(c, c.String("output"), c.Bool("force"), inputs...)
}

// createOutputAt is createOutput of out, replaced only with force.
func createOutputAt(c *cli.Context, out string, force bool, inputs ...string) (*outfile.File, error) {
	if out == "" {
		return nil, cliutil.Usage("give the output with -o PATH (see --help)")
	}
	if outfile.IsStdout(out) && c.Bool("json") {
		return nil, cliutil.Usage("-o %s writes the output to stdout: drop --json, or give -o FILE", out)
	}
	if what := binaryOutput(c); outfile.IsStdout(out) && what != "" {
		if err := cliutil.RefuseBinaryOnTerminal(c, out, what); err != nil {
			return nil, err
		}
	}
	for _, in := range inputs {
		if same(in, out) {
			return nil, cliutil.Usage("%s: the output must differ from the input", out)
		}
	}
	f, err := outfile.Create(out, outfile.Options{Force: force, Stdout: c.App.Writer})
	return f, cliutil.Output(err)
}

// binaryOutput names what the verb writes to -o when it is binary (a
// log, an MCAP file), "" for text (a CSV table).
func binaryOutput(c *cli.Context) string {
	if c.Command.Name == "export" {
		if c.String("format") == "csv" {
			return ""
		}
		return "MCAP"
	}
	return "a vrlog log"
}

// checked says how an output was checked: read back, or (written in
// place onto a device, FIFO, socket or stdout) only written.
func checked(f *outfile.File) string {
	if f.InPlace() {
		return "streamed in place, not read back"
	}
	return "verified"
}

// newProgress reports the bytes read of rs, on stderr.
func newProgress(c *cli.Context, what string, rs ...*logfmt.Reader) *ui.Progress {
	var total int64
	for _, r := range rs {
		total += r.Size()
	}
	return startProgress(c, what, total, func() int64 {
		var n int64
		for _, r := range rs {
			n += r.BytesRead()
		}
		return n
	})
}

// startProgress reports done() of total on stderr (nothing if done is nil
// or with -q).
func startProgress(c *cli.Context, what string, total int64, done func() int64) *ui.Progress {
	if done == nil || c.Bool("quiet") {
		return nil
	}
	width, _, tty := cliutil.Terminal(c.App.ErrWriter)
	return ui.StartProgress(c.App.ErrWriter, what, total, done, ui.LoopOptions{TTY: tty, Width: width})
}

// same reports whether a and b name the same existing file.
func same(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// ---- small printing helpers ----

// status is where a verb's summary of what it wrote goes: stdout, stderr
// when its output or --json took stdout (-o -, -o /dev/stdout; collect
// and fleet merge with --json), nowhere with -q.
func status(c *cli.Context) io.Writer {
	switch {
	case c.Bool("quiet"):
		return io.Discard
	case outfile.IsStdout(c.String("output")), c.Bool("json"): // -o - or /dev/stdout took it, or JSON
		return c.App.ErrWriter
	}
	return c.App.Writer
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := marshalJSON(v)
	if err != nil {
		return cliutil.Runtime(err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
