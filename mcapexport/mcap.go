package mcapexport

import (
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/vrlog/vrlog/foxglove"
	"github.com/vrlog/vrlog/logfmt"
)

// MCAPOptions configures an MCAP export. The zero value is usable.
type MCAPOptions struct {
	// Compression of MCAP chunks: "zstd" (default), "lz4" or "none".
	Compression string
	// ChunkSize is the target uncompressed size of an MCAP chunk; default 4 MiB.
	ChunkSize int64
	// EpochNs is the epoch of decoded messages' "elapsed" field (0 makes
	// elapsed the unix time in seconds).
	EpochNs int64
	// Metadata is written as the MCAP metadata record named "vrlog"
	// (the log's note, host, tool version, ...).
	Metadata map[string]string
	// NoPoses leaves out the "<topic>:pose" foxglove.PoseInFrame channel
	// derived from each state channel.
	NoPoses bool
	// Stable, when set, tells which record payloads stay valid and
	// unchanged until Close (logfmt.Reader.Mapped, for a reader opened
	// with Map: the raw blocks' views of the file): the pixels of such a
	// frame in an uncompressed chunk are written from them directly,
	// without a copy. Every other byte is copied before Write returns.
	Stable func(payload []byte) bool
	// FileRange, when set, says where in a file a Stable payload lies
	// (logfmt.Reader.FileRange): the pixels of such a frame in an
	// uncompressed chunk are then copied from there to the output by the
	// kernel (copy_file_range, as cp does), when the output takes it
	// (outfile.File.CopyRange), without passing through this process.
	FileRange func(payload []byte) (*os.File, int64, bool)
}

// MCAPStats counts what an export wrote.
type MCAPStats struct {
	Messages    uint64            // messages written, all channels
	Undecodable uint64            // records of a known schema that did not decode
	PerTopic    map[string]uint64 // messages per MCAP topic
}

// outChannel is the MCAP side of one vrlog channel.
type outChannel struct {
	src     logfmt.Channel
	id      uint16 // MCAP channel id
	topic   string
	enc     *foxglove.Encoder
	count   uint32 // records seen (sequence for records without a stamp)
	poseID  uint16 // states: companion "<topic>:pose", 0 when off
	undecID uint16 // companion "<topic>:undecodable", 0 until needed
}

// MCAPWriter writes vrlog records as an indexed, chunked MCAP file.
type MCAPWriter struct {
	w       *rawWriter
	opts    MCAPOptions
	chans   map[uint16]*outChannel
	schemas map[string]uint16
	nextCh  uint16
	nextSch uint16
	buf     []byte
	stats   MCAPStats
	closed  bool
}

// NewMCAP starts an MCAP file on out: magic, header (profile "",
// library "vrlog"), and the metadata record.
func NewMCAP(out io.Writer, opts MCAPOptions) (*MCAPWriter, error) {
	var comp mcap.CompressionFormat
	switch opts.Compression {
	case "", "zstd":
		comp = mcap.CompressionZSTD
	case "lz4":
		comp = mcap.CompressionLZ4
	case "none":
		comp = mcap.CompressionNone
	default:
		return nil, fmt.Errorf("mcapexport: unknown compression %q (want zstd, lz4 or none)", opts.Compression)
	}
	chunk := opts.ChunkSize
	if chunk <= 0 {
		chunk = 4 << 20
	}
	w, err := newRawWriter(out, comp, chunk)
	if err != nil {
		return nil, fmt.Errorf("mcapexport: %w", err)
	}
	m := &MCAPWriter{w: w, opts: opts, chans: map[uint16]*outChannel{}, schemas: map[string]uint16{},
		nextCh: 1, nextSch: 1, stats: MCAPStats{PerTopic: map[string]uint64{}}}
	w.header("", "vrlog")
	if len(opts.Metadata) > 0 {
		w.metadata("vrlog", opts.Metadata)
	}
	if w.err != nil {
		return nil, fmt.Errorf("mcapexport: write header: %w", w.err)
	}
	return m, nil
}

// schemaID writes s as an MCAP schema the first time it is given.
func (m *MCAPWriter) schemaID(s foxglove.Schema) (uint16, error) {
	key := s.Name + "\x00" + s.Encoding + "\x00" + string(s.Data) // declared schemas may share a name
	if id, ok := m.schemas[key]; ok {
		return id, nil
	}
	id := m.nextSch
	m.w.schema(&mcap.Schema{ID: id, Name: s.Name, Encoding: s.Encoding, Data: s.Data})
	if m.w.err != nil {
		return 0, fmt.Errorf("mcapexport: write schema %s: %w", s.Name, m.w.err)
	}
	m.nextSch++
	m.schemas[key] = id
	return id, nil
}

func (m *MCAPWriter) newChannel(topic string, schemaID uint16, encoding string, meta map[string]string) (uint16, error) {
	if m.nextCh == 0 {
		return 0, fmt.Errorf("mcapexport: more than 65535 MCAP channels")
	}
	id := m.nextCh
	m.w.channel(&mcap.Channel{ID: id, SchemaID: schemaID, Topic: topic, MessageEncoding: encoding, Metadata: meta})
	if m.w.err != nil {
		return 0, fmt.Errorf("mcapexport: write channel %s: %w", topic, m.w.err)
	}
	m.nextCh++
	return id, nil
}

