// Package recorder subscribes to zenoh key expressions and iceoryx2
// services and writes every sample, raw, with the recorder's receive stamps
// and the capture stamps the codec can decode, into a .vrlog log; it probes
// the simulator's time service for clock offset, counts its own drops per
// channel, rotates files by size or duration, and finishes the log cleanly
// when its context ends.
//
// iceoryx2 services are opened with whatever settings they were created
// with: the subscriber buffer adapts to the service's limit (a warning in
// the channel meta when that is small), and a service that matches the
// selection but cannot be opened becomes a channel error in the log
// (logfmt.MetaError) and in the status, never a silent omission.
//
// Data flows one way: transport receivers (one goroutine per subscription,
// draining the native queues in batches) → two bounded lanes, small records
// (states) and bulk ones (frames), the small served first so that they
// never wait behind a backlog of frames (lanes) → one writer goroutine, the
// only owner of the log and of the per-channel bookkeeping.
//
// Memory and loss accounting: each subscription holds at most
// Config.QueueBytes of samples received and not yet written. An iceoryx2
// frame is copied once out of shared memory into a slot of its subscriber
// (iceoryx2.SubscriberOptions.Lend), written from there (uncompressed: with
// no further copy, logfmt.Writer.WriteOwned) and its slot handed back once
// it is in the file; a zenoh sample waits in the native queue (half the
// bound) and then in a byte budget on its way to the writer (the other
// half). With no room left, a new sample is dropped and counted, never
// queued without bound. A recorder drop is, exactly:
//
//   - a sample the transport took and dropped for want of room (native
//     queue or slots full: Subscriber.Dropped), booked on the channel that
//     received last on that subscription;
//   - a frame iceoryx2's safe overflow replaced in the subscriber's buffer
//     before the subscriber took it (see overflow): iceoryx2 counts these
//     nowhere, so the recorder infers them from the frames' seq and where
//     the subscriber's drains found the buffer full. Only channels whose
//     payloads carry a seq (vrsdk frames) can be counted; a raw iceoryx2
//     channel's overwritten samples are not. A publisher skip that falls
//     right before a full buffer is counted as a drop (never the reverse).
//
// So, per channel, the seqs missing from the log minus the recorder drops
// are the seqs the publisher skipped. When the recording ends, what the
// subscriptions had received by then is still written (pump), and so are
// the frames a held subscription had left in the service's buffer, for at
// most Config.DrainTimeout: what is still queued then is dropped and
// counted as recorder drops too (writeloop). What else arrives after the
// end is not part of the recording.
package recorder
