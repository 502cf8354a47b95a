// Package logfmt reads and writes vrlog's on-disk log format: a sequence of
// CRC-protected blocks (header, channel definitions, chunks, drop statistics)
// closed by a footer that indexes every chunk.
//
// Each chunk keeps record metadata (receive stamps, capture stamp, seq,
// publisher identity, sizes) in a small compressed section apart from the
// payloads, which are stored in one block per channel, zstd-compressed or
// raw as the channel asks. A timing scan reads and decompresses only the
// metadata sections; payload bytes of a frame-heavy log are never read.
// Such a scan can take the metadata in batches, one column per field
// (Iterator.NextBatch), instead of a Record at a time: the same records
// and errors, without a copy of each in between.
//
// The Writer compresses chunks on all cores with a bounded number in
// flight. Write copies a record; WriteOwned takes over a large payload of
// an uncompressed channel (a camera frame) and writes it to the file from
// the caller's buffer, handing the buffer back through a callback.
//
// A file cut at any byte (kill -9, power loss, full disk) is readable up to
// its last complete chunk: Open falls back to a linear scan when the footer
// is missing or damaged, and Recover writes a repaired, re-verified copy. A
// torn tail (also the zero-filled last chunk a power loss leaves) is told
// apart from corruption in the middle of the file; the latter is reported
// as a *CorruptionError naming the file and byte offset. Damage that costs
// no record (prelude, header block, footer, trailer) is read around and
// reported by Reader.Warnings. Every length read from a file, decompressed
// sizes included, is checked against a limit before anything is allocated.
//
// Reading by channel pattern and time window (Select, Read), merging logs
// (Merge) and copying a selection or several logs into a new one (Copy,
// MergeCopy) are the library's, so every tool selects, merges and cuts
// the same way.
//
// The byte layout is specified in docs/log-format.md. The package imports
// nothing of vrlog's but keyexpr (the channel-pattern grammar) and builds
// with CGO_ENABLED=0; schema names are opaque strings.
package logfmt
