package logtools

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/output"
	"github.com/vrlog/vrlog/internal/progress"
	"github.com/vrlog/vrlog/logfmt"
)

func recoverCommand() *cli.Command {
	return &cli.Command{
		Name:      "recover",
		Usage:     "write a repaired, verified copy of a damaged or unfinished log",
		ArgsUsage: "SRC.vrlog -o DST.vrlog",
		Description: `Copies every complete chunk of SRC whose CRCs and structure check out, byte
for byte, with the channel definitions, the recorder's latest drop counts, a
new index and a footer, into DST. Then it reads DST back (a full verify plus
reading every record) and reports success only if DST is sound and holds
exactly the records it kept: a repaired file you cannot open is not a repair.

It reports what was kept and what was lost, telling apart a torn tail (the
file simply ends mid-chunk: the usual crash, kill -9 or power loss, which
loses at most the last flush interval) from corruption in the middle of the
file (bit flips: each dropped chunk is named with its byte offset in SRC).

DST is written to a temporary file next to it and renamed when verified; an
existing DST is kept unless --force. SRC is never modified.

EXAMPLES:
   vrlog recover crashed.vrlog -o fixed.vrlog
   vrlog recover --json damaged.vrlog -o fixed.vrlog

` + cliutil.ExitCodesHelp,
		Flags: append(outputFlags(),
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"}),
		Action: runRecover,
	}
}

// RecoverResult is `recover --json`'s report.
type RecoverResult struct {
	Source          string   `json:"source"`
	Dest            string   `json:"dest"`
	SourceBytes     int64    `json:"source_bytes"`
	DestBytes       int64    `json:"dest_bytes"`
	HadFooter       bool     `json:"had_footer"`
	ChunksKept      int      `json:"chunks_kept"`
	RecordsKept     uint64   `json:"records_kept"`
	RecordsRead     uint64   `json:"records_read_back"`
	RecordsInSource *uint64  `json:"records_in_source_index,omitempty"` // from SRC's footer, when it had one
	ChunksDropped   int      `json:"chunks_dropped"`
	Dropped         []string `json:"dropped,omitempty"`
	DroppedOffsets  []int64  `json:"dropped_offsets,omitempty"`
	TornTail        string   `json:"torn_tail,omitempty"`
	TornTailOffset  *int64   `json:"torn_tail_offset,omitempty"`
	Placeholders    []uint16 `json:"placeholder_channels,omitempty"`
}

func runRecover(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usage("recover: give one source file and -o DST (see --help)")
	}
	src := c.Args().First()
	st, err := os.Stat(src)
	if err != nil {
		return cliutil.Input(fmt.Errorf("recover: %w", err))
	}
	f, err := createOutput(c, src)
	if err != nil {
		return err
	}
	defer f.Abort()
	// logfmt.Recover writes its own temporary file next to the name it is
	// given and renames it there: here, our temporary output. Until it
	// reports where that file is, it is removed on an interrupt by name.
	if err := f.Finish(); err != nil {
		return cliutil.Runtime(err)
	}
	inner := output.Track(f.TempName() + ".tmp")
	defer inner()
	prog := startProgress(c, "recover "+src, 2*st.Size(), progress.ProcessReads())
	rep, err := logfmt.Recover(src, f.TempName(), logfmt.RecoverOptions{Overwrite: true})
	prog.Done()
	if err != nil {
		if errors.Is(err, logfmt.ErrBadMagic) || errors.Is(err, logfmt.ErrUnsupportedVersion) {
			return cliutil.Input(explain(src, err))
		}
		var ce *logfmt.CorruptionError
		if errors.As(err, &ce) {
			return cliutil.Input(err)
		}
		return cliutil.Runtime(err)
	}
	if rep.TornTail != nil && rep.TornTail.Offset < 16 && rep.ChunksKept == 0 {
		return cliutil.Input(fmt.Errorf("recover: nothing to recover: %w", rep.TornTail))
	}
	dst := f.Path()
	// Read the copy back ourselves too: every record, payloads included.
	n, err := logfmt.ReadBack(f.TempName())
	if err != nil {
		return cliutil.Runtime(fmt.Errorf("recover %s: the repaired copy does not read back, nothing written: %w", src, err))
	}
	if n != rep.RecordsKept {
		return cliutil.Runtime(fmt.Errorf("recover %s: the repaired copy holds %d records, %d were kept; nothing written", src, n, rep.RecordsKept))
	}
	res := RecoverResult{Source: src, Dest: dst, SourceBytes: st.Size(), HadFooter: rep.HadFooter, ChunksKept: rep.ChunksKept,
		RecordsKept: rep.RecordsKept, RecordsRead: n, Placeholders: rep.Placeholders, ChunksDropped: len(rep.Dropped)}
	if dst, err := os.Stat(f.TempName()); err == nil {
		res.DestBytes = dst.Size()
	}
	for _, d := range rep.Dropped {
		res.Dropped = append(res.Dropped, d.Error())
		res.DroppedOffsets = append(res.DroppedOffsets, d.Offset)
	}
	if rep.TornTail != nil {
		res.TornTail = rep.TornTail.Error()
		off := rep.TornTail.Offset
		res.TornTailOffset = &off
	}
	if r, err := logfmt.Open(src, logfmt.ReaderOptions{Tolerant: true}); err == nil {
		if ws := r.WriterStats(); ws != nil && r.Indexed() {
			total := ws.Records
			res.RecordsInSource = &total
		}
		r.Close()
	}
	if err := f.Commit(); err != nil {
		return cliutil.Runtime(err)
	}
	if c.Bool("json") {
		return writeJSONLine(c.App.Writer, &res)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "recovered %s -> %s (verified: %d records read back)\n", src, dst, n)
	fmt.Fprintf(w, "  kept:   %d chunks, %d records, %s of %s\n", res.ChunksKept, res.RecordsKept, humanBytes(uint64(res.DestBytes)), humanBytes(uint64(res.SourceBytes)))
	if res.RecordsInSource != nil {
		fmt.Fprintf(w, "  source index listed %d records: %d lost\n", *res.RecordsInSource, *res.RecordsInSource-min(*res.RecordsInSource, res.RecordsKept))
	}
	if !res.HadFooter {
		fmt.Fprintf(w, "  source had no footer (not closed properly): index rebuilt\n")
	}
	if res.TornTail != "" {
		fmt.Fprintf(w, "  torn tail at byte %d (the file ends mid-block; the incomplete block is dropped): %s\n", *res.TornTailOffset, res.TornTail)
	}
	if len(res.Dropped) > 0 {
		fmt.Fprintf(w, "  CORRUPTION in the middle of the file: %d damaged block(s) dropped:\n", len(res.Dropped))
		for _, d := range res.Dropped {
			fmt.Fprintf(w, "    %s\n", d)
		}
	}
	if len(res.Placeholders) > 0 {
		fmt.Fprintf(w, "  channel definitions lost for ids %v: kept as placeholder channels 'lost-channel-N'\n", res.Placeholders)
	}
	if res.TornTail == "" && len(res.Dropped) == 0 && res.HadFooter {
		fmt.Fprintf(w, "  nothing was damaged: the copy holds everything\n")
	}
	return nil
}
