package logtools

import (
	"fmt"
	"maps"
	"runtime"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/mcapexport"
	"github.com/vrlog/vrlog/outfile"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "export a log to MCAP (Foxglove Studio, mcap CLI, PlotJuggler), to CSV (timing and decoded states) or to Parquet (DuckDB, Spark)",
		ArgsUsage: "FILE.vrlog --format mcap|csv|parquet -o OUT",
		Description: `--format mcap writes an indexed, chunked (zstd by default) MCAP file:
   - one MCAP channel per vrlog channel, topic = the vrlog channel name, with
     the transport, transport topic and schema in the channel metadata;
   - camera frames (vrsdk.Frame/1) as protobuf foxglove.RawImage (schema:
     Foxglove's FileDescriptorSet), which Foxglove's Image panel shows;
   - states (vrsdk.State/1) and clock-sync messages as JSON messages with a
     JSON Schema, and each state's position and orientation once more as a
     protobuf foxglove.PoseInFrame in frame "world" on "<topic>:pose", which
     Foxglove's 3D panel draws (--pose=false leaves it out);
   - sequence = seq (low 32 bits), publish_time = the capture t_ns,
     log_time = the recorder's receive wall stamp;
   - the recorder's heartbeats (vrlog/recorder) as JSON vrlog.Heartbeat/1;
     channels of an unknown schema as JSON vrlog.Opaque messages carrying
     the transport header and payload in base64; records of a known schema
     that fail to decode in "<topic>:undecodable" with the error and the
     bytes. Every channel has a schema and a message encoding;
   - a channel with a declared schema (record --schemas, docs/schemas.md)
     in its own encoding: protobuf with its FileDescriptorSet, ROS 2 CDR
     with its ros2msg definition, JSON and C structs as JSON with a JSON
     Schema;
   - the log's metadata as the MCAP metadata record "vrlog".
   'elapsed' in states is relative to --epoch (default: the session epoch,
   the first state sample's t_ns). The MCAP file is read back through its
   index and its message count checked before the command reports success.

--format csv writes a timing table (from record metadata) plus, for state
channels, the decoded state fields flattened (position.x, ...; a frame's
pixels are never read): one file per channel in directory OUT
(OUT/<channel>.csv), or a single table with a leading channel column when OUT
ends in .csv. Columns: index, has_stamp, seq, t, t_ns, recv_wall,
recv_wall_ns, recv_mono_ns, dt_ns, recv_dt_ns, latency_ns, skipped, restart,
header_bytes, payload_bytes, then for states decoded, estimate_t_ns,
position.*, orientation.*, linear_velocity.*, angular_velocity.*,
sensor_count, sensors.<i>.id, sensors.<i>.t_ns, and for channels with a
declared schema their decoded fields by dotted path after msg.
(msg.header.stamp.sec, msg.seq, ...: never a second seq or t_ns column;
an array as one JSON cell). t and recv_wall in
--time-format (default elapsed, from --epoch); the *_ns columns integer nanoseconds. No integer cell is ever
empty, so pandas reads them as exact int64 (docs/log-tools.md).

` + exportParquetHelp + `Every file is written aside and renamed into place once complete; a
directory OUT that export created is removed again when it fails.

EXAMPLES:
   vrlog export run.vrlog --format mcap -o run.mcap && mcap info run.mcap
   vrlog export run.vrlog --format mcap -o states.mcap \
       --channel 'vr/*/state' --start 10 --end 20
   vrlog export run.vrlog --format csv -o timing/ --time-format elapsed
   vrlog export run.vrlog --format csv -o timing.csv
   vrlog export run.vrlog --format parquet -o records/ --channel 'vr/*/state'

` + cliutil.ExitCodesHelp,
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "format", Value: "mcap", Usage: "`FORMAT`: mcap, csv or parquet"},
			&cli.StringFlag{Name: "compression", Value: "zstd", Usage: "MCAP chunk compression: zstd, lz4 or none; zstd makes rendered frames (a simulator's) about 3.7x smaller, camera frames (noise in every byte) only 1 %: export those with none, several times faster (docs/log-tools.md)"},
			&cli.BoolFlag{Name: "pose", Value: true, Usage: "MCAP: derive a foxglove.PoseInFrame channel \"<topic>:pose\" from each state channel"},
			&cli.StringFlag{Name: "epoch", Value: "first-state", Usage: "epoch of 'elapsed' (MCAP) and of --time-format elapsed (CSV): first-state, log-start, or unix `NS`"},
			timeFormatFlag(),
			channelFlag(),
		}, append(parquetFlags(), outputFlags()...)...), windowFlags()...),
		Action: runExport,
	}
}

