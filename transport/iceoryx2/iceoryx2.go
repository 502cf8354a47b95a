// Package iceoryx2 is vrlog's iceoryx2 (shared-memory) transport: a node,
// the list of publish-subscribe services with their static details,
// subscribers to services whose payload type is not known at compile time,
// and publishers that create or open a service with given type details.
//
// It calls the official Rust iceoryx2 crate (0.10.0, the exact version of the
// Python wheel: the shared-memory layout must match) through the static
// library built from native/, linked with cgo. Without cgo every constructor
// returns ErrUnavailable.
//
// Receiving: a native polling thread per subscriber takes each sample,
// stamps it (CLOCK_REALTIME, CLOCK_MONOTONIC: see transport/clock), copies
// user header and payload out of shared memory once into a slot of the
// subscriber's memory, releases the sample at once and queues the slot;
// Subscriber.Receive hands many queued samples out per cgo call, copied
// into Go memory or lent (SubscriberOptions.Lend). No free slot drops the
// sample and counts it (Subscriber.Dropped). Samples the publisher
// overwrote in iceoryx2's own subscriber buffer (safe overflow) before the
// poller saw them are invisible to the subscriber, which iceoryx2 0.10
// does not tell; Sample.Drain and DrainIndex say where one may have been
// lost, so that a caller that knows the payload's seq can count it.
package iceoryx2

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Sentinel errors; match with errors.Is.
var (
	// ErrUnavailable: the binary was built without cgo.
	ErrUnavailable = errors.New("iceoryx2: built without cgo: the native transport library is not linked; build with `make build`")
	// ErrClosed: the node, subscriber or publisher was closed.
	ErrClosed = errors.New("iceoryx2: closed")
	// ErrServiceNotFound: no publish-subscribe service of that name exists.
	ErrServiceNotFound = errors.New("iceoryx2: service not found")
	// ErrIncompatible: the service exists with other types or settings.
	ErrIncompatible = errors.New("iceoryx2: incompatible service")
	// ErrInvalid: a bad name, type detail or argument.
	ErrInvalid = errors.New("iceoryx2: invalid argument")
	// ErrNative: the native library reported a failure (see the message).
	ErrNative = errors.New("iceoryx2: native error")
)

// TypeVariant tells a fixed-size type from a dynamic slice.
type TypeVariant int

const (
	// FixedSize: the payload is exactly one value of Size bytes.
	FixedSize TypeVariant = iota
	// Dynamic: the payload is a slice of Size-byte elements (e.g. u8 pixels).
	Dynamic
)

func (v TypeVariant) String() string {
	switch v {
	case FixedSize:
		return "fixed"
	case Dynamic:
		return "dynamic"
	}
	return fmt.Sprintf("TypeVariant(%d)", int(v))
}

// ParseTypeVariant parses "fixed" or "dynamic".
func ParseTypeVariant(s string) (TypeVariant, error) {
	switch s {
	case "fixed":
		return FixedSize, nil
	case "dynamic":
		return Dynamic, nil
	}
	return 0, fmt.Errorf("iceoryx2: type variant %q: want fixed or dynamic: %w", s, ErrInvalid)
}

// TypeDetail is iceoryx2's description of a payload or user-header type.
type TypeDetail struct {
	Variant   TypeVariant
	TypeName  string // e.g. "u8", "vrsdk::FrameHeader", "()" for no user header
	Size      uint64 // bytes of one value (of one element for Dynamic)
	Alignment uint64
}

// TypeDetails are the types of a publish-subscribe service: what a
// subscriber needs to open it and a publisher needs to recreate it.
type TypeDetails struct {
	Payload    TypeDetail
	UserHeader TypeDetail
}

// NoUserHeader is the user-header type of services without one.
var NoUserHeader = TypeDetail{Variant: FixedSize, TypeName: "()", Size: 0, Alignment: 1}

// Meta keys used by TypeDetails.ToMeta and ServiceConfig.ToMeta (the log
// format stores a channel's transport details as a string map):
//
//	iox2.payload.variant       "fixed" | "dynamic"
//	iox2.payload.type_name     iceoryx2 type name, e.g. "u8"
//	iox2.payload.size          decimal bytes (of one element if dynamic)
//	iox2.payload.alignment     decimal bytes
//	iox2.user_header.variant   "fixed"
//	iox2.user_header.type_name e.g. "vrsdk::FrameHeader" or "()"
//	iox2.user_header.size      decimal bytes
//	iox2.user_header.alignment decimal bytes
//	iox2.max_publishers, iox2.max_subscribers, iox2.max_nodes,
//	iox2.history_size, iox2.subscriber_max_buffer_size,
//	iox2.subscriber_max_borrowed_samples   decimal (ServiceConfig, optional)
//	iox2.safe_overflow         "true" | "false" (ServiceConfig, optional)
const MetaPrefix = "iox2."

func (t TypeDetail) put(m map[string]string, part string) {
	m[MetaPrefix+part+".variant"] = t.Variant.String()
	m[MetaPrefix+part+".type_name"] = t.TypeName
	m[MetaPrefix+part+".size"] = strconv.FormatUint(t.Size, 10)
	m[MetaPrefix+part+".alignment"] = strconv.FormatUint(t.Alignment, 10)
}

