package mcapexport

import (
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/vrlog/vrlog/codec"
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
}

// MCAPStats counts what an export wrote.
type MCAPStats struct {
	Messages    uint64            // messages written, all channels
	Undecodable uint64            // records of a known schema that did not decode
	PerTopic    map[string]uint64 // messages per MCAP topic
}

// outChannel is the MCAP side of one vrlog channel.
type outChannel struct {
	src      logfmt.Channel
	id       uint16 // MCAP channel id
	topic    string
	codec    codec.Codec // nil: raw
	kind     string      // schema name of the JSON messages, "" for raw
	count    uint32      // records seen (sequence for records without a stamp)
	headerID uint16      // companion "<topic>:header", 0 until needed
	undecID  uint16      // companion "<topic>:undecodable", 0 until needed
}

// MCAPWriter writes vrlog records as an indexed, chunked MCAP file.
type MCAPWriter struct {
	w       *mcap.Writer
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
	w, err := mcap.NewWriter(out, &mcap.WriterOptions{
		Chunked:     true,
		ChunkSize:   chunk,
		Compression: comp,
		IncludeCRC:  true,
	})
	if err != nil {
		return nil, fmt.Errorf("mcapexport: %w", err)
	}
	m := &MCAPWriter{w: w, opts: opts, chans: map[uint16]*outChannel{}, schemas: map[string]uint16{},
		nextCh: 1, nextSch: 1, stats: MCAPStats{PerTopic: map[string]uint64{}}}
	if err := w.WriteHeader(&mcap.Header{Profile: "", Library: "vrlog"}); err != nil {
		return nil, fmt.Errorf("mcapexport: write header: %w", err)
	}
	if len(opts.Metadata) > 0 {
		md := make(map[string]string, len(opts.Metadata))
		for k, v := range opts.Metadata {
			md[k] = v
		}
		if err := w.WriteMetadata(&mcap.Metadata{Name: "vrlog", Metadata: md}); err != nil {
			return nil, fmt.Errorf("mcapexport: write metadata: %w", err)
		}
	}
	return m, nil
}

// schemaFor returns the JSON Schema of a known vrlog schema name.
func schemaFor(schema string) (name, body string, ok bool) {
	switch schema {
	case codec.SchemaState:
		return codec.SchemaState, stateSchema, true
	case codec.SchemaFrame:
		return SchemaRawImage, rawImageSchema, true
	case codec.SchemaTimeReply:
		return codec.SchemaTimeReply, timeReplySchema, true
	case codec.SchemaClockProbe:
		return codec.SchemaClockProbe, clockProbeSchema, true
	case SchemaUndecodable:
		return SchemaUndecodable, undecodableSchema, true
	}
	return "", "", false
}

func (m *MCAPWriter) schemaID(name, body string) (uint16, error) {
	if id, ok := m.schemas[name]; ok {
		return id, nil
	}
	id := m.nextSch
	if err := m.w.WriteSchema(&mcap.Schema{ID: id, Name: name, Encoding: "jsonschema", Data: []byte(body)}); err != nil {
		return 0, fmt.Errorf("mcapexport: write schema %s: %w", name, err)
	}
	m.nextSch++
	m.schemas[name] = id
	return id, nil
}

func (m *MCAPWriter) newChannel(topic string, schemaID uint16, encoding string, meta map[string]string) (uint16, error) {
	if m.nextCh == 0 {
		return 0, fmt.Errorf("mcapexport: more than 65535 MCAP channels")
	}
	id := m.nextCh
	if err := m.w.WriteChannel(&mcap.Channel{ID: id, SchemaID: schemaID, Topic: topic, MessageEncoding: encoding, Metadata: meta}); err != nil {
		return 0, fmt.Errorf("mcapexport: write channel %s: %w", topic, err)
	}
	m.nextCh++
	return id, nil
}

// channelMeta is the MCAP channel metadata of a vrlog channel.
func channelMeta(c *logfmt.Channel) map[string]string {
	md := map[string]string{
		"vrlog.channel_id": strconv.Itoa(int(c.ID)),
		"vrlog.transport":  c.Transport.String(),
		"vrlog.topic":      c.Topic,
		"vrlog.schema":     c.Schema,
	}
	for k, v := range c.Meta {
		md["vrlog.meta."+k] = v
	}
	return md
}

