package parquetexport

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/mcapexport"
	"github.com/vrlog/vrlog/outfile"
)

// Schema names the layout of the exported files (RecordColumns, the
// decoded columns, the key-value metadata); it changes only with a new
// name (docs/analytics.md).
const Schema = "vrlog.records/1"

// DefaultRowsPerFile is where a channel's file is split by default.
const DefaultRowsPerFile = 4 << 20

// Rows are encoded in batches of batchRows, or fewer when their payload
// bytes pass batchBytes; a row group holds up to rowGroupRows rows or
// rowGroupBytes encoded bytes.
const (
	batchRows     = 64 << 10
	batchBytes    = 16 << 20
	rowGroupRows  = 1 << 20
	rowGroupBytes = 64 << 20
)

// RecordColumns are the columns of every exported record, in order, named
// as `vrlog cat --json` names them; a schema with decoded columns
// (DecodedFor) adds "decoded" (false where the payload did not decode:
// its decoded columns are null) and its own; Options.Payloads adds
// "header" and "payload", the record's bytes.
//
//	recv_wall_ns   the recorder's receive stamp, unix ns (wall clock)
//	recv_mono_ns   the recorder's receive stamp, monotonic ns
//	seq            the simulator's per-topic seq (null without a stamp)
//	t_ns           the capture stamp, unix ns on the simulator's clock (null without a stamp)
//	elapsed        (t_ns - epoch) / 1e9 s, as the SDK reports it (null without a stamp)
//	publisher_id   the publisher's identity in hex (null when unknown)
//	publisher_sn   the zenoh source sequence number (null when unknown)
//	header_bytes   the transport header's size (iceoryx2 user header)
//	payload_bytes  the payload's size
var RecordColumns = []arrow.Field{
	{Name: "recv_wall_ns", Type: i64}, {Name: "recv_mono_ns", Type: i64},
	nullable("seq", u64), nullable("t_ns", i64), nullable("elapsed", f64),
	nullable("publisher_id", arrow.BinaryTypes.String), nullable("publisher_sn", u64),
	{Name: "header_bytes", Type: arrow.PrimitiveTypes.Int32}, {Name: "payload_bytes", Type: arrow.PrimitiveTypes.Int32},
}

// Options configure an export.
type Options struct {
	// EpochNs is the epoch of the elapsed column.
	EpochNs int64
	// RowsPerFile splits a channel's records into files of at most this
	// many rows (0: DefaultRowsPerFile).
	RowsPerFile int64
	// Payloads adds the header and payload bytes of every record (frame
	// pixels included).
	Payloads bool
	// Metadata is added to every file's key-value metadata.
	Metadata map[string]string
	// Force replaces existing files of the same names.
	Force bool
}

// Writer writes each channel's records into files of their own under an
// output directory: DIR/<channel>/part-NNNNN.parquet.
type Writer struct {
	dir   *outfile.Dir    // the output directory
	out   []*outfile.File // every file, committed together
	subs  []*outfile.Dir  // the channel directories
	opts  Options
	chans map[uint16]*channel
	names map[string]bool
	files int
	rows  uint64
}

// channel is one channel's table being written.
type channel struct {
	ch       logfmt.Channel
	name     string // its directory
	full     bool   // NeedsPayload
	dec      Decoded
	schema   *arrow.Schema
	b        *array.RecordBuilder
	wall     *array.Int64Builder // RecordColumns' builders
	mono     *array.Int64Builder
	seq      *array.Uint64Builder
	tns      *array.Int64Builder
	elapsed  *array.Float64Builder
	pub      *array.StringBuilder
	pubSN    *array.Uint64Builder
	hbytes   *array.Int32Builder
	pbytes   *array.Int32Builder
	decoded  *array.BooleanBuilder
	fields   []array.Builder // the decoded fields' builders
	hdr, pay *array.BinaryBuilder
	n        int // rows in the batch
	nbytes   int // payload bytes in the batch
	part     int
	f        *outfile.File
	fw       *pqarrow.FileWriter
	fileRows int64
	rgRows   int64
	pubHex   []byte // the last publisher id and its hex
	pubStr   string
}

