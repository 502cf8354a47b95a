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
// draining the native queues in batches) → one bounded channel → one writer
// goroutine, the only owner of the log and of the per-channel bookkeeping.
package recorder
