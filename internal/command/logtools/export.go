package logtools

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/mcapexport"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "export a log to MCAP (Foxglove Studio, mcap CLI, PlotJuggler) or to CSV (timing and decoded states)",
		ArgsUsage: "FILE.vrlog --format mcap|csv -o OUT",
		Description: `--format mcap writes an indexed, chunked (zstd by default) MCAP file:
   - one MCAP channel per vrlog channel, topic = the vrlog channel name, with
     the transport, transport topic and schema in the channel metadata;
   - states (vrsdk.State/1) and clock-sync messages as JSON messages with a
     JSON Schema; camera frames (vrsdk.Frame/1) as foxglove.RawImage, which
     Foxglove's Image and 3D panels show;
   - sequence = seq (low 32 bits), publish_time = the capture t_ns,
     log_time = the recorder's receive wall stamp;
   - channels of an unknown schema as their payload bytes (no schema, empty
     message encoding), a transport header in a companion "<topic>:header"
     channel; records of a known schema that fail to decode in
     "<topic>:undecodable" with the error and the bytes;
   - the log's metadata as the MCAP metadata record "vrlog".
   'elapsed' in states is relative to --epoch (default: the first state
   sample's t_ns, the session epoch). The MCAP file is read back through its
   index and its message count checked before the command reports success.

--format csv writes a timing table (from record metadata) plus, for state
channels, the decoded state fields flattened (position.x, ...; a frame's
pixels are never read): one file per channel in directory OUT
(OUT/<channel>.csv), or a single table with a leading channel column when OUT
ends in .csv. Columns: index, has_stamp, seq, t, t_ns, recv_wall,
recv_wall_ns, recv_mono_ns, dt_ns, recv_dt_ns, latency_ns, skipped, restart,
header_bytes, payload_bytes, then for states decoded, estimate_t_ns,
position.*, orientation.*, linear_velocity.*, angular_velocity.*,
sensor_count, sensors.<i>.id, sensors.<i>.t_ns. t and recv_wall in
--time-format; the *_ns columns integer nanoseconds. No integer cell is ever
empty, so pandas reads them as exact int64 (docs/log-tools.md).

EXAMPLES:
   vrlog export run.vrlog --format mcap -o run.mcap && mcap info run.mcap
   vrlog export run.vrlog --format mcap -o states.mcap --channel 'vr/*/state' --start 10 --end 20
   vrlog export run.vrlog --format csv -o timing/ --time-format elapsed
   vrlog export run.vrlog --format csv -o timing.csv

` + cliutil.ExitCodesHelp,
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "format", Value: "mcap", Usage: "`FORMAT`: mcap or csv"},
			&cli.StringFlag{Name: "compression", Value: "zstd", Usage: "MCAP chunk compression: zstd, lz4 or none"},
			&cli.StringFlag{Name: "epoch", Value: "first-state", Usage: "epoch of 'elapsed' (MCAP) and of --time-format elapsed (CSV): first-state, log-start, or unix `NS`"},
			timeFormatFlag("unix"),
			channelFlag(),
		}, outputFlags()...), windowFlags()...),
		Action: runExport,
	}
}

// exportEpoch resolves --epoch.
func exportEpoch(c *cli.Context, r *logfmt.Reader) (int64, error) {
	start, _ := logStart(r)
	switch e := c.String("epoch"); e {
	case "log-start":
		return start, nil
	case "first-state", "":
		first, ok := int64(0), false
		schemas := map[uint16]string{}
		for _, ch := range r.Channels() {
			schemas[ch.ID] = ch.Schema
		}
		for _, s := range r.Stats() {
			if schemas[s.Channel] == codec.SchemaState && s.HasCapture && (!ok || s.FirstCaptureNs < first) {
				first, ok = s.FirstCaptureNs, true
			}
		}
		if !ok {
			return start, nil // no state channel: the log start
		}
		return first, nil
	default:
		v, err := strconv.ParseInt(e, 10, 64)
		if err != nil {
			return 0, cliutil.Usage("--epoch %q: want first-state, log-start or unix nanoseconds", e)
		}
		return v, nil
	}
}

