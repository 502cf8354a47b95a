package logtools

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/schema"
	"github.com/vrlog/vrlog/textfit"
)

func infoCommand() *cli.Command {
	return &cli.Command{
		Name:      "info",
		Usage:     "summarize logs from their index: duration, time range, metadata, per-channel counts, rates, sizes, drops",
		ArgsUsage: "FILE.vrlog [FILE.vrlog ...]",
		Description: `Prints, for each log, what its footer index says, without reading a record:
the format version, file size, creation time and metadata (note, host, tool
version), the receive time range and duration, and per channel the transport,
name, transport topic (zenoh key expression or iceoryx2 service), schema,
record count, mean rate, bytes (raw header+payload and stored), compression
ratio and recorder-side drops (samples the recorder lost, apart from the
publisher-side skips 'analyze' finds in seq). A channel the recorder could not
open (an iceoryx2 service whose subscriber slots were taken, ...) is listed
with its error; one recorded with a limit (a small subscriber buffer) with a
warning.

A log without a footer was not closed (the recorder crashed, was killed, or
is still writing): info then scans the block headers instead, says so, and
suggests 'vrlog recover'. The answer from the index takes a few milliseconds
whatever the log's size.

Rate is (count - 1) / (last - first receive time) of the channel.

EXAMPLES:
   vrlog info run.vrlog
   vrlog info --time-format rfc3339 run.vrlog
   vrlog info --json run-*.vrlog | jq '.channels[] | {name, rate_hz, drops}'

` + cliutil.ExitCodesHelp,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per file (one per line)"},
			timeFormatFlag(),
		},
		Action: runInfo,
	}
}

// InfoChannel is one channel of `info --json`.
type InfoChannel struct {
	ID               uint16            `json:"id"`
	Name             string            `json:"name"`
	Transport        string            `json:"transport"`
	Topic            string            `json:"topic"`
	Schema           string            `json:"schema"`
	Decodable        bool              `json:"decodable"`
	Compression      string            `json:"compression"`
	Count            uint64            `json:"count"`
	RateHz           float64           `json:"rate_hz"`
	RawBytes         uint64            `json:"raw_bytes"`
	StoredBytes      uint64            `json:"stored_bytes"`
	CompressionRatio float64           `json:"compression_ratio"`
	Drops            uint64            `json:"drops"`
	FirstRecvWallNs  int64             `json:"first_recv_wall_ns"`
	LastRecvWallNs   int64             `json:"last_recv_wall_ns"`
	FirstCaptureNs   *int64            `json:"first_capture_ns,omitempty"`
	LastCaptureNs    *int64            `json:"last_capture_ns,omitempty"`
	Meta             map[string]string `json:"meta,omitempty"`
	// Error: the recorder could not open the channel (it has no records);
	// Warning: what limited its recording (logfmt.MetaError, MetaWarning).
	Error   string `json:"error,omitempty"`
	Warning string `json:"warning,omitempty"`
}

// Info is `info --json`'s object for one file.
type Info struct {
	File      string `json:"file"`
	SizeBytes int64  `json:"size_bytes"`
	Version   string `json:"version"`
	Indexed   bool   `json:"indexed"` // the footer was present and read
	Finished  bool   `json:"finished"`
	// BeingWritten says a writer holds the file live (a recorder writing
	// it): "being written by PID 123 (record)".
	BeingWritten string            `json:"being_written,omitempty"`
	Warning      string            `json:"warning,omitempty"`
	CreatedNs    int64             `json:"created_ns"`
	Metadata     map[string]string `json:"metadata"`
	StartNs      int64             `json:"start_ns"`
	EndNs        int64             `json:"end_ns"`
	Start        string            `json:"start"`
	End          string            `json:"end"`
	EpochNs      int64             `json:"epoch_ns"`     // the session epoch 'elapsed' counts from
	EpochSource  string            `json:"epoch_source"` // what it is (the first state sample, ...)
	DurationS    float64           `json:"duration_s"`
	Chunks       int               `json:"chunks"`
	Records      uint64            `json:"records"`
	RawBytes     uint64            `json:"raw_bytes"`
	StoredBytes  uint64            `json:"stored_bytes"`
	Drops        uint64            `json:"drops"`
	// ReceiveClock is "recorder" (each record stamped by its recorder's
	// clocks) or "simulator" (merge --clock sim converted them: SimClock
	// says how).
	ReceiveClock string              `json:"receive_clock"`
	SimClock     *hostclock.SimClock `json:"sim_clock,omitempty"`
	Channels     []InfoChannel       `json:"channels"`
	Damage       []string            `json:"damage,omitempty"`
}

