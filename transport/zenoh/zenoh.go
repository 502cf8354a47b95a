// Package zenoh is vrlog's zenoh transport: sessions, subscribers that hand
// samples to Go in batches, publishers, queryables, get, and liveliness.
//
// It calls the official Rust zenoh crate (1.10.2) through the static library
// built from native/ (`make native`), linked into the binary with cgo, so no
// LD_LIBRARY_PATH is needed. Built without cgo, every constructor returns
// ErrUnavailable and the rest of the tree still builds.
//
// Receiving: a zenoh callback thread copies each sample (key, payload,
// attachment, encoding, timestamp, source info) and stamps it with
// CLOCK_REALTIME and CLOCK_MONOTONIC (see transport/clock) into a bounded
// native queue; Subscriber.Receive drains many samples per cgo call into Go
// memory. When the queue is full the sample is dropped and counted
// (Subscriber.Dropped).
//
// Discovering publishers: zenoh has no API that lists publishers. LivePublishers
// combines liveliness tokens (vrlog's publishers and the peers declare one on
// their key) with the keys of the samples seen during a listening window.
package zenoh

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors; match with errors.Is.
var (
	// ErrUnavailable: the binary was built without cgo.
	ErrUnavailable = errors.New("zenoh: built without cgo: the native transport library is not linked; build with `make build`")
	// ErrClosed: the session, subscriber, publisher or queryable was closed.
	ErrClosed = errors.New("zenoh: closed")
	// ErrInvalid: a bad configuration, endpoint, key expression or argument.
	ErrInvalid = errors.New("zenoh: invalid argument")
	// ErrNative: the native library reported a failure (see the message).
	ErrNative = errors.New("zenoh: native error")
)

// Mode is the zenoh session mode.
type Mode string

const (
	ModeDefault Mode = ""       // zenoh's default (peer) or the config file's
	ModePeer    Mode = "peer"   // peer-to-peer
	ModeClient  Mode = "client" // through a router
)

// Config opens a session. Fields left zero keep zenoh's default or the
// config file's value; set fields override the file.
type Config struct {
	// ConfigFile is a zenoh JSON5 configuration file (optional).
	ConfigFile string
	Mode       Mode
	// Connect and Listen are zenoh endpoints, e.g. "tcp/127.0.0.1:7447".
	Connect []string
	Listen  []string
	// Timestamping makes the session add an HLC timestamp to what it publishes.
	Timestamping bool
	// DisableMulticastScouting turns off UDP multicast discovery (tests and
	// loopback-only set-ups; endpoints must then be given explicitly).
	DisableMulticastScouting bool
	// ConnectTimeout, when > 0, makes Open fail if no Connect endpoint can be
	// reached within it (zenoh's connect/timeout_ms + exit_on_failure); by
	// default a peer keeps retrying in the background.
	ConnectTimeout time.Duration
	// Options are raw overrides, zenoh config path -> JSON5 value, e.g.
	// {"transport/shared_memory/enabled": "false"}, applied last.
	Options map[string]string
}

// Connections are the zenoh ids of the routers and peers a session is
// connected to (Session.Connected).
type Connections struct {
	Routers []string
	Peers   []string
}

// SampleKind tells a put from a delete.
type SampleKind uint8

const (
	KindPut SampleKind = iota
	KindDelete
)

// Timestamp is a zenoh HLC timestamp: NTP64 time (upper 32 bits seconds since
// the Unix epoch, lower 32 bits fraction) and the HLC id of its source.
type Timestamp struct {
	NTP64 uint64
	ID    []byte
}

// UnixNano converts the NTP64 time to Unix nanoseconds.
func (t Timestamp) UnixNano() int64 {
	sec := int64(t.NTP64 >> 32)
	frac := t.NTP64 & 0xffffffff
	return sec*1e9 + int64((frac*1e9)>>32)
}

// Time converts the NTP64 time to a time.Time.
func (t Timestamp) Time() time.Time { return time.Unix(0, t.UnixNano()) }

// Sample is one received sample, in Go-owned memory.
type Sample struct {
	Key      string
	Payload  []byte
	Encoding string
	Kind     SampleKind
	// Timestamp is valid when HasTimestamp (the publisher's session had
	// timestamping on, or a router added it).
	Timestamp    Timestamp
	HasTimestamp bool
	// SourceID (publisher's zenoh id bytes, then its entity id as 4 bytes
	// little-endian) and SourceSN are set when the publisher attached source
	// info (HasSource); plain zenoh puts do not.
	SourceID  []byte
	SourceSN  uint64
	HasSource bool
	// Attachment is nil when the sample has none.
	Attachment []byte
	// RecvWallNs (CLOCK_REALTIME) and RecvMonoNs (CLOCK_MONOTONIC) were taken
	// in the native callback as the sample arrived.
	RecvWallNs int64
	RecvMonoNs int64
}

// SubscriberOptions bound the native queue between zenoh's threads and Go.
type SubscriberOptions struct {
	// QueueLen is the most samples held (default 65536).
	QueueLen int
	// QueueBytes is the most payload bytes held (default 256 MiB).
	QueueBytes int
	// MaxBatch is the most samples one Receive returns (default 1024).
	MaxBatch int
}

func (o SubscriberOptions) withDefaults() SubscriberOptions {
	if o.QueueLen <= 0 {
		o.QueueLen = 65536
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 256 << 20
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 1024
	}
	return o
}

// PublisherOptions configure a publisher.
type PublisherOptions struct {
	// Encoding, e.g. "application/octet-stream" or "zenoh/bytes" (default).
	Encoding string
	// Block makes Put wait when the network is congested instead of dropping.
	Block bool
	// Express sends without batching.
	Express bool
	// Priority 1 (highest) .. 7 (lowest); 0 = zenoh's default (5, data).
	Priority int
	// SourceInfo attaches the publisher id and a sequence number to each put.
	SourceInfo bool
	// Liveliness declares a liveliness token on the publisher's key, so that
	// LivePublishers finds it.
	Liveliness bool
}

// splitSourceID splits a Sample.SourceID into the zenoh id and the entity id.
func splitSourceID(id []byte) (zid []byte, eid uint32, err error) {
	if len(id) < 5 || len(id) > 20 {
		return nil, 0, fmt.Errorf("zenoh: source id of %d bytes: want a zenoh id of 1..16 bytes and a 4-byte entity id: %w", len(id), ErrInvalid)
	}
	n := len(id) - 4
	return id[:n], binary.LittleEndian.Uint32(id[n:]), nil
}

// Query is a query received by a queryable.
type Query struct {
	Key        string
	Parameters string
	Payload    []byte
	HasPayload bool
	RecvWallNs int64
	RecvMonoNs int64
}

// Reply answers a query. Key "" replies on the query's key expression.
type Reply struct {
	Key        string
	Payload    []byte
	Encoding   string
	Attachment []byte
	// Err sends an error reply (Payload is the error's body).
	Err bool
}

// GetReply is one reply to Get: a sample, or an error reply when Err.
type GetReply struct {
	Sample
	Err bool
}

// Named is err said as zenoh's: prefixed "zenoh: " unless the native
// library's message says so already ("zenoh: open session: ...").
func Named(err error) error {
	if err == nil || strings.HasPrefix(err.Error(), "zenoh") {
		return err
	}
	return fmt.Errorf("zenoh: %w", err)
}
