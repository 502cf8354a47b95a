package logtools

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/foxglove"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/schema"
	"github.com/vrlog/vrlog/textfit"
)

func catCommand() *cli.Command {
	return &cli.Command{
		Name:      "cat",
		Usage:     "print records as text or JSON lines, decoded when the schema is known",
		ArgsUsage: "FILE.vrlog",
		Description: `Prints the records of a log in receive order, one per line: receive time,
channel, seq and capture time (when the sample carries them), sizes, and the
decoded sample for known schemas (vrsdk.State/1, vrsdk.Frame/1 header,
clock-sync messages). Times are in --time-format (default elapsed: seconds
since the session epoch, the first state sample's t_ns), and a decoded
state's 'elapsed' field counts from the same epoch. Frame pixels are never
printed decoded; --raw prints the header and payload bytes as hex.

--start, --end and --duration select by receive time: seconds or a duration
from the log start (12.5, 1m30s) or RFC 3339 (2024-05-01T10:00:00.5Z).
--channel selects by name or topic (a key expression: * one level, ** any
levels) or id; a --channel that matches nothing is exit 2, listing the
channels there are.

EXAMPLES:
   vrlog cat run.vrlog --limit 20
   vrlog cat run.vrlog --channel 'vr/*/state' --start 10 --end 12 --json \
       | jq .decoded.position
   vrlog cat run.vrlog --channel vr/r1/camera/front --raw --limit 1

` + cliutil.ExitCodesHelp,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON lines (one object per record)"},
			&cli.BoolFlag{Name: "raw", Usage: "also print the header and payload bytes as hex"},
			&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Usage: "stop after `N` records (0: no limit)"},
			&cli.BoolFlag{Name: "tolerant", Usage: "skip damaged chunks (reported on stderr) instead of stopping"},
			channelFlag(),
			timeFormatFlag(),
		}, windowFlags()...),
		Action: runCat,
	}
}

// CatRecord is one line of `cat --json`.
type CatRecord struct {
	Channel      string          `json:"channel"`
	ChannelID    uint16          `json:"channel_id"`
	RecvWallNs   int64           `json:"recv_wall_ns"`
	RecvMonoNs   int64           `json:"recv_mono_ns"`
	Seq          *uint64         `json:"seq,omitempty"`
	TNs          *int64          `json:"t_ns,omitempty"`
	PublisherID  string          `json:"publisher_id,omitempty"`
	PublisherSN  *uint64         `json:"publisher_sn,omitempty"`
	HeaderBytes  int             `json:"header_bytes"`
	PayloadBytes int             `json:"payload_bytes"`
	Decoded      json.RawMessage `json:"decoded,omitempty"`
	DecodeError  string          `json:"decode_error,omitempty"`
	HeaderHex    *string         `json:"header_hex,omitempty"`
	PayloadHex   *string         `json:"payload_hex,omitempty"`
}

// decodeJSON decodes a record with its codec into JSON, 'elapsed' counting
// from epoch.
func decodeJSON(cd codec.Codec, r *logfmt.Record, epoch int64) (json.RawMessage, error) {
	v, err := cd.Decode(r.Header, r.Payload, epoch)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case codec.State:
		return foxglove.AppendStateJSON(nil, &x), nil // NaN-safe
	case codec.Frame:
		return json.Marshal(x.FrameHeader)
	}
	return json.Marshal(v)
}

func runCat(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usage("cat: give exactly one .vrlog file (see --help)")
	}
	path := c.Args().First()
	tf, err := parseTimeFormat(c)
	if err != nil {
		return err
	}
	r, sel, err := openSelection(c, path, logfmt.ReaderOptions{Tolerant: c.Bool("tolerant")}, false)
	if err != nil {
		return err
	}
	defer r.Close()
	defer warnDamage(c, r)
	codecs := map[uint16]codec.Codec{}
	for _, ch := range sel.Channels {
		if cd, ok := schema.Lookup(&ch); ok {
			codecs[ch.ID] = cd
		}
	}
	epoch, _ := analyzer.SessionEpoch(r)
	out := c.App.Writer
	limit := c.Int("limit")
	asJSON, raw := c.Bool("json"), c.Bool("raw")
	var text io.Writer = out
	if width := cliutil.Width(c); width > 0 && !asJSON {
		tw := textfit.NewWriter(out, width) // a record's line continues indented
		tw.Extra = 4
		defer tw.Flush()
		text = tw
	}
	n := 0
	sel.Workers = logfmt.ReadAhead() // chunks decompressed on the other cores while this one formats
	it := r.Read(sel)
	defer it.Close() // --limit and write errors stop early
	for it.Next() {
		rec := it.Record()
		if limit > 0 && n >= limit {
			break
		}
		n++
		ch, _ := r.Channel(rec.Channel)
		cr := CatRecord{Channel: ch.Name, ChannelID: ch.ID, RecvWallNs: rec.RecvWallNs, RecvMonoNs: rec.RecvMonoNs,
			HeaderBytes: len(rec.Header), PayloadBytes: len(rec.Payload)}
		if rec.HasStamp {
			s, t := rec.Seq, rec.CaptureNs
			cr.Seq, cr.TNs = &s, &t
		}
		if len(rec.PublisherID) > 0 {
			cr.PublisherID = hex.EncodeToString(rec.PublisherID)
		}
		if rec.HasPubSN {
			sn := rec.PublisherSN
			cr.PublisherSN = &sn
		}
		if cd := codecs[rec.Channel]; cd != nil {
			d, err := decodeJSON(cd, rec, epoch)
			if err != nil {
				cr.DecodeError = err.Error()
			} else {
				cr.Decoded = d
			}
		}
		if raw {
			h, p := hex.EncodeToString(rec.Header), hex.EncodeToString(rec.Payload)
			cr.HeaderHex, cr.PayloadHex = &h, &p
		}
		if asJSON {
			if err := writeJSONLine(out, &cr); err != nil {
				return cliutil.Runtime(err)
			}
			continue
		}
		line := tf.Format(rec.RecvWallNs, epoch) + " " + ch.Name
		if rec.HasStamp {
			line += " seq=" + strconv.FormatUint(rec.Seq, 10) + " t=" + tf.Format(rec.CaptureNs, epoch)
		}
		line += fmt.Sprintf(" hdr=%d payload=%d", cr.HeaderBytes, cr.PayloadBytes)
		if cr.Decoded != nil {
			line += " " + string(cr.Decoded)
		}
		if cr.DecodeError != "" {
			line += " undecodable: " + cr.DecodeError
		}
		if raw {
			line += "\n  header:  " + *cr.HeaderHex + "\n  payload: " + *cr.PayloadHex
		}
		if _, err := fmt.Fprintln(text, line); err != nil {
			return cliutil.Runtime(err)
		}
	}
	if err := it.Err(); err != nil {
		return readError(path, err)
	}
	return nil
}