func getTypeDetail(m map[string]string, part string) (TypeDetail, error) {
	var t TypeDetail
	get := func(k string) (string, error) {
		v, ok := m[MetaPrefix+part+"."+k]
		if !ok {
			return "", fmt.Errorf("iceoryx2: meta: missing %s%s.%s: %w", MetaPrefix, part, k, ErrInvalid)
		}
		return v, nil
	}
	v, err := get("variant")
	if err != nil {
		return t, err
	}
	if t.Variant, err = ParseTypeVariant(v); err != nil {
		return t, err
	}
	if t.TypeName, err = get("type_name"); err != nil {
		return t, err
	}
	for _, f := range []struct {
		k   string
		dst *uint64
	}{{"size", &t.Size}, {"alignment", &t.Alignment}} {
		s, err := get(f.k)
		if err != nil {
			return t, err
		}
		if *f.dst, err = strconv.ParseUint(s, 10, 64); err != nil {
			return t, fmt.Errorf("iceoryx2: meta: %s%s.%s=%q: %w", MetaPrefix, part, f.k, s, ErrInvalid)
		}
	}
	if t.Alignment == 0 || t.Alignment&(t.Alignment-1) != 0 {
		return t, fmt.Errorf("iceoryx2: meta: %s%s.alignment %d is not a power of two: %w", MetaPrefix, part, t.Alignment, ErrInvalid)
	}
	return t, nil
}

// ToMeta renders the type details as string-map entries (keys above).
func (t TypeDetails) ToMeta() map[string]string {
	m := make(map[string]string, 8)
	t.Payload.put(m, "payload")
	t.UserHeader.put(m, "user_header")
	return m
}

// TypeDetailsFromMeta parses what ToMeta wrote (other keys are ignored).
func TypeDetailsFromMeta(m map[string]string) (TypeDetails, error) {
	var t TypeDetails
	var err error
	if t.Payload, err = getTypeDetail(m, "payload"); err != nil {
		return t, err
	}
	if t.UserHeader, err = getTypeDetail(m, "user_header"); err != nil {
		return t, err
	}
	return t, nil
}

// ServiceConfig holds a service's static settings. Zero fields (nil for
// SafeOverflow) are unspecified: when creating, iceoryx2's defaults apply;
// when opening, any existing value is accepted (a set value is a minimum
// the existing service must meet).
type ServiceConfig struct {
	MaxPublishers                int
	MaxSubscribers               int
	MaxNodes                     int
	HistorySize                  int
	SubscriberMaxBufferSize      int
	SubscriberMaxBorrowedSamples int
	SafeOverflow                 *bool
}

func (c ServiceConfig) fields() []struct {
	k string
	v *int
} {
	return []struct {
		k string
		v *int
	}{
		{"max_publishers", &c.MaxPublishers}, {"max_subscribers", &c.MaxSubscribers},
		{"max_nodes", &c.MaxNodes}, {"history_size", &c.HistorySize},
		{"subscriber_max_buffer_size", &c.SubscriberMaxBufferSize},
		{"subscriber_max_borrowed_samples", &c.SubscriberMaxBorrowedSamples},
	}
}

// ToMeta renders the set fields as string-map entries (keys above).
func (c ServiceConfig) ToMeta() map[string]string {
	m := map[string]string{}
	for _, f := range c.fields() {
		if *f.v != 0 {
			m[MetaPrefix+f.k] = strconv.Itoa(*f.v)
		}
	}
	if c.SafeOverflow != nil {
		m[MetaPrefix+"safe_overflow"] = strconv.FormatBool(*c.SafeOverflow)
	}
	return m
}

// ServiceConfigFromMeta parses what ServiceConfig.ToMeta wrote; absent keys stay unspecified.
func ServiceConfigFromMeta(m map[string]string) (ServiceConfig, error) {
	var c ServiceConfig
	vals := map[string]*int{
		"max_publishers": &c.MaxPublishers, "max_subscribers": &c.MaxSubscribers,
		"max_nodes": &c.MaxNodes, "history_size": &c.HistorySize,
		"subscriber_max_buffer_size":      &c.SubscriberMaxBufferSize,
		"subscriber_max_borrowed_samples": &c.SubscriberMaxBorrowedSamples,
	}
	for k, dst := range vals {
		if s, ok := m[MetaPrefix+k]; ok {
			v, err := strconv.Atoi(s)
			if err != nil || v < 0 {
				return c, fmt.Errorf("iceoryx2: meta: %s%s=%q: %w", MetaPrefix, k, s, ErrInvalid)
			}
			*dst = v
		}
	}
	if s, ok := m[MetaPrefix+"safe_overflow"]; ok {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return c, fmt.Errorf("iceoryx2: meta: %ssafe_overflow=%q: %w", MetaPrefix, s, ErrInvalid)
		}
		c.SafeOverflow = &b
	}
	return c, nil
}

// ServiceInfo describes an existing publish-subscribe service.
type ServiceInfo struct {
	Name   string
	Types  TypeDetails
	Config ServiceConfig // every field set, SafeOverflow non-nil
}

