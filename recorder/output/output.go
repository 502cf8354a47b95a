// Package output is the last stage of a recorder's pipeline: where the
// accounted stream goes. The recorder's writer stage is the only caller of
// an Output, on one goroutine, in stream order: every channel is defined
// before its first record, records come in the order the writer decided
// (docs/recorder.md), drops where they happened.
//
// Two outputs implement it: recorder/files (numbered log files: rotation,
// splits, start and stop) and recorder/snapshot (chunks kept in memory,
// written out when triggered). The interface is over accounted records,
// not over sealed chunks: each output chunks them with the logfmt writer
// it needs (a file writer that hands large frames to the disk without a
// copy and writes small records' chunks ahead of frames' still being
// compressed, or a memory writer whose sealed chunks the snapshot ring
// keeps), so that neither pays for the other's.
package output

import "github.com/vrlog/vrlog/logfmt"

// Entry is one accounted record on its way to an output.
type Entry struct {
	// Record's Channel is the channel's number in the order the output's
	// Define calls named them, from 1 (the output maps it to a file's
	// id); its stamps are final. The record is the output's once written.
	Record *logfmt.Record
	// Release, if not nil, hands the record's memory back to the
	// transport; the output calls it exactly once, when the payload is no
	// longer needed (logfmt.Writer.WriteOwned).
	Release func()
	// Undecided is the receive stamp of the earliest sequence gap the
	// recorder has not decided yet as its own loss or the publisher's
	// skip (it knows a drain later), 0 if none: a snapshot window waits
	// for it, so that a loss is counted in the window it lies in.
	Undecided int64
}

// Output takes a recording's accounted stream.
type Output interface {
	// Define names the next channel (numbered from 1 in call order).
	Define(c *logfmt.Channel) error
	// Write writes one record.
	Write(e Entry) error
	// Drops counts n records of channel lost by the recorder before they
	// reached the output, at atMono (a receive stamp; 0: now).
	Drops(channel uint16, n uint64, atMono int64)
	// Seal starts a new chunk: records far apart in time follow. ahead:
	// the open chunk holds a few small records that must not wait behind
	// large chunks being compressed (logfmt.Writer.SealAhead).
	Seal(ahead bool) error
	// Busy reports that a large record would now wait inside the output
	// for earlier chunks' compression: the writer stage does other work
	// first (logfmt.Writer.WouldBlock).
	Busy() bool
	// Tick is called about once a second with what Entry.Undecided would
	// say now.
	Tick(undecided int64) error
	// Progress is what the output has written so far. It may be called
	// from any goroutine.
	Progress() Progress
	// Close finishes everything the output writes; the first failure is
	// its error.
	Close() error
}

// Progress is what an output has written so far.
type Progress struct {
	Files        []string // the files written, the current one last
	BytesWritten int64    // in every file
	RawBytes     uint64   // records' bytes in the current file, before compression
	Records      uint64   // in the current file
}
