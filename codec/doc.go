// Package codec encodes and decodes the simulator's samples (the vrsdk wire
// format, version 1, specified byte by byte in docs/wire-format.md): State
// over zenoh, Frame header (iceoryx2 user header) plus pixel payload over
// iceoryx2, and the small clock-sync messages.
//
// Decoders are strict, bounds-checked and allocation-free on the hot path:
// they never read past the buffer, never allocate from a length they have not
// checked against the buffer, and report the field and byte offset of the
// first problem as a *DecodeError.
//
// The package also holds what every consumer of stamps needs: time
// conversions in integer arithmetic (unix ns, seconds, Universal Time Scale
// ticks, RFC 3339), sequence-number steps (skips, duplicates, restarts), and
// a registry that maps a log channel's schema name to its codec so channels
// with unknown schemas can be carried raw.
//
// codec imports nothing of vrlog's: it is a leaf every other package may use.
package codec
