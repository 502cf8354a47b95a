package logtools

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
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
file (bit flips: each dropped chunk is named with its byte offset in SRC;
a chunk with one damaged payload block keeps the records of its sound
blocks, salvaged block by block).

DST is written to a temporary file next to it and renamed when verified; an existing DST is
kept unless --force. SRC is never modified. A SRC that does not start like a
vrlog log (its prelude and first block both damaged) is refused unless
--force, which then searches it from its first byte for vrlog blocks.

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
	Rebuilt         []string `json:"rebuilt,omitempty"` // damaged structures that held no record, written anew
	TornTail        string   `json:"torn_tail,omitempty"`
	TornTailOffset  *int64   `json:"torn_tail_offset,omitempty"`
	Placeholders    []uint16 `json:"placeholder_channels,omitempty"`
	// Salvaged are the chunks kept without their damaged payload blocks:
	// the records of their sound blocks kept, those of the damaged lost.
	Salvaged []SalvagedChunk `json:"salvaged_chunks,omitempty"`
}

// SalvagedChunk is one chunk of the source kept without its damaged
// payload blocks.
type SalvagedChunk struct {
	Offset  int64    `json:"offset"`
	Kept    uint64   `json:"records_kept"`
	Lost    uint64   `json:"records_lost"`
	Damaged []string `json:"damaged"` // its damaged payload blocks
}

