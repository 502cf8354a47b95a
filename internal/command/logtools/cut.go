package logtools

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
)

func cutCommand() *cli.Command {
	return &cli.Command{
		Name:      "cut",
		Aliases:   []string{"filter"},
		Usage:     "copy a time window and a channel selection of a log into a new log",
		ArgsUsage: "FILE.vrlog -o OUT.vrlog",
		Description: `Writes the records of FILE received in [--start, --end) on the selected
channels into a new log, with the same channel definitions (name, transport,
topic, schema, compression, transport meta) and the source's metadata plus a
note of the cut (vrlog.cut_from, vrlog.cut). Records are copied byte for
byte, with all their stamps. Recorder drop counts are kept only when no time
window is given (they are per whole recording).

The output is written to a temporary file next to OUT, verified by reading
it back, then renamed to OUT; an existing OUT is kept unless --force.

EXAMPLES:
   vrlog cut run.vrlog -o first10s.vrlog --end 10
   vrlog cut run.vrlog -o states.vrlog --channel 'vr/*/state'
   vrlog filter run.vrlog -o incident.vrlog --start 2024-05-01T10:03:00Z \
       --end 2024-05-01T10:03:30Z

` + cliutil.ExitCodesHelp,
		Flags:  append(append(outputFlags(), channelFlag()), windowFlags()...),
		Action: runCut,
	}
}

// copyWriterOptions are the options of logs written by cut and merge.
func copyWriterOptions(meta map[string]string, created int64) logfmt.WriterOptions {
	return logfmt.WriterOptions{Metadata: meta, CreatedAt: time.Unix(0, created), FlushInterval: -1, Sync: logfmt.SyncOnClose}
}

func runCut(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usage("cut: give one input file and -o OUT (see --help)")
	}
	path := c.Args().First()
	r, sel, err := openSelection(c, path, logfmt.ReaderOptions{}, false)
	if err != nil {
		return err
	}
	defer r.Close()
	defer warnDamage(c, r)
	f, err := createOutput(c, path)
	if err != nil {
		return err
	}
	defer f.Abort()
	h := r.Header()
	meta := maps.Clone(h.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	meta["vrlog.cut_from"] = path
	keepEpoch(meta, []string{path}, r)
	meta["vrlog.cut"] = cutNote(r, sel, c.StringSlice("channel"))
	sel.Workers = logfmt.ReadAhead()
	st, err := writeCopy(f, copyWriterOptions(meta, h.CreatedWallNs), newProgress(c, "cut", r), func(w *logfmt.Writer) (logfmt.CopyStats, error) {
		return logfmt.Copy(w, r, sel)
	})
	if err != nil {
		return readError(path, err)
	}
	fmt.Fprintf(status(c), "wrote %s: %d records on %d channels (%s)\n", f.Path(), st.Records, st.Channels, checked(f))
	return nil
}

// keepEpoch stores the session epoch of the source logs rs (paths, by
// log) in the metadata meta of a log made of them (logfmt.MetaSessionEpoch
// and its source), so that elapsed keeps its meaning: the epoch of the
// session they are parts of, its first state sample
// (analyzer.SessionEpochOf: a log without the state stream never gives
// it while another has the states).
func keepEpoch(meta map[string]string, paths []string, rs ...*logfmt.Reader) {
	es := make([]analyzer.Epoch, len(rs))
	for i, r := range rs {
		es[i] = analyzer.LogEpoch(r)
	}
	analyzer.StoreEpoch(meta, analyzer.SessionEpochOf(paths, es))
}

// cutNote describes the cut for the output's metadata (vrlog.cut).
func cutNote(r *logfmt.Reader, sel *logfmt.Selection, pats []string) string {
	base, _ := r.Start()
	var desc []string
	if sel.Wall.HasStart {
		desc = append(desc, "start="+codec.FormatRFC3339(sel.Wall.Start)+" (+"+codec.FormatSeconds(sel.Wall.Start-base)+" s from the log start)")
	}
	if sel.Wall.HasEnd {
		desc = append(desc, "end="+codec.FormatRFC3339(sel.Wall.End)+" (+"+codec.FormatSeconds(sel.Wall.End-base)+" s from the log start)")
	}
	if len(pats) > 0 {
		desc = append(desc, "channels="+strings.Join(pats, ","))
	}
	if len(desc) == 0 {
		return "everything"
	}
	return strings.Join(desc, " ")
}

// writeCopy writes a log into f with copy, then reads it back (a full
// verify and every record) and commits it: cut and merge report success
// only for a log that reads back with exactly the records copied (an
// output in place, a device, FIFO or stdout, is streamed: a linear
// log whose footer comes last, not read back).
func writeCopy(f *outfile.File, opts logfmt.WriterOptions, prog *ui.Progress, copy func(*logfmt.Writer) (logfmt.CopyStats, error)) (logfmt.CopyStats, error) {
	defer prog.Done()
	w, err := logfmt.NewWriter(f, opts)
	if err != nil {
		return logfmt.CopyStats{}, cliutil.Runtime(err)
	}
	st, err := copy(w)
	if cerr := w.Close(); err == nil && cerr != nil {
		err = cliutil.Runtime(cerr)
	}
	if err == nil {
		err = f.Finish()
	}
	if err != nil {
		var ce *logfmt.CorruptionError
		if errors.As(err, &ce) {
			return st, err
		}
		return st, cliutil.Runtime(err)
	}
	prog.Done()
	return st, cliutil.Runtime(f.CommitChecked(logfmt.ReadBackCheck(st.Records)))
}