// Create starts writing into directory out (created if missing). Each
// file is written aside and renamed into place by Commit, after all are
// complete; Abort removes them, and what Create made.
func Create(out string, opts Options) (*Writer, error) {
	if opts.RowsPerFile <= 0 {
		opts.RowsPerFile = DefaultRowsPerFile
	}
	d, err := outfile.CreateDir(out, outfile.Options{Force: opts.Force})
	if err != nil {
		return nil, err
	}
	return &Writer{dir: d, opts: opts, chans: map[uint16]*channel{}, names: map[string]bool{}}, nil
}

// DirName is a channel's directory: its name with every character but
// letters, digits, '-', '_' and '.' replaced by '_'.
func DirName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}

// NeedsPayload says whether ch's records must be read in full (not from
// their metadata alone) for its columns.
func NeedsPayload(ch *logfmt.Channel, opts Options) bool {
	if opts.Payloads {
		return true
	}
	d, ok := DecodedFor(ch)
	return ok && d.Payload()
}

// RecordIterator is what Records returns.
type RecordIterator interface {
	Next() bool
	Record() *logfmt.Record
	Err() error
	Close()
}

// Records iterates the records sel selects for a Writer, reading ahead on
// the spare cores: in one pass with their payloads when every channel is
// in full (a state table), else the metadata of all and the payloads of
// those in full beside it (mcapexport.Records: a frame's pixels are not
// read for its timing alone).
func Records(r *logfmt.Reader, sel *logfmt.Selection, full []uint16) RecordIterator {
	sel.Workers = logfmt.ReadAhead()
	if len(full) < len(sel.Channels) {
		return mcapexport.NewRecords(r, sel, full)
	}
	f := sel.Filter()
	f.MetaOnly = false
	return r.Records(f)
}

// AddChannel starts ch's table.
func (w *Writer) AddChannel(ch logfmt.Channel) error {
	c := &channel{ch: ch, name: DirName(ch.Name), full: NeedsPayload(&ch, w.opts)}
	if c.name == "" || c.name == "." || c.name == ".." || w.names[c.name] {
		c.name += "_" + strconv.Itoa(int(ch.ID))
	}
	w.names[c.name] = true
	fields := append([]arrow.Field{}, RecordColumns...)
	var ok bool
	if c.dec, ok = DecodedFor(&ch); ok {
		fields = append(fields, arrow.Field{Name: "decoded", Type: arrow.FixedWidthTypes.Boolean})
		fields = append(fields, c.dec.Fields()...)
	}
	if w.opts.Payloads {
		fields = append(fields, nullable("header", arrow.BinaryTypes.Binary), arrow.Field{Name: "payload", Type: arrow.BinaryTypes.Binary})
	}
	c.schema = arrow.NewSchema(fields, nil)
	c.b = array.NewRecordBuilder(memory.DefaultAllocator, c.schema)
	all := c.b.Fields()
	c.wall, c.mono, c.seq = all[0].(*array.Int64Builder), all[1].(*array.Int64Builder), all[2].(*array.Uint64Builder)
	c.tns, c.elapsed, c.pub = all[3].(*array.Int64Builder), all[4].(*array.Float64Builder), all[5].(*array.StringBuilder)
	c.pubSN, c.hbytes, c.pbytes = all[6].(*array.Uint64Builder), all[7].(*array.Int32Builder), all[8].(*array.Int32Builder)
	rest := all[len(RecordColumns):]
	if c.dec != nil {
		c.decoded = rest[0].(*array.BooleanBuilder)
		c.fields = rest[1 : 1+len(c.dec.Fields())]
		rest = rest[1+len(c.fields):]
	}
	if w.opts.Payloads {
		c.hdr, c.pay = rest[0].(*array.BinaryBuilder), rest[1].(*array.BinaryBuilder)
	}
	w.chans[ch.ID] = c
	return nil
}

// reserve sizes the builders for the next batch after a full one, so that
// a long table's appends do not grow them step by step (a short table's
// builders stay as small as it is).
func (c *channel) reserve() {
	if c.pay != nil {
		return // sized by their bytes: batchBytes
	}
	c.b.Reserve(batchRows)
	for _, b := range c.fields {
		if lb, ok := b.(*array.ListBuilder); ok {
			lb.ValueBuilder().Reserve(4 * batchRows) // a state's four sensors
		}
	}
}

