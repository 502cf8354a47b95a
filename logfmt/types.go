package logfmt

import (
	"fmt"
	"time"
)

// Transport says how a channel's samples travelled to the recorder.
type Transport uint8

const (
	// TransportInternal marks channels the recorder writes itself
	// (statistics, clock-sync probes).
	TransportInternal Transport = 0
	// TransportZenoh marks zenoh key expressions.
	TransportZenoh Transport = 1
	// TransportIceoryx2 marks iceoryx2 publish-subscribe services.
	TransportIceoryx2 Transport = 2
)

func (t Transport) String() string {
	switch t {
	case TransportInternal:
		return "internal"
	case TransportZenoh:
		return "zenoh"
	case TransportIceoryx2:
		return "iceoryx2"
	}
	return fmt.Sprintf("transport(%d)", uint8(t))
}

// CompressionKind selects how a channel's payload blocks are stored.
type CompressionKind uint8

const (
	// CompressionNone stores payloads as they are (frames often do not compress).
	CompressionNone CompressionKind = 0
	// CompressionZstd compresses payload blocks with zstd.
	CompressionZstd CompressionKind = 1
	// CompressionLZ4 compresses payload blocks as one LZ4 block (format
	// 1.1): larger than zstd-1 (2.4x against 3.8x on states) but decoded
	// about three times faster, for small records read one by one.
	CompressionLZ4 CompressionKind = 2

	maxCompressionKind = CompressionLZ4
)

func (k CompressionKind) String() string {
	switch k {
	case CompressionNone:
		return "none"
	case CompressionZstd:
		return "zstd"
	case CompressionLZ4:
		return "lz4"
	}
	return fmt.Sprintf("compression(%d)", uint8(k))
}

// Compression is a channel's storage choice. Level is the
// klauspost/compress zstd EncoderLevel, 1 (fastest) to 4 (best); 0 means 1
// (lz4 has none: 0).
// The writer stores a block raw when compressing it does not make it
// smaller, whatever the channel asks.
type Compression struct {
	Kind  CompressionKind
	Level int
}

func (c Compression) String() string {
	if c.Kind == CompressionZstd {
		return fmt.Sprintf("zstd-%d", c.level())
	}
	return c.Kind.String()
}

func (c Compression) level() int {
	if c.Level <= 0 {
		return 1
	}
	return c.Level
}

func (c Compression) validate() error {
	switch c.Kind {
	case CompressionNone:
		return nil
	case CompressionZstd:
		if c.Level < 0 || c.Level > 4 {
			return fmt.Errorf("logfmt: zstd level %d out of range 1..4", c.Level)
		}
		return nil
	case CompressionLZ4:
		if c.Level != 0 {
			return fmt.Errorf("logfmt: lz4 has no level (%d)", c.Level)
		}
		return nil
	}
	return fmt.Errorf("logfmt: unknown compression kind %d", c.Kind)
}

// Channel describes one recorded stream.
type Channel struct {
	ID          uint16 // assigned by Writer.AddChannel (from 1)
	Name        string // display name, unique in a log (e.g. "vr/r1/state")
	Transport   Transport
	Topic       string // zenoh key expression or iceoryx2 service name
	Schema      string // codec schema name ("vrsdk.State/1"); "" or unknown = raw
	Compression Compression
	// Meta holds transport details needed to recreate the publisher on
	// replay (iceoryx2 type names, sizes, alignment, variant; zenoh
	// encoding). Stored sorted by key.
	Meta map[string]string
}

// Channel meta keys the recorder sets about its own recording of a channel
// (docs/log-format.md, section 5).
const (
	// MetaError says why the recorder could not record the channel (e.g. an
	// iceoryx2 service whose subscriber slots were all taken): the channel
	// matched the recording's selection but has no records.
	MetaError = "vrlog.error"
	// MetaWarning says what limited the recording of the channel (e.g. a
	// subscriber buffer smaller than the recorder asked for).
	MetaWarning = "vrlog.warning"
	// MetaTrigger marks a channel of a response log (replay --capture)
	// that holds the records the replay released to the controller, stamped
	// when released; the log's other data channels are the controller's
	// responses, and analyze measures the reaction from one to the other.
	MetaTrigger = "vrlog.trigger"
)