// infoOf builds the summary from the reader's index (footer or scan).
func infoOf(path string, r *logfmt.Reader, tf codec.TimeFormat) *Info {
	h := r.Header()
	in := &Info{File: path, SizeBytes: r.Size(), Version: fmt.Sprintf("%d.%d", h.VersionMajor, h.VersionMinor),
		Indexed: r.Indexed(), Finished: r.Indexed(), CreatedNs: h.CreatedWallNs, Metadata: h.Metadata, Chunks: len(r.Chunks())}
	if in.Metadata == nil {
		in.Metadata = map[string]string{}
	}
	if in.BeingWritten = r.BeingWritten(); in.BeingWritten != "" {
		// A live log: no footer yet, and an end cut mid-block is where
		// the writer is, not damage.
		in.Warning = in.BeingWritten + ": no footer yet; read what is there by linear scan"
	} else if !r.Indexed() {
		in.Warning = "no footer: the log was not closed (recorder crashed or still writing); read by linear scan. Run `vrlog recover " + path + " -o FIXED.vrlog` for a repaired, indexed copy"
	}
	if tt := r.TornTail(); tt != nil && in.BeingWritten == "" {
		in.Damage = append(in.Damage, "torn tail: "+tt.Error())
	}
	for _, s := range r.SkippedChunks() {
		in.Damage = append(in.Damage, s.Error())
	}
	for _, w := range r.Warnings() {
		in.Damage = append(in.Damage, "read around (no record lost): "+w.Error())
	}
	in.ReceiveClock = "recorder"
	if sc, err := hostclock.ParseSimClock(h.Metadata); err != nil {
		in.Damage = append(in.Damage, err.Error())
	} else if sc != nil {
		in.ReceiveClock, in.SimClock = "simulator", sc
	}
	in.EpochNs, in.EpochSource = analyzer.SessionEpoch(r)
	if start, ok := r.Start(); ok {
		in.StartNs = start
		in.EndNs, _ = r.End()
		in.DurationS = float64(in.EndNs-in.StartNs) / 1e9
		in.Start, in.End = tf.Format(in.StartNs, in.EpochNs), tf.Format(in.EndNs, in.EpochNs)
	}
	for _, c := range r.Channels() {
		s := r.StatsOf(c.ID)
		_, known := schema.Lookup(&c)
		ic := InfoChannel{ID: c.ID, Name: c.Name, Transport: c.Transport.String(), Topic: c.Topic, Schema: c.Schema, Decodable: known,
			Compression: c.Compression.String(), Count: s.Records, RawBytes: s.RawBytes, StoredBytes: s.StoredBytes, Drops: s.Drops,
			FirstRecvWallNs: s.FirstWallNs, LastRecvWallNs: s.LastWallNs, Meta: c.Meta,
			Error: c.Meta[logfmt.MetaError], Warning: c.Meta[logfmt.MetaWarning]}
		if s.Records > 1 && s.LastMonoNs > s.FirstMonoNs {
			ic.RateHz = float64(s.Records-1) / (float64(s.LastMonoNs-s.FirstMonoNs) / 1e9)
		}
		if s.StoredBytes > 0 {
			ic.CompressionRatio = float64(s.RawBytes) / float64(s.StoredBytes)
		}
		if s.HasCapture {
			f, l := s.FirstCaptureNs, s.LastCaptureNs
			ic.FirstCaptureNs, ic.LastCaptureNs = &f, &l
		}
		in.Records += s.Records
		in.RawBytes += s.RawBytes
		in.StoredBytes += s.StoredBytes
		in.Drops += s.Drops
		in.Channels = append(in.Channels, ic)
	}
	return in
}

