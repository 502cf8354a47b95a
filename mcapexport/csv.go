package mcapexport

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// CSVOptions configures a CSV timing table.
type CSVOptions struct {
	// TimeFormat formats the "t" (capture) and "recv_wall" columns; the
	// *_ns columns are always integer unix nanoseconds.
	TimeFormat codec.TimeFormat
	// EpochNs is the epoch of TimeElapsed.
	EpochNs int64
	// ChannelColumn adds a leading "channel" column (one table holding
	// several channels).
	ChannelColumn bool
}

// CSVColumns are the timing table's columns, in order (after "channel"
// when CSVOptions.ChannelColumn is set):
//
//	index         record number within its channel, from 0
//	seq           simulator seq (empty without a capture stamp)
//	t             capture t_ns in the chosen time format (empty without)
//	t_ns          capture t_ns, unix ns (empty without)
//	recv_wall     receive wall stamp in the chosen time format
//	recv_wall_ns  receive wall stamp, unix ns
//	recv_mono_ns  receive monotonic stamp, ns
//	dt_ns         t_ns minus the previous record's t_ns on the channel
//	recv_dt_ns    recv_mono_ns minus the previous record's
//	latency_ns    recv_wall_ns minus t_ns (capture-to-receive, across clocks)
//	skipped       seq - (previous seq + 1) when positive, else 0
//	restart       1 when seq went back (a publisher restart), else 0
//	header_bytes  transport header size (iceoryx2 user header)
//	payload_bytes payload size
var CSVColumns = []string{"index", "seq", "t", "t_ns", "recv_wall", "recv_wall_ns", "recv_mono_ns",
	"dt_ns", "recv_dt_ns", "latency_ns", "skipped", "restart", "header_bytes", "payload_bytes"}

type csvChan struct {
	n        uint64
	prevMono int64
	prevCap  int64
	prevSeq  uint64
	hasCap   bool
}

// CSVWriter writes a timing table. It needs record metadata only (a
// MetaOnly iteration never reads a payload).
type CSVWriter struct {
	w     *csv.Writer
	opts  CSVOptions
	chans map[uint16]*csvChan
	row   []string
}

// NewCSV writes the header row to out and returns the table writer.
func NewCSV(out io.Writer, opts CSVOptions) (*CSVWriter, error) {
	c := &CSVWriter{w: csv.NewWriter(out), opts: opts, chans: map[uint16]*csvChan{}}
	hdr := CSVColumns
	if opts.ChannelColumn {
		hdr = append([]string{"channel"}, CSVColumns...)
	}
	if err := c.w.Write(hdr); err != nil {
		return nil, fmt.Errorf("mcapexport: csv: %w", err)
	}
	return c, nil
}

// Write appends the row of record r of channel ch.
func (c *CSVWriter) Write(ch *logfmt.Channel, r *logfmt.Record) error {
	st := c.chans[r.Channel]
	if st == nil {
		st = &csvChan{}
		c.chans[r.Channel] = st
	}
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	row := c.row[:0]
	if c.opts.ChannelColumn {
		row = append(row, ch.Name)
	}
	row = append(row, strconv.FormatUint(st.n, 10))
	if r.HasStamp {
		row = append(row, strconv.FormatUint(r.Seq, 10), c.opts.TimeFormat.Format(r.CaptureNs, c.opts.EpochNs), itoa(r.CaptureNs))
	} else {
		row = append(row, "", "", "")
	}
	row = append(row, c.opts.TimeFormat.Format(r.RecvWallNs, c.opts.EpochNs), itoa(r.RecvWallNs), itoa(r.RecvMonoNs))
	dt, rdt, lat, skipped, restart := "", "", "", "", ""
	if st.n > 0 {
		rdt = itoa(r.RecvMonoNs - st.prevMono)
	}
	if r.HasStamp {
		lat = itoa(r.RecvWallNs - r.CaptureNs)
		skipped, restart = "0", "0"
		if st.hasCap {
			dt = itoa(r.CaptureNs - st.prevCap)
			step, n := codec.Step(st.prevSeq, r.Seq)
			skipped = strconv.FormatUint(n, 10)
			if step == codec.SeqBack {
				restart = "1"
			}
		}
		st.hasCap, st.prevCap, st.prevSeq = true, r.CaptureNs, r.Seq
	}
	row = append(row, dt, rdt, lat, skipped, restart, strconv.Itoa(headerLen(r)), strconv.Itoa(payloadLen(r)))
	st.n++
	st.prevMono = r.RecvMonoNs
	c.row = row
	if err := c.w.Write(row); err != nil {
		return fmt.Errorf("mcapexport: csv: %w", err)
	}
	return nil
}

// Flush writes buffered rows and returns the first write error.
func (c *CSVWriter) Flush() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("mcapexport: csv: %w", err)
	}
	return nil
}

func headerLen(r *logfmt.Record) int {
	return max(len(r.Header), r.HeaderLen)
}

func payloadLen(r *logfmt.Record) int {
	return max(len(r.Payload), r.PayloadLen)
}
