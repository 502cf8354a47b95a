package logtools

import (
	"container/heap"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/logfmt"
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

The output is written to OUT.tmp-*, verified by reading it back, then
renamed to OUT; an existing OUT is kept unless --force.

EXAMPLES:
   vrlog cut run.vrlog -o first10s.vrlog --end 10
   vrlog cut run.vrlog -o states.vrlog --channel 'vr/*/state'
   vrlog filter run.vrlog -o incident.vrlog --start 2024-05-01T10:03:00Z --end 2024-05-01T10:03:30Z

` + cliutil.ExitCodesHelp,
		Flags:  append(append(outputFlags(), channelFlag()), windowFlags()...),
		Action: runCut,
	}
}

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge logs into one, records in receive-time order",
		ArgsUsage: "A.vrlog B.vrlog [...] -o OUT.vrlog",
		Description: `A k-way merge of the inputs' records by receive wall-clock time (the one
receive clock comparable across recorders and hosts; monotonic stamps are
kept as recorded). Channels are matched by name, transport, topic and schema:
the same stream recorded in two files becomes one channel; channel ids are
renumbered. Two different streams with the same name are kept apart, the
later one renamed NAME@N (N = the input's position, from 1). Recorder drops
of matched channels are added up. Metadata is the first input's, plus
vrlog.merged_from listing the inputs.

Use it to join the files of a split recording, or logs of one session taken
by two recorders (one per transport or host).

The output is written to OUT.tmp-*, verified by reading it back, then
renamed to OUT; an existing OUT is kept unless --force.

EXAMPLES:
   vrlog merge zenoh.vrlog iceoryx2.vrlog -o session.vrlog
   vrlog merge run.0.vrlog run.1.vrlog run.2.vrlog -o run.vrlog

` + cliutil.ExitCodesHelp,
		Flags:  outputFlags(),
		Action: runMerge,
	}
}

// copyWriterOptions are the options of logs written by cut and merge.
func copyWriterOptions(meta map[string]string, created int64) logfmt.WriterOptions {
	return logfmt.WriterOptions{Metadata: meta, CreatedAt: time.Unix(0, created), FlushInterval: -1, Overwrite: true, Sync: logfmt.SyncOnClose}
}

// addChannel defines c (its id is reassigned) in w.
func addChannel(w *logfmt.Writer, c logfmt.Channel) (uint16, error) {
	c.ID = 0
	return w.AddChannel(c)
}

// CopyResult is what cut and merge report.
type CopyResult struct {
	Output   string
	Records  uint64
	Channels int
}

func runCut(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usage("cut: give one input file and -o OUT (see --help)")
	}
	path := c.Args().First()
	r, ids, win, err := openSelection(c, path, false)
	if err != nil {
		return err
	}
	defer r.Close()
	if same(path, c.String("output")) {
		return cliutil.Usage("cut: the output must differ from the input")
	}
	o, err := newOutput(c.String("output"), c.Bool("force"))
	if err != nil {
		return err
	}
	h := r.Header()
	meta := map[string]string{}
	for k, v := range h.Metadata {
		meta[k] = v
	}
	meta["vrlog.cut_from"] = path
	var desc []string
	base, _ := logStart(r)
	if win.hasStart {
		desc = append(desc, "start="+codec.FormatRFC3339(win.start)+" (+"+codec.FormatSeconds(win.start-base)+" s)")
	}
	if win.hasEnd {
		desc = append(desc, "end="+codec.FormatRFC3339(win.end)+" (+"+codec.FormatSeconds(win.end-base)+" s)")
	}
	if pats := c.StringSlice("channel"); len(pats) > 0 {
		desc = append(desc, "channels="+strings.Join(pats, ","))
	}
	if len(desc) == 0 {
		desc = append(desc, "everything")
	}
	meta["vrlog.cut"] = strings.Join(desc, " ")

	n, nch, err := func() (uint64, int, error) {
		w, err := logfmt.Create(o.tmp, copyWriterOptions(meta, h.CreatedWallNs))
		if err != nil {
			return 0, 0, cliutil.Runtime(err)
		}
		remap := map[uint16]uint16{}
		want := map[uint16]bool{}
		for _, id := range ids {
			want[id] = true
		}
		stats := map[uint16]logfmt.ChannelStats{}
		for _, s := range r.Stats() {
			stats[s.Channel] = s
		}
		for _, ch := range r.Channels() {
			if !want[ch.ID] {
				continue
			}
			nid, err := addChannel(w, ch)
			if err != nil {
				w.Close()
				return 0, 0, cliutil.Runtime(fmt.Errorf("cut: %s: %w", o.path, err))
			}
			remap[ch.ID] = nid
			if !win.any() {
				w.AddDrops(nid, stats[ch.ID].Drops)
			}
		}
		var n uint64
		it := r.Records(filter(r, ids, win, false))
		for it.Next() {
			rec := it.Record()
			if !win.contains(rec.RecvWallNs) {
				continue
			}
			cp := *rec
			cp.Channel = remap[rec.Channel]
			if err := w.Write(&cp); err != nil {
				w.Close()
				return n, 0, cliutil.Runtime(fmt.Errorf("cut: write %s: %w", o.path, err))
			}
			n++
		}
		if err := it.Err(); err != nil {
			w.Close()
			return n, 0, cliutil.Input(explain(path, err))
		}
		if err := w.Close(); err != nil {
			return n, 0, cliutil.Runtime(fmt.Errorf("cut: write %s: %w", o.path, err))
		}
		return n, len(remap), nil
	}()
	if err := o.finish(n, err); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d records on %d channels (verified)\n", o.path, n, nch)
	return nil
}

// finish verifies the written copy (n records) and renames it into place,
// or removes it when writing or verifying failed.
func (o *output) finish(n uint64, err error) error {
	if err == nil {
		err = verifyCopy(o, n)
	}
	if err != nil {
		o.abort()
		return err
	}
	return o.commit()
}

// verifyCopy reads the written log back and checks its record count.
func verifyCopy(o *output, want uint64) error {
	got, err := readBack(o.tmp)
	if err != nil {
		return cliutil.Runtime(fmt.Errorf("%s: output does not read back, nothing written: %w", o.path, err))
	}
	if got != want {
		return cliutil.Runtime(fmt.Errorf("%s: output holds %d records, %d were written; nothing written", o.path, got, want))
	}
	return nil
}

// ---- merge ----

type chanKey struct {
	name, topic, schema string
	transport           logfmt.Transport
}

// mergeSource is one input's iterator in the merge heap.
type mergeSource struct {
	idx   int
	it    *logfmt.Iterator
	rec   *logfmt.Record
	remap map[uint16]uint16
}

type mergeHeap []*mergeSource

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	a, b := h[i].rec, h[j].rec
	if a.RecvWallNs != b.RecvWallNs {
		return a.RecvWallNs < b.RecvWallNs
	}
	return h[i].idx < h[j].idx // ties: input order
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeSource)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func runMerge(c *cli.Context) error {
	if c.NArg() < 2 {
		return cliutil.Usage("merge: give two or more input files and -o OUT (see --help)")
	}
	paths := c.Args().Slice()
	for _, p := range paths {
		if same(p, c.String("output")) {
			return cliutil.Usage("merge: the output must differ from the inputs (%s)", p)
		}
	}
	var readers []*logfmt.Reader
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	for _, p := range paths {
		r, err := openLog(p, false)
		if err != nil {
			return err
		}
		warnDamage(c.App.ErrWriter, r)
		readers = append(readers, r)
	}
	o, err := newOutput(c.String("output"), c.Bool("force"))
	if err != nil {
		return err
	}
	meta := map[string]string{}
	for k, v := range readers[0].Header().Metadata {
		meta[k] = v
	}
	meta["vrlog.merged_from"] = strings.Join(paths, ",")
	created := readers[0].Header().CreatedWallNs
	for _, r := range readers[1:] {
		created = min(created, r.Header().CreatedWallNs)
	}
	var warnings []string
	n, nch, err := func() (uint64, int, error) {
		w, err := logfmt.Create(o.tmp, copyWriterOptions(meta, created))
		if err != nil {
			return 0, 0, cliutil.Runtime(err)
		}
		byKey := map[chanKey]uint16{}
		names := map[string]bool{}
		var h mergeHeap
		for i, r := range readers {
			src := &mergeSource{idx: i, remap: map[uint16]uint16{}}
			stats := map[uint16]logfmt.ChannelStats{}
			for _, s := range r.Stats() {
				stats[s.Channel] = s
			}
			for _, ch := range r.Channels() {
				k := chanKey{ch.Name, ch.Topic, ch.Schema, ch.Transport}
				nid, ok := byKey[k]
				if !ok {
					def := ch
					if names[def.Name] {
						def.Name = fmt.Sprintf("%s@%d", ch.Name, i+1)
						warnings = append(warnings, fmt.Sprintf("%s: channel %q differs from the one of that name in an earlier input (transport/topic/schema); renamed %q", paths[i], ch.Name, def.Name))
					}
					if nid, err = addChannel(w, def); err != nil {
						w.Close()
						return 0, 0, cliutil.Runtime(fmt.Errorf("merge: %w", err))
					}
					names[def.Name] = true
					byKey[k] = nid
				}
				src.remap[ch.ID] = nid
				w.AddDrops(nid, stats[ch.ID].Drops)
			}
			src.it = r.Records(logfmt.Filter{})
			if src.it.Next() {
				src.rec = src.it.Record()
				h = append(h, src)
			} else if err := src.it.Err(); err != nil {
				w.Close()
				return 0, 0, cliutil.Input(explain(paths[i], err))
			}
		}
		heap.Init(&h)
		var n uint64
		for h.Len() > 0 {
			s := h[0]
			cp := *s.rec
			cp.Channel = s.remap[s.rec.Channel]
			if err := w.Write(&cp); err != nil {
				w.Close()
				return n, 0, cliutil.Runtime(fmt.Errorf("merge: write %s: %w", o.path, err))
			}
			n++
			if s.it.Next() {
				s.rec = s.it.Record()
				heap.Fix(&h, 0)
				continue
			}
			if err := s.it.Err(); err != nil {
				w.Close()
				return n, 0, cliutil.Input(explain(paths[s.idx], err))
			}
			heap.Pop(&h)
		}
		if err := w.Close(); err != nil {
			return n, 0, cliutil.Runtime(fmt.Errorf("merge: write %s: %w", o.path, err))
		}
		return n, len(byKey), nil
	}()
	if err := o.finish(n, err); err != nil {
		return err
	}
	for _, wmsg := range warnings {
		fmt.Fprintf(c.App.ErrWriter, "merge: warning: %s\n", wmsg)
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d records on %d channels from %d inputs (verified)\n", o.path, n, nch, len(paths))
	return nil
}