// Sample is one received sample: in Go memory, or (SubscriberOptions.Lend)
// in the subscriber's own memory until Subscriber.Release.
type Sample struct {
	UserHeader  []byte
	Payload     []byte
	PublisherID []byte // 16 bytes: the UniquePublisherId, u128 little-endian
	// RecvWallNs (CLOCK_REALTIME) and RecvMonoNs (CLOCK_MONOTONIC) were taken
	// by the native polling thread when it took the sample.
	RecvWallNs int64
	RecvMonoNs int64
	// Drain numbers the polling thread's drains (runs of receives from a
	// first sample until the buffer is empty); DrainIndex is the sample's
	// 1-based position among its drain's samples of the same publisher.
	// iceoryx2's safe overflow replaces the oldest sample of a full buffer
	// without telling the subscriber; a replaced sample can only be
	// missing before a sample from whose position on its drain took at
	// least BufferSize samples of that publisher (the buffer was full
	// then). A gap elsewhere was never in the buffer: a publisher skip.
	Drain      uint64
	DrainIndex uint32
	// DroppedBefore counts the samples of the same publisher dropped
	// (counted in Dropped) since the previous one delivered: that much of
	// a seq gap before this sample is the subscriber's own loss, counted.
	DroppedBefore uint32
	// PrevDrainLen is set on the first sample of a publisher after the
	// drain of its previous delivered sample: how many of that publisher's
	// samples that drain took in all, dropped ones included (the previous
	// sample's DrainIndex may not be the last). Subscriber.DrainLen tells it
	// for a stream's last drain.
	PrevDrainLen uint32
	// AfterHold: the subscriber held (SetHold, no free slot) since the
	// publisher's previous delivered sample, leaving samples in the
	// service's buffer, where safe overflow replaces the oldest: a seq gap
	// before this sample is that loss.
	AfterHold bool
	slot      uint32 // lent: its slot + 1; 0: Go memory
}

// SubscriberOptions configure a subscriber.
type SubscriberOptions struct {
	// BufferSize is iceoryx2's per-subscriber buffer: how many samples per
	// publisher wait for the polling thread. 0, or more than the service's
	// subscriber_max_buffer_size allows (iceoryx2's default service allows
	// 2), gives the service's maximum; Subscriber.BufferSize says which.
	BufferSize int
	// QueueLen and QueueBytes bound the samples the subscriber holds:
	// copied out of shared memory and waiting for Receive, or lent (default
	// 16 samples, 512 MiB). Its memory is slots, each kept once made and
	// reused for every sample that fits. No free slot: the sample is
	// dropped and counted (Subscriber.Dropped).
	QueueLen   int
	QueueBytes int
	// PollInterval is how long the polling thread sleeps when the service has
	// nothing new (default 200 µs): the resolution of the receive stamps.
	PollInterval time.Duration
	// MaxBatch is the most samples one Receive returns (default 64).
	MaxBatch int
	// Lend makes Receive return samples in the subscriber's memory (copied
	// once, out of shared memory, into a reused slot) instead of a fresh Go
	// allocation each: a recorder of camera frames then neither allocates
	// nor copies again. A lent sample holds its slot until
	// Subscriber.Release; one that is never released stops the subscriber
	// once QueueLen or QueueBytes is reached.
	Lend bool
}

func (o SubscriberOptions) withDefaults() SubscriberOptions {
	if o.QueueLen <= 0 {
		o.QueueLen = 16
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 512 << 20
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 200 * time.Microsecond
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 64
	}
	return o
}

// AllocationStrategy says how a dynamic publisher grows its shared memory
// when a sample exceeds InitialMaxSliceLen.
type AllocationStrategy int

const (
	PowerOfTwo AllocationStrategy = iota // grow to the next power of two (default)
	BestFit                              // grow to exactly what is needed
	Static                               // never grow: larger samples fail
)

// PublisherOptions configure a publisher.
type PublisherOptions struct {
	// Service settings used when the service is created (minimums when opened).
	Service ServiceConfig
	// InitialMaxSliceLen is the initial maximum payload, in elements, for
	// Dynamic payloads (default 4096; e.g. 6<<20 for 6 MB u8 frames).
	InitialMaxSliceLen int
	AllocationStrategy AllocationStrategy
	// MaxLoanedSamples (0 = iceoryx2's default).
	MaxLoanedSamples int
	// Backpressure is what Send does when a subscriber's buffer is full on
	// a service without safe overflow (ServiceConfig.SafeOverflow false):
	// iceoryx2's default, wait until it has room (Send blocks), or skip it.
	// On a service with safe overflow the oldest sample is overwritten
	// whatever this says, and the publisher is not told.
	Backpressure Backpressure
}

// Backpressure is a publisher's strategy for a subscriber whose buffer is
// full (PublisherOptions.Backpressure).
type Backpressure int

const (
	BackpressureDefault Backpressure = iota // iceoryx2's default
	BackpressureBlock                       // retry until delivered: Send waits for the subscriber
	BackpressureDiscard                     // skip that subscriber
)
