// Package sampler does the per-stream bookkeeping of timing analysis: from
// each sample's seq, capture t_ns, receive stamps and publisher identity it
// derives intervals, skipped samples, publisher restarts, outages,
// duplicates, out-of-order arrivals, rates and latency; it pairs camera
// frames with robot states by capture time; and it estimates the clock offset
// between recorder and simulator from clock-sync probes.
//
// The same code serves record's live status line and the offline analyzer.
// Memory per stream is bounded (fixed-size histograms, capped event lists) so
// a stream of any length costs the same.
//
// sampler imports nothing of vrlog's.
package sampler
