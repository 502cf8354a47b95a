package recorder

import "github.com/vrlog/vrlog/logfmt"

// sample is what every source emits: one record it received, the channel
// it belongs to, and what its transport tells about the records lost
// around it, for the books (books.go).
type sample struct {
	name      string
	transport logfmt.Transport
	topic     string
	meta      map[string]string // channel meta, read on the channel's first record
	schema    string            // a schema known from the transport (iceoryx2 type names), or ""
	sub       *subInfo          // the subscription, for loss accounting; nil for the recorder's own records
	rec       logfmt.Record
	release   func() // hands rec's memory back once written; may be nil
	// iceoryx2: where the subscriber took the sample (iceoryx2.Sample.Drain)
	drain         uint64
	drainIndex    uint32
	droppedBefore uint32
	prevDrainLen  uint32
	afterHold     bool
	// zenoh: the subscription's drop count around the sample (lostBefore)
	drops dropSpan
	// zenoh: the sample's timestamp (unix ns), if it has one
	zenohNs    int64
	hasZenohTs bool
	// the last sample of a batch: its subscription's queue drop count
	// (Subscriber.Dropped) read once the batch was received, so the drops
	// are booked where they happened (after the batch), not where the
	// writer happens to be when it reads the counter (books.queueDrops)
	dropsAfter uint64
}

// dropSpan bounds a zenoh subscription's drop count (Subscriber.Dropped)
// around a sample of a batch: lo was read before the previous batch was
// received, hi after this one was. A sample the native queue dropped for
// want of room after a record a of the channel and before its record b
// was counted after lo of a's batch and before hi of b's.
type dropSpan struct{ lo, hi uint64 }

// failure is the event of a channel that matched the selection but could
// not be opened (meta holds logfmt.MetaError), or, with a warning only and
// a name the log does not know, a transient failure (the service list).
type failure struct {
	name, topic, schema string
	transport           logfmt.Transport
	meta                map[string]string
}

// streamEnd is the event of a subscription's stream ending: its
// publishers' last drains (Subscriber.DrainLen), for the overflow count.
type streamEnd struct {
	name   string // the subscription's channel (its lane)
	sub    *subInfo
	drains map[string]drainEnd
}

type drainEnd struct {
	drain uint64
	n     uint32
}

// batch is what a source hands the lanes: samples in receive order, or
// one event.
type batch struct {
	samples []sample
	failed  *failure
	end     *streamEnd
}

// subInfo is one subscription, for drop accounting.
type subInfo struct {
	name    string
	dropped func() uint64
	seen    uint64 // drops already booked
	last    string // channel that received most recently
	// iceoryx2: the subscriber buffer (samples per publisher) and the seq
	// gaps it may have overwritten, per channel (writer goroutine only)
	buffer   int
	overflow map[string]*overflow
	// zenoh: the bytes on their way to the writer
	budget *budget
}