func runRecover(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usage("recover: give one source file and -o DST (see --help)")
	}
	src := c.Args().First()
	dst := c.String("output")
	st, err := os.Stat(src)
	if err != nil {
		return cliutil.Input(fmt.Errorf("recover: %w", err))
	}
	if dst == "" {
		return cliutil.Usage("recover: --output: give a file path (- for stdout)")
	}
	if outfile.IsStdout(dst) {
		if err := cliutil.RefuseBinaryOnTerminal(c, dst, "a vrlog log"); err != nil {
			return err
		}
	}
	if outfile.IsStdout(dst) && c.Bool("json") {
		return cliutil.Usage("recover: -o %s writes the copy to stdout: drop --json, or give -o FILE", dst)
	}
	if st, err := os.Stat(dst); err == nil && st.IsDir() {
		return cliutil.Usage("recover: %s is a directory", dst)
	}
	if same(src, dst) {
		return cliutil.Usage("recover: the output must differ from the source")
	}
	force := c.Bool("force")
	prog := startProgress(c, "recover "+src, 2*st.Size(), ui.ProcessReads())
	opts := logfmt.RecoverOptions{Overwrite: force, Force: force, Stdout: c.App.Writer}
	if r, err := logfmt.Open(src, logfmt.ReaderOptions{Tolerant: true}); err == nil {
		if r.Indexed() { // the source's own statistics: its epoch, whatever chunks the copy drops
			opts.Metadata = map[string]string{}
			analyzer.StoreEpoch(opts.Metadata, analyzer.LogEpoch(r))
		}
		r.Close()
	}
	rep, err := logfmt.Recover(c.Context, src, dst, opts)
	prog.Done()
	if err != nil {
		var ce *logfmt.CorruptionError
		switch {
		case errors.Is(err, logfmt.ErrExists):
			return cliutil.Output(err)
		case errors.Is(err, logfmt.ErrBadMagic) && !force:
			return cliutil.Input(fmt.Errorf("%w (not a vrlog log? --force searches it for vrlog blocks anyway)", err))
		case errors.Is(err, logfmt.ErrBadMagic), errors.Is(err, logfmt.ErrUnsupportedVersion), errors.Is(err, logfmt.ErrNotRegular):
			return cliutil.Input(explain(src, err))
		case errors.As(err, &ce):
			return cliutil.Input(err)
		}
		return cliutil.Runtime(err)
	}
	var n uint64 // read back: none for a copy streamed in place
	how := "streamed in place, not read back"
	if rep.Verified != nil {
		n, how = rep.Verified.Records, fmt.Sprintf("verified: %d records read back", rep.Verified.Records)
	}
	res := RecoverResult{Source: src, Dest: dst, SourceBytes: st.Size(), HadFooter: rep.HadFooter, ChunksKept: rep.ChunksKept,
		RecordsKept: rep.RecordsKept, RecordsRead: n, Placeholders: rep.Placeholders, ChunksDropped: len(rep.Dropped),
		DestBytes: rep.BytesWritten}
	for _, d := range rep.Rebuilt {
		res.Rebuilt = append(res.Rebuilt, d.Error())
	}
	for _, s := range rep.Salvaged {
		sc := SalvagedChunk{Offset: s.Offset, Kept: s.Kept, Lost: s.Lost}
		for _, d := range s.Damaged {
			sc.Damaged = append(sc.Damaged, d.Error())
		}
		res.Salvaged = append(res.Salvaged, sc)
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
	torn := int64(-1)
	if res.TornTailOffset != nil {
		torn = *res.TornTailOffset
	}
	skipped := res.Dropped
	for _, s := range res.Salvaged {
		skipped = append(skipped, s.Damaged...)
	}
	cliutil.WarnDamage(c, logfmt.Damage{File: src, Size: st.Size(), TornTail: torn, NoFooter: !rep.HadFooter, Skipped: skipped, ReadAround: res.Rebuilt})
	if r, err := logfmt.Open(src, logfmt.ReaderOptions{Tolerant: true}); err == nil {
		if ws := r.WriterStats(); ws != nil && r.Indexed() {
			total := ws.Records
			res.RecordsInSource = &total
		}
		r.Close()
	}
	if c.Bool("json") {
		return writeJSONLine(c.App.Writer, &res)
	}
	w := status(c)
	fmt.Fprintf(w, "recovered %s -> %s (%s)\n", src, dst, how)
	fmt.Fprintf(w, "  kept:   %d chunks, %d records, %s of %s\n", res.ChunksKept, res.RecordsKept, ui.Bytes(res.DestBytes), ui.Bytes(res.SourceBytes))
	if res.RecordsInSource != nil {
		fmt.Fprintf(w, "  source index listed %d records: %d lost\n", *res.RecordsInSource, *res.RecordsInSource-min(*res.RecordsInSource, res.RecordsKept))
	}
	if !res.HadFooter {
		fmt.Fprintf(w, "  source had no footer (not closed properly): index rebuilt\n")
	}
	if res.TornTail != "" {
		fmt.Fprintf(w, "  torn tail at byte %d (an interrupted write left the last block incomplete; it is dropped): %s\n", *res.TornTailOffset, res.TornTail)
	}
	for _, d := range res.Rebuilt {
		fmt.Fprintf(w, "  rebuilt (damaged, held no record): %s\n", d)
	}
	if len(res.Dropped) > 0 {
		fmt.Fprintf(w, "  CORRUPTION in the middle of the file: %d damaged block(s) dropped:\n", len(res.Dropped))
		for _, d := range res.Dropped {
			fmt.Fprintf(w, "    %s\n", cliutil.Readable(d))
		}
	}
	for _, s := range res.Salvaged {
		fmt.Fprintf(w, "  CORRUPTION: salvaged the chunk at offset %d: %d records of its sound payload blocks kept, %d of its damaged one(s) lost:\n", s.Offset, s.Kept, s.Lost)
		for _, d := range s.Damaged {
			fmt.Fprintf(w, "    %s\n", cliutil.Readable(d))
		}
	}
	if len(res.Placeholders) > 0 {
		fmt.Fprintf(w, "  channel definitions lost for ids %v: kept as placeholder channels 'lost-channel-N'\n", res.Placeholders)
	}
	if res.TornTail == "" && len(res.Dropped) == 0 && len(res.Rebuilt) == 0 && res.HadFooter {
		fmt.Fprintf(w, "  nothing was damaged: the copy holds everything\n")
	}
	return nil
}