// exportEpoch resolves --epoch.
func exportEpoch(c *cli.Context, r *logfmt.Reader) (int64, error) {
	switch e := c.String("epoch"); e {
	case "log-start":
		start, _ := r.Start()
		return start, nil
	case "first-state", "":
		ns, _ := analyzer.SessionEpoch(r)
		return ns, nil
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
	if format != "mcap" && format != "csv" && format != "parquet" {
		return cliutil.Usage("--format %q: want mcap, csv or parquet", format)
	}
	if err := checkParquetFlags(c, format); err != nil {
		return err
	}
	comp := c.String("compression")
	if comp != "zstd" && comp != "lz4" && comp != "none" {
		return cliutil.Usage("--compression %q: want zstd, lz4 or none", comp)
	}
	tf, err := parseTimeFormat(c)
	if err != nil {
		return err
	}
	// MCAP maps the log: the pixels of raw frame blocks go from its pages
	// to the output without a copy in user space (logfmt Map, MCAP Stable).
	r, sel, err := openSelection(c, path, logfmt.ReaderOptions{Map: format == "mcap"}, format != "mcap")
	if err != nil {
		return err
	}
	defer r.Close()
	defer warnDamage(c, r)
	epoch, err := exportEpoch(c, r)
	if err != nil {
		return err
	}
	prog := newProgress(c, "export "+path, r)
	defer prog.Done()
	if format == "parquet" {
		return exportParquet(c, path, r, sel, epoch)
	}
	if format == "csv" {
		return exportCSV(c, path, r, sel, mcapexport.CSVOptions{TimeFormat: tf, EpochNs: epoch})
	}
	return exportMCAP(c, path, r, sel, epoch, prog)
}

func exportMCAP(c *cli.Context, path string, r *logfmt.Reader, sel *logfmt.Selection, epoch int64, prog *ui.Progress) error {
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
	meta["vrlog.source"] = path
	meta["vrlog.created"] = codec.FormatRFC3339(h.CreatedWallNs)
	meta["vrlog.format_version"] = fmt.Sprintf("%d.%d", h.VersionMajor, h.VersionMinor)
	meta["vrlog.elapsed_epoch_ns"] = strconv.FormatInt(epoch, 10)
	w, err := mcapexport.NewMCAP(f, mcapexport.MCAPOptions{Compression: c.String("compression"), EpochNs: epoch, Metadata: meta,
		NoPoses: !c.Bool("pose"), Stable: r.Mapped, FileRange: r.FileRange})
	if err != nil {
		return cliutil.Runtime(err)
	}
	for _, ch := range sel.Channels {
		if err := w.AddChannel(ch); err != nil {
			return cliutil.Runtime(err)
		}
	}
	// Chunks are read and checked ahead on a spare core while the MCAP
	// side encodes and writes the one before.
	it := r.Read(sel)
	if len(sel.Channels) > 0 {
		f := sel.Filter()
		f.Workers = min(runtime.GOMAXPROCS(0)-1, 4)
		it = r.Records(f)
	}
	defer it.Close()
	for it.Next() {
		if err := w.Write(it.Record()); err != nil {
			return cliutil.Runtime(err)
		}
	}
	if err := it.Err(); err != nil {
		return readError(path, err)
	}
	if err := w.Close(); err != nil {
		return cliutil.Runtime(err)
	}
	if err := f.Finish(); err != nil {
		return cliutil.Runtime(err)
	}
	prog.Done()
	st := w.Stats()
	if err := f.CommitChecked(func(tmp string) error { return mcapexport.Check(tmp, st.Messages) }); err != nil {
		return cliutil.Runtime(err)
	}
	how := "read back through its index"
	if f.InPlace() {
		how = checked(f)
	}
	fmt.Fprintf(status(c), "wrote %s: %d messages on %d topics (%s)\n", f.Path(), st.Messages, len(st.PerTopic), how)
	if st.Undecodable > 0 {
		fmt.Fprintf(status(c), "  %d records did not decode; kept in '<topic>:undecodable' channels\n", st.Undecodable)
	}
	return nil
}

func exportCSV(c *cli.Context, path string, r *logfmt.Reader, sel *logfmt.Selection, opts mcapexport.CSVOptions) error {
	out := c.String("output")
	if same(path, out) {
		return cliutil.Usage("%s: the output must differ from the input", out)
	}
	type table struct {
		f *outfile.File
		w *mcapexport.CSVWriter
	}
	// State channels get their decoded fields; their payloads (never a
	// frame's) are read alongside the metadata.
	var states []uint16
	for _, ch := range sel.Channels {
		if ch.Schema == codec.SchemaState {
			states = append(states, ch.ID)
		}
	}
	sf := sel.Filter()
	sf.Channels = states
	sensors, err := mcapexport.MaxSensors(r, sf)
	if err != nil {
		return readError(path, err)
	}
	// Channels with a declared schema get their decoded fields too.
	fields := map[uint16][]string{}
	var union []string
	inUnion := map[string]bool{}
	full := states
	for i := range sel.Channels {
		ch := &sel.Channels[i]
		fs, err := mcapexport.DeclaredFields(r, ch)
		if err != nil {
			return readError(path, err)
		}
		if fs == nil {
			continue
		}
		fields[ch.ID], full = fs, append(full, ch.ID)
		for _, f := range fs {
			if !inUnion[f] {
				inUnion[f] = true
				union = append(union, f)
			}
		}
	}
	byChan := map[uint16]*table{}
	chans := map[uint16]*logfmt.Channel{}
	for i := range sel.Channels {
		chans[sel.Channels[i].ID] = &sel.Channels[i]
	}
	var commit func() error
	var wrote string // what the message says was written
	// one table: a file, a device, a FIFO, stdout
	if strings.HasSuffix(strings.ToLower(out), ".csv") || outfile.InPlace(out) {
		f, err := createOutput(c, path)
		if err != nil {
			return err
		}
		defer f.Abort()
		o := opts
		o.ChannelColumn, o.StateColumns, o.Fields = true, len(states) > 0, union
		for _, n := range sensors {
			o.Sensors = max(o.Sensors, n)
		}
		t := &table{f: f}
		if t.w, err = mcapexport.NewCSV(f, o); err != nil {
			return cliutil.Runtime(err)
		}
		for _, ch := range sel.Channels {
			byChan[ch.ID] = t
		}
		commit = f.Commit
		wrote = fmt.Sprintf("one CSV table of %d channel(s), one header, to %s", len(sel.Channels), f.Path())
		if f.InPlace() {
			wrote += " (streamed in place)"
		}
	} else {
		d, err := outfile.CreateDir(out, outfile.Options{Force: c.Bool("force")})
		if err != nil {
			return cliutil.Output(err)
		}
		defer d.Abort()
		seen := map[string]bool{}
		for _, ch := range sel.Channels {
			name := mcapexport.CSVName(ch.Name)
			if seen[name] {
				name = strings.TrimSuffix(name, ".csv") + "_" + strconv.Itoa(int(ch.ID)) + ".csv"
			}
			seen[name] = true
			f, err := d.Create(name)
			if err != nil {
				return cliutil.Output(err)
			}
			o := opts
			o.StateColumns, o.Sensors, o.Fields = ch.Schema == codec.SchemaState, sensors[ch.ID], fields[ch.ID]
			t := &table{f: f}
			if t.w, err = mcapexport.NewCSV(f, o); err != nil {
				return cliutil.Runtime(err)
			}
			byChan[ch.ID] = t
		}
		commit = d.Commit
		wrote = fmt.Sprintf("%d CSV file(s) under %s", len(sel.Channels), out)
	}
	var rows uint64
	sel.Workers = logfmt.ReadAhead()
	it := mcapexport.NewRecords(r, sel, full)
	defer it.Close() // a write error stops early
	for it.Next() {
		rec := it.Record()
		if err := byChan[rec.Channel].w.Write(chans[rec.Channel], rec); err != nil {
			return cliutil.Runtime(err)
		}
		rows++
	}
	if err := it.Err(); err != nil {
		return readError(path, err)
	}
	for _, t := range byChan {
		if err := t.w.Flush(); err != nil {
			return cliutil.Runtime(err)
		}
	}
	if err := commit(); err != nil {
		return cliutil.Runtime(err)
	}
	fmt.Fprintf(status(c), "wrote %d rows as %s\n", rows, wrote)
	return nil
}