func runExport(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usage("export: give one input file, --format and -o OUT (see --help)")
	}
	path := c.Args().First()
	format := c.String("format")
	if format != "mcap" && format != "csv" {
		return cliutil.Usage("--format %q: want mcap or csv", format)
	}
	tf, err := parseTimeFormat(c)
	if err != nil {
		return err
	}
	r, ids, win, err := openSelection(c, path, false)
	if err != nil {
		return err
	}
	defer r.Close()
	epoch, err := exportEpoch(c, r)
	if err != nil {
		return err
	}
	if format == "csv" {
		return exportCSV(c, path, r, ids, win, mcapexport.CSVOptions{TimeFormat: tf, EpochNs: epoch})
	}
	return exportMCAP(c, path, r, ids, win, epoch)
}

func exportMCAP(c *cli.Context, path string, r *logfmt.Reader, ids []uint16, win window, epoch int64) error {
	o, err := newOutput(c.String("output"), c.Bool("force"))
	if err != nil {
		return err
	}
	comp := c.String("compression")
	switch comp {
	case "zstd", "lz4", "none":
	default:
		o.abort()
		return cliutil.Usage("--compression %q: want zstd, lz4 or none", comp)
	}
	h := r.Header()
	meta := map[string]string{}
	for k, v := range h.Metadata {
		meta[k] = v
	}
	meta["vrlog.source"] = path
	meta["vrlog.created"] = codec.FormatRFC3339(h.CreatedWallNs)
	meta["vrlog.format_version"] = fmt.Sprintf("%d.%d", h.VersionMajor, h.VersionMinor)
	meta["vrlog.elapsed_epoch_ns"] = strconv.FormatInt(epoch, 10)
	st, err := func() (mcapexport.MCAPStats, error) {
		f, err := os.OpenFile(o.tmp, os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return mcapexport.MCAPStats{}, cliutil.Runtime(err)
		}
		defer f.Close()
		bw := bufio.NewWriterSize(f, 1<<20)
		w, err := mcapexport.NewMCAP(bw, mcapexport.MCAPOptions{Compression: comp, EpochNs: epoch, Metadata: meta})
		if err != nil {
			return mcapexport.MCAPStats{}, cliutil.Runtime(err)
		}
		want := map[uint16]bool{}
		for _, id := range ids {
			want[id] = true
		}
		for _, ch := range r.Channels() {
			if want[ch.ID] {
				if err := w.AddChannel(ch); err != nil {
					return w.Stats(), cliutil.Runtime(err)
				}
			}
		}
		it := r.Records(filter(r, ids, win, false))
		for it.Next() {
			rec := it.Record()
			if !win.contains(rec.RecvWallNs) {
				continue
			}
			if err := w.Write(rec); err != nil {
				return w.Stats(), cliutil.Runtime(fmt.Errorf("export %s: %w", o.path, err))
			}
		}
		if err := it.Err(); err != nil {
			return w.Stats(), cliutil.Input(explain(path, err))
		}
		if err := w.Close(); err != nil {
			return w.Stats(), cliutil.Runtime(err)
		}
		if err := bw.Flush(); err != nil {
			return w.Stats(), cliutil.Runtime(err)
		}
		if err := f.Sync(); err != nil {
			return w.Stats(), cliutil.Runtime(err)
		}
		return w.Stats(), f.Close()
	}()
	if err == nil {
		err = checkMCAP(o.tmp, st.Messages)
	}
	if err != nil {
		o.abort()
		return err
	}
	if err := o.commit(); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d messages on %d topics (read back through its index)\n", o.path, st.Messages, len(st.PerTopic))
	if st.Undecodable > 0 {
		fmt.Fprintf(c.App.Writer, "  %d records did not decode; kept in '<topic>:undecodable' channels\n", st.Undecodable)
	}
	return nil
}

// checkMCAP reads an exported file back with the reference reader: the
// summary's statistics and a full pass over the messages through the
// index must both count want messages.
func checkMCAP(path string, want uint64) error {
	f, err := os.Open(path)
	if err != nil {
		return cliutil.Runtime(err)
	}
	defer f.Close()
	fail := func(err error) error {
		return cliutil.Runtime(fmt.Errorf("export: %s does not read back, nothing written: %w", path, err))
	}
	rd, err := mcap.NewReader(f)
	if err != nil {
		return fail(err)
	}
	info, err := rd.Info()
	if err != nil {
		return fail(err)
	}
	if info.Statistics == nil || info.Statistics.MessageCount != want {
		return fail(fmt.Errorf("statistics disagree with the %d messages written", want))
	}
	it, err := rd.Messages(mcap.UsingIndex(true), mcap.InOrder(mcap.FileOrder))
	if err != nil {
		return fail(err)
	}
	var n uint64
	var msg mcap.Message
	for {
		_, _, _, err := it.NextInto(&msg)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(err)
		}
		n++
	}
	if n != want {
		return fail(fmt.Errorf("read %d messages, wrote %d", n, want))
	}
	return nil
}