func runInfo(c *cli.Context) error {
	if c.NArg() == 0 {
		return cliutil.Usage("info: give one or more .vrlog files (see --help)")
	}
	tf, err := parseTimeFormat(c)
	if err != nil {
		return err
	}
	out := c.App.Writer
	var firstErr error
	nerr := 0
	for i, path := range c.Args().Slice() {
		r, err := openLog(path, logfmt.ReaderOptions{Tolerant: true})
		if err != nil {
			if c.NArg() > 1 { // one file's error is the verb's, printed once
				fmt.Fprintf(c.App.ErrWriter, "info: %v\n", err)
			}
			if firstErr == nil {
				firstErr = err
			}
			nerr++
			continue
		}
		in := infoOf(path, r, tf)
		warnDamage(c, r) // also on stderr: a script reading the report may miss it
		r.Close()
		if c.Bool("json") {
			if err := writeJSONLine(out, in); err != nil {
				return err
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		printInfo(out, in, cliutil.Width(c))
	}
	if nerr == 1 && c.NArg() == 1 {
		return firstErr
	}
	if firstErr != nil {
		return cliutil.Input(fmt.Errorf("info: %d of %d files could not be read", nerr, c.NArg()))
	}
	return nil
}

// printInfo prints in for a person, fitted to width (0: no limit): lines
// wrapped under their values, the channel table split into groups of
// columns led by ID and NAME.
func printInfo(out io.Writer, in *Info, width int) {
	w := textfit.NewWriter(out, width)
	defer w.Flush()
	fmt.Fprintf(w, "file:      %s\n", in.File)
	fmt.Fprintf(w, "size:      %s (%d bytes), format %s, %d chunks\n", ui.Bytes(in.SizeBytes), in.SizeBytes, in.Version, in.Chunks)
	if in.Finished {
		fmt.Fprintf(w, "footer:    present (log closed properly)\n")
	} else {
		if in.BeingWritten != "" {
			fmt.Fprintf(w, "footer:    not yet: %s\n", in.Warning)
		} else {
			fmt.Fprintf(w, "footer:    MISSING: %s\n", in.Warning)
		}
	}
	for _, d := range in.Damage {
		fmt.Fprintf(w, "damage:    %s\n", d)
	}
	fmt.Fprintf(w, "created:   %s\n", codec.FormatRFC3339(in.CreatedNs))
	if in.Records > 0 {
		fmt.Fprintf(w, "epoch:     %s (%s; elapsed counts from it)\n", codec.FormatRFC3339(in.EpochNs), in.EpochSource)
		fmt.Fprintf(w, "start:     %s (%s)\n", in.Start, codec.FormatRFC3339(in.StartNs))
		fmt.Fprintf(w, "end:       %s (%s)\n", in.End, codec.FormatRFC3339(in.EndNs))
		fmt.Fprintf(w, "duration:  %s (%.3f s)\n", time.Duration(in.EndNs-in.StartNs).Round(time.Millisecond), in.DurationS)
	}
	ratio := 0.0
	if in.StoredBytes > 0 {
		ratio = float64(in.RawBytes) / float64(in.StoredBytes)
	}
	fmt.Fprintf(w, "records:   %d, %s raw, %s stored (ratio %.2f), %d recorder drops\n", in.Records, ui.Bytes(int64(in.RawBytes)), ui.Bytes(int64(in.StoredBytes)), ratio, in.Drops)
	if sc := in.SimClock; sc != nil {
		fmt.Fprintf(w, "clock:     receive stamps on the simulator's clock (time service %s), merged from %d hosts:\n", sc.Service, len(sc.Hosts))
		printHosts(w, sc.Hosts)
	}
	if len(in.Metadata) > 0 {
		keys := make([]string, 0, len(in.Metadata))
		for k := range in.Metadata {
			if k == hostclock.MetaKey && in.SimClock != nil {
				continue // shown above
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(w, "metadata:\n")
		for _, k := range keys {
			fmt.Fprintf(w, "  %s: %s\n", k, in.Metadata[k])
		}
	}
	fmt.Fprintf(w, "channels:  %d\n", len(in.Channels))
	tb := &textfit.Table{Indent: "  ", Keep: 2}
	tb.Row("ID", "NAME", "TRANSPORT", "TOPIC", "SCHEMA", "COUNT", "RATE", "RAW", "STORED", "RATIO", "DROPS")
	for _, ch := range in.Channels {
		schema := ch.Schema
		if schema == "" {
			schema = "(raw)"
		} else if !ch.Decodable {
			schema += " (raw)"
		}
		ratio := "-"
		if ch.CompressionRatio > 0 && !math.IsInf(ch.CompressionRatio, 0) {
			ratio = fmt.Sprintf("%.2f", ch.CompressionRatio)
		}
		tb.Row(fmt.Sprint(ch.ID), ch.Name, ch.Transport, ch.Topic, schema, fmt.Sprint(ch.Count), fmt.Sprintf("%.2f Hz", ch.RateHz),
			ui.Bytes(int64(ch.RawBytes)), ui.Bytes(int64(ch.StoredBytes)), ratio, fmt.Sprint(ch.Drops))
	}
	w.Flush()
	tb.Write(out, width)
	for _, ch := range in.Channels {
		if ch.Error != "" {
			fmt.Fprintf(w, "error:     channel %s was NOT RECORDED: %s\n", ch.Name, ch.Error)
		}
		if ch.Warning != "" {
			fmt.Fprintf(w, "warning:   channel %s: %s\n", ch.Name, ch.Warning)
		}
	}
	if !in.Finished && in.BeingWritten == "" {
		fmt.Fprintf(w, "hint:      vrlog recover %s -o FIXED.vrlog\n", in.File)
	}
}

func marshalJSON(v any) ([]byte, error) { return json.Marshal(v) }
