package logtools

import (
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
	"github.com/vrlog/vrlog/parquetexport"
)

const exportParquetHelp = `--format parquet writes directory OUT with one table per channel,
OUT/<channel>/part-00000.parquet (further parts past --rows-per-file rows),
for DuckDB, Spark, pandas, polars (docs/analytics.md). Columns: recv_wall_ns,
recv_mono_ns, seq, t_ns (int64 ns, exact; null without a stamp), elapsed
(from --epoch), publisher_id (hex), publisher_sn, header_bytes,
payload_bytes; for a known schema decoded (false where the payload did not
decode) and its fields: a state's estimate_t_ns, position_x ...
angular_velocity_z and sensors (a list of {id, t_ns}); a frame's
camera_id, width, height, stride, encoding, data_size (pixels only with
--payloads, which adds every record's header and payload bytes); a clock
probe's t1_ns ... t4_ns. A frame channel's records are read in full for
their headers.

`

func parquetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "payloads", Usage: "parquet: add each record's header and payload bytes (frame pixels) as columns"},
		&cli.Int64Flag{Name: "rows-per-file", Value: parquetexport.DefaultRowsPerFile, Usage: "parquet: split a channel's table into files of at most `N` rows"},
	}
}

// checkParquetFlags refuses the Parquet flags with another format.
func checkParquetFlags(c *cli.Context, format string) error {
	for _, f := range []string{"payloads", "rows-per-file"} {
		if c.IsSet(f) && format != "parquet" {
			return cliutil.Usage("--%s: only for --format parquet", f)
		}
	}
	return nil
}

func exportParquet(c *cli.Context, path string, r *logfmt.Reader, sel *logfmt.Selection, epoch int64) error {
	out := c.String("output")
	if out == "" || outfile.IsStdout(out) || outfile.InPlace(out) {
		return cliutil.Usage("--format parquet writes a directory: give -o DIR")
	}
	if same(path, out) {
		return cliutil.Usage("%s: the output must differ from the input", out)
	}
	rows := c.Int64("rows-per-file")
	if rows <= 0 {
		return cliutil.Usage("--rows-per-file %d: want a positive number of rows", rows)
	}
	opts := parquetexport.Options{EpochNs: epoch, RowsPerFile: rows, Payloads: c.Bool("payloads"), Force: c.Bool("force"),
		Metadata: map[string]string{"vrlog.source": path, "vrlog.created": codec.FormatRFC3339(r.Header().CreatedWallNs)}}
	w, err := parquetexport.Create(out, opts)
	if err != nil {
		return cliutil.Output(err)
	}
	defer w.Abort()
	var full []uint16 // the channels read in full
	for _, ch := range sel.Channels {
		if err := w.AddChannel(ch); err != nil {
			return cliutil.Runtime(err)
		}
		if parquetexport.NeedsPayload(&ch, opts) {
			full = append(full, ch.ID)
		}
	}
	it := parquetexport.Records(r, sel, full)
	defer it.Close() // a write error stops early
	for it.Next() {
		if err := w.Write(it.Record()); err != nil {
			return cliutil.Output(err) // an existing file: exit 2, --force
		}
	}
	if err := it.Err(); err != nil {
		return readError(path, err)
	}
	if err := w.Commit(); err != nil {
		return cliutil.Output(err)
	}
	files, n := w.Stats()
	fmt.Fprintf(status(c), "wrote %s rows of %d channel(s) as %d Parquet file(s) under %s\n", strconv.FormatUint(n, 10), len(sel.Channels), files, out)
	return nil
}
