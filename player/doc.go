// Package player is replay's pacing engine: it takes records from a Source,
// schedules each at an absolute deadline on the monotonic clock, applies
// rate, loop, delay, pause, step, fault injection and restamping, and hands
// each record to a Sink at its deadline, measuring how late it was.
//
// It imports no transport: the replay command wires it to zenoh and
// iceoryx2 publishers, tests to a Sink that records call times, benchmarks
// to a no-op Sink. The Sink gets each record with the source info it was
// recorded with (Rec.SourceID, SourceSN: zenoh's publisher id and sequence
// number), so a replay can republish it.
//
// # Data flow
//
// One reader goroutine runs Source.Pass (once per loop pass) and copies
// each record into a bounded read-ahead queue: at most MaxQueueMsgs
// records, MaxQueueBytes bytes and ReadAhead of log time ahead of the
// oldest queued record, whichever binds first. Memory is bounded by those
// options, not by the log's length, and disk reads and zstd decompression
// happen off the publishing goroutine. The reader refills the queue
// continuously (not only when it runs low), so a fast replay does not
// starve (the failure of rosbag2 #1963).
//
// One publishing goroutine (the caller of Run) takes records from the
// queue in the Source's order and publishes them one at a time: there is
// one ordered stream for all channels, so a high rate cannot reorder
// channels against each other (rosbag2 #2091). Faults that move records
// in time (jitter, lag) and the capture clock, whose order is not the
// receive order, go through a small reorder heap whose horizon is the
// largest shift plus ReorderWindow; without them the heap holds one record.
//
// # Timing
//
// A record's log time (Rec.Key, e.g. the recorder's monotonic receive
// stamp) maps to a deadline on the monotonic clock through an anchor:
//
//	deadline = anchorMono + (key - anchorKey) / rate
//
// The anchor moves only when the rate changes or playback resumes, so
// deadlines are absolute: lateness of one record does not shift the next
// and no drift accumulates. The publishing goroutine waits on a Go timer
// (which commands interrupt) while the deadline is far, then sleeps with
// clock_nanosleep to the absolute time deadline - margin, then spins on
// the clock for the margin. Its thread is locked for the run, with a timer
// slack of 1 ns and, where the kernel offers it (EEVDF), a short scheduler
// slice, so that it wakes on time and preempts a busy core promptly. The
// margin tracks the 95th percentile of the fine sleep's wake-up overshoot,
// between SpinMin and SpinMax (10 µs and 250 µs by default); overshoots
// beyond SpinMax (preemption) are ignored, since no bounded spin absorbs
// them. At 1 kHz the spin costs a few percent of a core, not a whole one.
//
// The timing error of a record is the clock reading taken just before the
// Sink is called minus its deadline; it is kept per channel in a
// sampler.Histogram. Records published by a step, and every record at
// rate max, have no deadline and no error sample.
//
// # Control, lockstep and the log's clock
//
// Keys (TogglePause, Step, SetRate, ...) and control requests (Do: pause,
// resume, step N, seek, rate, stop) are commands to the publishing
// goroutine, applied between records; Do answers each once it took effect
// (control.go). A seek restarts the reader at the target through a Seeker
// source and drops what was read ahead (seek.go).
//
// Lockstep (lockstep.go) holds the stream after each record of a trigger
// channel until the controller answers or a timeout passes; an answer that
// comes after the next record was due moves the anchor to it, so the wait
// is a pause of the log's clock, never a burst of late records. An answer
// that names its trigger (Answer.Tagged: the trigger's Seq) answers only
// that one: a late answer is reported (OnLate), never paired with the next
// trigger. OnStep tells the caller how each wait ended, which is where the
// replay's bounds on missed steps are applied.
//
// LogTime (clock.go) reads the position on the log's clock at any moment,
// from the anchor the publishing goroutine copies at every schedule
// change: what a published clock for the controller needs.
package player