// AddChannel declares a vrlog channel; its MCAP channel (and schema) is
// written at once, so a channel without records still appears.
func (m *MCAPWriter) AddChannel(c logfmt.Channel) error {
	if m.closed {
		return fmt.Errorf("mcapexport: writer closed")
	}
	if _, dup := m.chans[c.ID]; dup {
		return fmt.Errorf("mcapexport: channel id %d added twice", c.ID)
	}
	oc := &outChannel{src: c, topic: c.Name}
	var schemaID uint16
	encoding := ""
	if cd, ok := codec.Lookup(c.Schema); ok {
		name, body, _ := schemaFor(c.Schema)
		id, err := m.schemaID(name, body)
		if err != nil {
			return err
		}
		oc.codec, oc.kind, schemaID, encoding = cd, c.Schema, id, "json"
	}
	id, err := m.newChannel(oc.topic, schemaID, encoding, channelMeta(&c))
	if err != nil {
		return err
	}
	oc.id = id
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

func (m *MCAPWriter) message(ch uint16, topic string, seq uint32, logTime, pubTime uint64, data []byte) error {
	if err := m.w.WriteMessage(&mcap.Message{ChannelID: ch, Sequence: seq, LogTime: logTime, PublishTime: pubTime, Data: data}); err != nil {
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
	if oc.codec == nil {
		if err := m.message(oc.id, oc.topic, seq, logTime, pubTime, r.Payload); err != nil {
			return err
		}
		if len(r.Header) == 0 {
			return nil
		}
		if oc.headerID == 0 {
			md := channelMeta(&oc.src)
			md["vrlog.part"] = "header"
			id, err := m.newChannel(oc.topic+":header", 0, "", md)
			if err != nil {
				return err
			}
			oc.headerID = id
		}
		return m.message(oc.headerID, oc.topic+":header", seq, logTime, pubTime, r.Header)
	}
	buf, err := m.encode(oc, r)
	if err == nil {
		m.buf = buf
		return m.message(oc.id, oc.topic, seq, logTime, pubTime, buf)
	}
	// Keep the record: a companion channel carries its bytes and the error.
	m.stats.Undecodable++
	if oc.undecID == 0 {
		sid, serr := m.schemaID(SchemaUndecodable, undecodableSchema)
		if serr != nil {
			return serr
		}
		md := channelMeta(&oc.src)
		md["vrlog.part"] = "undecodable"
		id, cerr := m.newChannel(oc.topic+":undecodable", sid, "json", md)
		if cerr != nil {
			return cerr
		}
		oc.undecID = id
	}
	m.buf = appendUndecodableJSON(m.buf[:0], oc.kind, err, r.Header, r.Payload)
	return m.message(oc.undecID, oc.topic+":undecodable", seq, logTime, pubTime, m.buf)
}

// encode decodes r with its channel's codec and appends its JSON message.
func (m *MCAPWriter) encode(oc *outChannel, r *logfmt.Record) ([]byte, error) {
	v, err := oc.codec.Decode(r.Header, r.Payload, m.opts.EpochNs)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case codec.State:
		return AppendStateJSON(m.buf[:0], &x), nil
	case *codec.State:
		return AppendStateJSON(m.buf[:0], x), nil
	case codec.Frame:
		return AppendRawImageJSON(m.buf[:0], &x), nil
	case *codec.Frame:
		return AppendRawImageJSON(m.buf[:0], x), nil
	case codec.TimeReply:
		return appendTimeReplyJSON(m.buf[:0], &x), nil
	case codec.ClockProbe:
		return appendClockProbeJSON(m.buf[:0], &x), nil
	}
	return nil, fmt.Errorf("mcapexport: no JSON mapping for %T", v)
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
	if err := m.w.Close(); err != nil {
		return fmt.Errorf("mcapexport: %w", err)
	}
	return nil
}