// Write appends record r (of a channel added before; with its payload
// when NeedsPayload).
func (w *Writer) Write(r *logfmt.Record) error {
	c := w.chans[r.Channel]
	if c == nil {
		return fmt.Errorf("parquetexport: record of channel %d, which was not added", r.Channel)
	}
	if c.full && r.Payload == nil && r.PayloadLen > 0 {
		return fmt.Errorf("parquetexport: %s: record payload not read", c.ch.Name)
	}
	c.wall.Append(r.RecvWallNs)
	c.mono.Append(r.RecvMonoNs)
	if r.HasStamp {
		c.seq.Append(r.Seq)
		c.tns.Append(r.CaptureNs)
		c.elapsed.Append(codec.Elapsed(r.CaptureNs, w.opts.EpochNs))
	} else {
		c.seq.AppendNull()
		c.tns.AppendNull()
		c.elapsed.AppendNull()
	}
	if r.PublisherID != nil {
		c.pub.Append(c.publisher(r.PublisherID))
	} else {
		c.pub.AppendNull()
	}
	if r.HasPubSN {
		c.pubSN.Append(r.PublisherSN)
	} else {
		c.pubSN.AppendNull()
	}
	c.hbytes.Append(int32(max(len(r.Header), r.HeaderLen)))
	c.pbytes.Append(int32(max(len(r.Payload), r.PayloadLen)))
	if c.dec != nil {
		ok := c.dec.Append(c.fields, r)
		c.decoded.Append(ok)
		if !ok {
			for _, b := range c.fields {
				b.AppendNull()
			}
		}
	}
	if c.pay != nil {
		if r.Header != nil {
			c.hdr.Append(r.Header)
		} else {
			c.hdr.AppendNull()
		}
		c.pay.Append(r.Payload)
		c.nbytes += len(r.Payload) + len(r.Header)
	}
	c.n++
	w.rows++
	if c.n >= batchRows || c.nbytes >= batchBytes || c.fileRows+int64(c.n) >= w.opts.RowsPerFile {
		return w.flush(c)
	}
	return nil
}

// publisher is id in hex, converted once per change of publisher.
func (c *channel) publisher(id []byte) string {
	if string(id) != string(c.pubHex) {
		c.pubHex = append(c.pubHex[:0], id...)
		c.pubStr = hex.EncodeToString(id)
	}
	return c.pubStr
}

// flush encodes the batch into the channel's current file, starting the
// file (and a new one each RowsPerFile rows) as needed.
func (w *Writer) flush(c *channel) error {
	if c.n == 0 && c.part > 0 {
		return nil
	}
	if c.fw == nil {
		if err := w.startFile(c); err != nil {
			return err
		}
	}
	if c.n == 0 {
		return nil // a channel without records: its file of no rows
	}
	rec := c.b.NewRecordBatch()
	defer rec.Release()
	if rec.NumRows() >= batchRows {
		c.reserve()
	}
	if c.rgRows > 0 && (c.rgRows+rec.NumRows() > rowGroupRows || c.fw.RowGroupTotalBytesWritten() >= rowGroupBytes) {
		if err := c.fw.NewBufferedRowGroupChecked(); err != nil {
			return w.fail(c, err)
		}
		c.rgRows = 0
	}
	if err := c.fw.WriteBuffered(rec); err != nil {
		return w.fail(c, err)
	}
	c.rgRows += rec.NumRows()
	c.fileRows += rec.NumRows()
	c.n, c.nbytes = 0, 0
	if c.fileRows >= w.opts.RowsPerFile {
		return w.closeFile(c)
	}
	return nil
}

func (w *Writer) fail(c *channel, err error) error {
	return fmt.Errorf("parquetexport: %s: %w", c.f.Path(), err)
}