// AddChannel declares a vrlog channel; its MCAP channel (and schema) is
// written at once, so a channel without records still appears. A state
// channel also gets its "<topic>:pose" channel unless NoPoses.
func (m *MCAPWriter) AddChannel(c logfmt.Channel) error {
	if m.closed {
		return fmt.Errorf("mcapexport: writer closed")
	}
	if _, dup := m.chans[c.ID]; dup {
		return fmt.Errorf("mcapexport: channel id %d added twice", c.ID)
	}
	oc := &outChannel{src: c, topic: c.Name, enc: foxglove.NewEncoder(&c, m.opts.EpochNs)}
	sch := oc.enc.Schema()
	sid, err := m.schemaID(sch)
	if err != nil {
		return err
	}
	if oc.id, err = m.newChannel(oc.topic, sid, sch.MessageEncoding(), foxglove.ChannelMeta(&c)); err != nil {
		return err
	}
	if oc.enc.HasPose() && !m.opts.NoPoses {
		ps := foxglove.PoseSchema()
		psid, err := m.schemaID(ps)
		if err != nil {
			return err
		}
		md := foxglove.PartMeta(&c, foxglove.PartPose)
		if oc.poseID, err = m.newChannel(oc.topic+foxglove.PoseSuffix, psid, ps.MessageEncoding(), md); err != nil {
			return err
		}
	}
	m.chans[c.ID] = oc
	return nil
}

// stamps returns MCAP's log_time, publish_time and sequence of r.
func stamps(r *logfmt.Record, n uint32) (logTime, pubTime uint64, seq uint32) {
	logTime = clampU(r.RecvWallNs)
	pubTime = logTime
	seq = n
	if r.HasStamp {
		pubTime = clampU(r.CaptureNs)
		seq = uint32(r.Seq)
	}
	return
}

func clampU(ns int64) uint64 {
	if ns < 0 {
		return 0
	}
	return uint64(ns)
}

// message writes a message whose data is head then tail (a frame's
// pixels: written from the caller's bytes if Stable says they may be).
func (m *MCAPWriter) message(ch uint16, topic string, seq uint32, logTime, pubTime uint64, head, tail []byte) error {
	var src fileRange
	if ref := len(tail) > 0 && m.opts.Stable != nil && m.opts.Stable(tail); ref {
		src.ref = true
		if m.opts.FileRange != nil {
			src.f, src.off, _ = m.opts.FileRange(tail)
		}
	}
	if err := m.w.message(ch, seq, logTime, pubTime, head, tail, src); err != nil {
		return fmt.Errorf("mcapexport: write message on %s: %w", topic, err)
	}
	m.stats.Messages++
	m.stats.PerTopic[topic]++
	return nil
}

// Write exports one record of a channel added before.
func (m *MCAPWriter) Write(r *logfmt.Record) error {
	if m.closed {
		return fmt.Errorf("mcapexport: writer closed")
	}
	oc := m.chans[r.Channel]
	if oc == nil {
		return fmt.Errorf("mcapexport: record of undeclared channel %d", r.Channel)
	}
	logTime, pubTime, seq := stamps(r, oc.count)
	oc.count++
	// A frame's pixels stay in the tail, not copied here: the chunk copies
	// or references them.
	buf, tail, err := oc.enc.Encode(m.buf[:0], r)
	if err == nil {
		m.buf = buf
		if err := m.message(oc.id, oc.topic, seq, logTime, pubTime, buf, tail); err != nil {
			return err
		}
		if oc.poseID == 0 {
			return nil
		}
		m.buf = oc.enc.AppendPose(m.buf[:0])
		return m.message(oc.poseID, oc.topic+foxglove.PoseSuffix, seq, logTime, pubTime, m.buf, nil)
	}
	// Keep the record: a companion channel carries its bytes and the error.
	m.stats.Undecodable++
	if oc.undecID == 0 {
		us := foxglove.UndecodableSchema()
		sid, serr := m.schemaID(us)
		if serr != nil {
			return serr
		}
		md := foxglove.PartMeta(&oc.src, foxglove.PartUndecodable)
		id, cerr := m.newChannel(oc.topic+foxglove.UndecodableSuffix, sid, us.MessageEncoding(), md)
		if cerr != nil {
			return cerr
		}
		oc.undecID = id
	}
	m.buf = oc.enc.AppendUndecodable(m.buf[:0], r, err)
	return m.message(oc.undecID, oc.topic+foxglove.UndecodableSuffix, seq, logTime, pubTime, m.buf, nil)
}

// Stats returns what has been written so far.
func (m *MCAPWriter) Stats() MCAPStats {
	s := m.stats
	s.PerTopic = make(map[string]uint64, len(m.stats.PerTopic))
	for k, v := range m.stats.PerTopic {
		s.PerTopic[k] = v
	}
	return s
}

// Topics returns the MCAP topics written so far, sorted.
func (m *MCAPWriter) Topics() []string {
	var ts []string
	for t := range m.stats.PerTopic {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	return ts
}

// Close writes the last chunk and the summary section (schemas, channels,
// statistics, chunk indexes, summary offsets) and the footer. It does not
// close the underlying writer.
func (m *MCAPWriter) Close() error {
	if m.closed {
		return fmt.Errorf("mcapexport: writer closed")
	}
	m.closed = true
	if err := m.w.close(); err != nil {
		return fmt.Errorf("mcapexport: %w", err)
	}
	return nil
}