// csvName turns a channel name into a file name.
func csvName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String() + ".csv"
}

func exportCSV(c *cli.Context, path string, r *logfmt.Reader, ids []uint16, win window, opts mcapexport.CSVOptions) error {
	out := c.String("output")
	chans := map[uint16]*logfmt.Channel{}
	for i, ch := range r.Channels() {
		chans[ch.ID] = &r.Channels()[i]
	}
	type table struct {
		o  *output
		f  *os.File
		bw *bufio.Writer
		w  *mcapexport.CSVWriter
	}
	// State channels get their decoded fields; their payloads (never a
	// frame's) are read alongside the metadata.
	var states []uint16
	for _, id := range ids {
		if chans[id].Schema == codec.SchemaState {
			states = append(states, id)
		}
	}
	keep := func(rec *logfmt.Record) bool { return win.contains(rec.RecvWallNs) }
	sf := filter(r, states, win, false)
	sensors, err := mcapexport.MaxSensors(r, sf, keep)
	if err != nil {
		return cliutil.Input(explain(path, err))
	}
	var tables []*table
	byChan := map[uint16]*table{}
	abort := func() {
		for _, t := range tables {
			t.f.Close()
			t.o.abort()
		}
	}
	open := func(p string, opts mcapexport.CSVOptions) (*table, error) {
		o, err := newOutput(p, c.Bool("force"))
		if err != nil {
			return nil, err
		}
		f, err := os.OpenFile(o.tmp, os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			o.abort()
			return nil, cliutil.Runtime(err)
		}
		t := &table{o: o, f: f, bw: bufio.NewWriterSize(f, 1<<16)}
		tables = append(tables, t)
		if t.w, err = mcapexport.NewCSV(t.bw, opts); err != nil {
			return nil, cliutil.Runtime(err)
		}
		return t, nil
	}
	if strings.HasSuffix(strings.ToLower(out), ".csv") {
		o := opts
		o.ChannelColumn, o.StateColumns = true, len(states) > 0
		for _, n := range sensors {
			o.Sensors = max(o.Sensors, n)
		}
		t, err := open(out, o)
		if err != nil {
			abort()
			return err
		}
		for _, id := range ids {
			byChan[id] = t
		}
	} else {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return cliutil.Runtime(err)
		}
		seen := map[string]bool{}
		for _, id := range ids {
			name := csvName(chans[id].Name)
			if seen[name] {
				name = strings.TrimSuffix(name, ".csv") + "_" + strconv.Itoa(int(id)) + ".csv"
			}
			seen[name] = true
			o := opts
			o.StateColumns, o.Sensors = chans[id].Schema == codec.SchemaState, sensors[id]
			t, err := open(filepath.Join(out, name), o)
			if err != nil {
				abort()
				return err
			}
			byChan[id] = t
		}
	}
	var rows uint64
	it := mcapexport.NewRecords(r, filter(r, ids, win, true), states)
	for it.Next() {
		rec := it.Record()
		if !win.contains(rec.RecvWallNs) {
			continue
		}
		if err := byChan[rec.Channel].w.Write(chans[rec.Channel], rec); err != nil {
			abort()
			return cliutil.Runtime(err)
		}
		rows++
	}
	if err := it.Err(); err != nil {
		abort()
		return cliutil.Input(explain(path, err))
	}
	for _, t := range tables {
		err := t.w.Flush()
		if err == nil {
			err = t.bw.Flush()
		}
		if err == nil {
			err = t.f.Close()
		}
		if err != nil {
			abort()
			return cliutil.Runtime(err)
		}
	}
	for _, t := range tables {
		if err := t.o.commit(); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.App.Writer, "wrote %d rows to %d CSV file(s) under %s\n", rows, len(tables), out)
	return nil
}
