package logtools

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/logfmt"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check a log's whole structure and every CRC; exit 1 naming each damaged chunk and its byte offset",
		ArgsUsage: "FILE.vrlog [FILE.vrlog ...]",
		Description: `Reads every block of each log without trusting its index: block headers,
every CRC (chunk metadata and every payload block, decompressed), each
record's metadata against its chunk's directory, and the footer index against
what the blocks say. Prints a one-line OK summary per sound file; for a
damaged one, each problem with its byte offset and what was expected there.

A file that ends in an incomplete block (recorder killed, power loss) or lacks its footer
is reported too: 'vrlog recover' makes a repaired copy. A log a recorder is
still writing (it holds the file's lock) is no damage: it is said LIVE, with
the writer's PID and what is sound so far, and counts as not finished.

EXAMPLES:
   vrlog verify run.vrlog
   vrlog verify --json *.vrlog

EXIT CODES:
   0  every file is sound
   1  damage found (bad CRC, malformed block, torn tail, missing footer), or
      a file is still being written (LIVE)
   2  a file could not be checked at all (missing, not a vrlog log, newer format)`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per file (one per line)"},
		},
		Action: runVerify,
	}
}

// VerifyResult is `verify --json`'s object for one file.
type VerifyResult struct {
	File      string `json:"file"`
	OK        bool   `json:"ok"`
	HasFooter bool   `json:"has_footer"`
	Chunks    int    `json:"chunks"`
	Records   uint64 `json:"records"`
	Channels  int    `json:"channels"`
	// Problems, Offsets and ChunkOffsets are always present ([] when
	// sound), TornTail "" when there is none: a script reads the same keys
	// from every file.
	Problems     []string `json:"problems"`
	Offsets      []int64  `json:"offsets"`       // byte offset of each damaged structure
	ChunkOffsets []int64  `json:"chunk_offsets"` // offset of the chunk holding it, -1 if none
	TornTail     string   `json:"torn_tail"`
	// Live is set for a log a writer still holds ("being written by PID
	// 123 (record)"): not finished, so not OK, but its missing footer and
	// the chunk at its end being written are no damage.
	Live  string `json:"live,omitempty"`
	Error string `json:"-"` // set: the file could not be checked (verifyError)
}

// verifyError is `verify --json`'s object for a file it could not check
// (missing, foreign, a newer format): the error instead of counts that
// would read as an empty sound file.
type verifyError struct {
	File  string `json:"file"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

func runVerify(c *cli.Context) error {
	if c.NArg() == 0 {
		return cliutil.Usage("verify: give one or more .vrlog files (see --help)")
	}
	out := c.App.Writer
	bad, unreadable, live := 0, 0, 0
	var lastErr error
	for _, path := range c.Args().Slice() {
		res := VerifyResult{File: path, Problems: []string{}, Offsets: []int64{}, ChunkOffsets: []int64{}}
		var size int64
		if st, err := os.Stat(path); err == nil {
			size = st.Size()
		}
		prog := startProgress(c, "verify "+path, size, ui.ProcessReads())
		rep, err := logfmt.Verify(path, logfmt.ReaderOptions{})
		prog.Done()
		if err != nil {
			unreadable++
			lastErr = cliutil.Input(explain(path, err))
			res.Error = lastErr.Error()
		} else {
			res.OK, res.HasFooter, res.Chunks, res.Records, res.Channels, res.Live = rep.OK(), rep.HasFooter, rep.Chunks, rep.Records, rep.Channels, rep.Live
			var chunks []logfmt.ChunkInfo
			if len(rep.Problems) > 0 {
				chunks = chunkIndex(path)
			}
			for _, p := range rep.Problems {
				msg := p.Error()
				if ci := chunkAt(chunks, p.Offset); ci != nil {
					msg = fmt.Sprintf("chunk at offset %d (%d records, receive times %d..%d): %s", ci.Offset, ci.Records, ci.MinWallNs, ci.MaxWallNs, msg)
					res.ChunkOffsets = append(res.ChunkOffsets, ci.Offset)
				} else {
					res.ChunkOffsets = append(res.ChunkOffsets, -1)
				}
				res.Problems = append(res.Problems, msg)
				res.Offsets = append(res.Offsets, p.Offset)
			}
			if rep.TornTail != nil {
				res.TornTail = rep.TornTail.Error()
			}
			switch {
			case res.Live != "" && len(res.Problems) == 0:
				live++
			case !res.OK:
				bad++
			}
		}
		if c.Bool("json") {
			var obj any = &res
			if res.Error != "" {
				obj = &verifyError{File: path, Error: res.Error}
			}
			if err := writeJSONLine(out, obj); err != nil {
				return err
			}
			continue
		}
		switch {
		case res.Error != "":
			if c.NArg() > 1 { // one file's error is the verb's, printed once
				fmt.Fprintf(c.App.ErrWriter, "verify: %s\n", res.Error)
			}
		case res.Live != "" && len(res.Problems) == 0:
			fmt.Fprintf(out, "LIVE %s: %s, not finished: %d sound chunks, %d records so far; verify it again once the writer stops\n", path, res.Live, res.Chunks, res.Records)
		case res.OK:
			fmt.Fprintf(status(c), "OK %s: %d chunks, %d records, %d channels, footer and index consistent\n", path, res.Chunks, res.Records, res.Channels)
		default:
			fmt.Fprintf(out, "DAMAGED %s: %d sound chunks, %d readable records\n", path, res.Chunks, res.Records)
			for _, p := range res.Problems {
				fmt.Fprintf(out, "  %s\n", cliutil.Readable(p))
			}
			if res.TornTail != "" {
				fmt.Fprintf(out, "  torn tail: %s\n", cliutil.Readable(res.TornTail))
			}
			if !res.HasFooter {
				fmt.Fprintf(out, "  no footer: the log was not closed properly\n")
			}
			fmt.Fprintf(out, "  repair: vrlog recover %s -o FIXED.vrlog\n", path)
		}
	}
	switch {
	case unreadable > 0:
		if unreadable == 1 && c.NArg() == 1 {
			return lastErr
		}
		return cliutil.Input(fmt.Errorf("verify: %d of %d files could not be checked", unreadable, c.NArg()))
	case bad > 0 && live > 0:
		return cliutil.CheckFailed(fmt.Errorf("verify: %d of %d files damaged, %d still being written", bad, c.NArg(), live))
	case bad > 0:
		return cliutil.CheckFailed(fmt.Errorf("verify: %d of %d files damaged", bad, c.NArg()))
	case live > 0:
		return cliutil.CheckFailed(fmt.Errorf("verify: %d of %d files still being written, not finished", live, c.NArg()))
	}
	return nil
}

// chunkIndex returns the chunks of a damaged file as far as they can be
// found (its footer index, or a tolerant scan), to name the chunk a
// problem lies in; nil if the file cannot be opened at all.
func chunkIndex(path string) []logfmt.ChunkInfo {
	r, err := logfmt.Open(path, logfmt.ReaderOptions{Tolerant: true})
	if err != nil {
		return nil
	}
	defer r.Close()
	return r.Chunks()
}

// chunkAt returns the chunk whose bytes include off.
func chunkAt(cs []logfmt.ChunkInfo, off int64) *logfmt.ChunkInfo {
	for i := range cs {
		if off >= cs[i].Offset && off < cs[i].Offset+cs[i].Size() {
			return &cs[i]
		}
	}
	return nil
}