func (w *Writer) startFile(c *channel) error {
	sub := filepath.Join(w.dir.Path(), c.name)
	if c.part == 0 { // created if missing, removed again on a failure or an interrupt
		d, err := outfile.CreateDir(sub, outfile.Options{Force: w.opts.Force})
		if err != nil {
			return err
		}
		w.subs = append(w.subs, d)
	}
	f, err := outfile.Create(filepath.Join(sub, fmt.Sprintf("part-%05d.parquet", c.part)), outfile.Options{Force: w.opts.Force})
	if err != nil {
		return err
	}
	w.out = append(w.out, f)
	c.f = f
	c.part++
	fw, err := pqarrow.NewFileWriter(c.schema, f, writerProps(c.schema), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return w.fail(c, err)
	}
	meta := map[string]string{"vrlog.records.schema": Schema, "vrlog.channel": c.ch.Name, "vrlog.channel_id": strconv.Itoa(int(c.ch.ID)),
		"vrlog.transport": c.ch.Transport.String(), "vrlog.topic": c.ch.Topic, "vrlog.schema": c.ch.Schema,
		"vrlog.elapsed_epoch_ns": strconv.FormatInt(w.opts.EpochNs, 10)}
	for k, v := range w.opts.Metadata {
		meta[k] = v
	}
	for k, v := range meta {
		if err := fw.AppendKeyValueMetadata(k, v); err != nil {
			return w.fail(c, err)
		}
	}
	c.fw, c.fileRows, c.rgRows = fw, 0, 0
	w.files++
	return nil
}

func (w *Writer) closeFile(c *channel) error {
	err := c.fw.Close()
	c.fw = nil
	if err != nil {
		return w.fail(c, err)
	}
	return nil
}

// Commit closes every table (Close) and moves the files into place: all
// are finished first (flushed, fsynced: where a full disk shows), then
// renamed. On a failure nothing is left under a file's name.
func (w *Writer) Commit() error {
	if err := w.Close(); err != nil {
		w.Abort()
		return err
	}
	for _, f := range w.out {
		if err := f.Finish(); err != nil {
			w.Abort()
			return err
		}
	}
	for i, f := range w.out {
		if err := f.Commit(); err != nil {
			for _, g := range w.out[:i] {
				os.Remove(g.Path())
			}
			w.Abort()
			return err
		}
	}
	w.out = nil
	for _, d := range w.subs {
		d.Commit() // no files of its own: keeps the directory
	}
	return w.dir.Commit()
}

// Abort removes every file not committed, the channel directories and
// the output directory that Create made (when empty). It does nothing
// after Commit.
func (w *Writer) Abort() {
	for _, f := range w.out {
		f.Abort()
	}
	for _, d := range w.subs {
		d.Abort()
	}
	w.out, w.subs = nil, nil
	w.dir.Abort()
}

// Close writes what is buffered and closes every table (a channel
// without records gets one file of no rows); Commit does it.
func (w *Writer) Close() error {
	var first error
	for _, c := range w.chans {
		err := w.flush(c)
		if c.fw != nil {
			if cerr := w.closeFile(c); err == nil {
				err = cerr
			}
		}
		c.b.Release()
		if first == nil {
			first = err
		}
	}
	return first
}

// Stats are the files and rows written.
func (w *Writer) Stats() (files int, rows uint64) { return w.files, w.rows }

// writerProps: zstd; integers delta-encoded (stamps and counters step
// evenly), floats byte-stream-split (their exponent bytes compress),
// strings dictionary-encoded (a channel has few publishers and
// encodings).
func writerProps(s *arrow.Schema) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(1),
		parquet.WithDictionaryDefault(false), parquet.WithCreatedBy("vrlog"), parquet.WithMaxRowGroupLength(rowGroupRows)}
	var walk func(path string, t arrow.DataType)
	walk = func(path string, t arrow.DataType) {
		switch t := t.(type) {
		case *arrow.Int64Type, *arrow.Uint64Type, *arrow.Int32Type, *arrow.Uint32Type:
			opts = append(opts, parquet.WithEncodingFor(path, parquet.Encodings.DeltaBinaryPacked))
		case *arrow.Float64Type:
			opts = append(opts, parquet.WithEncodingFor(path, parquet.Encodings.ByteStreamSplit))
		case *arrow.StringType:
			opts = append(opts, parquet.WithDictionaryFor(path, true))
		case *arrow.ListType:
			walk(path+".list.element", t.Elem())
		case *arrow.StructType:
			for _, f := range t.Fields() {
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	for _, f := range s.Fields() {
		walk(f.Name, f.Type)
	}
	return parquet.NewWriterProperties(opts...)
}