// MetaRecoveredFrom is header metadata of a log that is the verified copy
// of another its recorder never finished (a crash, kill -9, power loss):
// the unfinished log's file name. A recorder serving its files over zenoh
// (filexfer) recovers such a log on its host and marks the copy so; merge
// and analyze say which host's log it was.
const MetaRecoveredFrom = "vrlog.recovered_from"

// MaxPublisherID is the largest Record.PublisherID the writer accepts.
const MaxPublisherID = 64

// Record is one received sample.
//
// The writer copies what it needs; the caller may reuse the buffers after
// Write returns. Slices in a Record returned by an Iterator point into the
// iterator's buffers and are valid until the next call to Next.
type Record struct {
	Channel     uint16
	RecvWallNs  int64  // recorder's receive stamp, CLOCK_REALTIME unix ns
	RecvMonoNs  int64  // recorder's receive stamp, CLOCK_MONOTONIC ns
	CaptureNs   int64  // simulator capture t_ns (valid if HasStamp)
	Seq         uint64 // simulator per-topic seq (valid if HasStamp)
	HasStamp    bool
	HasPubSN    bool   // PublisherSN is known
	PublisherID []byte // opaque publisher identity, at most MaxPublisherID bytes, may be nil
	PublisherSN uint64 // zenoh source sequence number (valid if HasPubSN)
	Header      []byte // iceoryx2 user header / zenoh attachment; nil if none
	Payload     []byte

	// HeaderLen and PayloadLen are set by the reader (also in MetaOnly
	// mode, where Header and Payload are nil). The writer ignores them.
	HeaderLen  int
	PayloadLen int
}

// Header is the file-level information written when the log is created.
type Header struct {
	VersionMajor  uint16
	VersionMinor  uint16
	CreatedWallNs int64             // creation time, unix ns
	Metadata      map[string]string // note, host, tool version, ...
}

// Created returns the creation time.
func (h Header) Created() time.Time { return time.Unix(0, h.CreatedWallNs) }

// ChunkChannel is one channel's share of a chunk.
type ChunkChannel struct {
	Channel     uint16
	Records     uint32
	RawBytes    uint32 // header + payload bytes before compression
	StoredBytes uint32 // payload block size in the file
}

// ChunkInfo describes one chunk, from the footer index or a linear scan.
type ChunkInfo struct {
	Offset    int64 // byte offset of the chunk's block header
	MetaLen   uint32
	DataLen   uint32
	Records   uint32
	Sorted    bool  // records inside are in non-decreasing RecvMonoNs order
	MinMonoNs int64 // RecvMonoNs range of the records
	MaxMonoNs int64
	MinWallNs int64 // RecvWallNs range of the records
	MaxWallNs int64
	Channels  []ChunkChannel
}

// Size returns the chunk's total size in the file.
func (c ChunkInfo) Size() int64 { return blockHeaderSize + int64(c.MetaLen) + int64(c.DataLen) }

// ChannelStats summarizes one channel over the whole log.
type ChannelStats struct {
	Channel        uint16
	Records        uint64
	RawBytes       uint64 // header + payload bytes
	StoredBytes    uint64 // payload block bytes in the file
	Drops          uint64 // recorder-side drops (Writer.AddDrops)
	FirstMonoNs    int64  // RecvMonoNs of the first record (file order)
	LastMonoNs     int64
	FirstWallNs    int64
	LastWallNs     int64
	HasCapture     bool // some record carried a capture stamp
	FirstCaptureNs int64
	LastCaptureNs  int64
}

// WriterStats counts what a Writer has done.
type WriterStats struct {
	Records      uint64 // records accepted by Write
	Chunks       uint64 // chunks written to the file
	RawBytes     uint64 // header + payload bytes accepted
	BytesWritten int64  // bytes written to the file
	Drops        uint64 // sum of AddDrops
	Syncs        uint64 // fdatasync calls
}
