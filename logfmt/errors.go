package logfmt

import (
	"errors"
	"fmt"
	"io/fs"
)

// ErrTornTail means the file ends in an incomplete block and no valid
// block follows: the writer was interrupted (kill -9, power loss, full
// disk). The block was cut short, or its bytes never reached the disk
// (zeros after a power loss). Everything before it is intact.
var ErrTornTail = errors.New("logfmt: torn tail (an interrupted write left the last block incomplete)")

// ErrBadCRC means a CRC32C stored in the file does not match the bytes it
// covers.
var ErrBadCRC = errors.New("logfmt: CRC mismatch")

// ErrBadMagic means the file does not start with the vrlog magic, or a
// block does not start with the block sync marker: not a vrlog log, or
// not at a block boundary.
var ErrBadMagic = errors.New("logfmt: bad magic")

// ErrUnsupportedVersion means the file's major format version is newer
// than this reader understands.
var ErrUnsupportedVersion = errors.New("logfmt: unsupported format version")

// ErrTooLarge means a length read from the file (or passed to the writer)
// exceeds a configured limit (MaxRecordSize, MaxChunkSize, MaxChannels,
// MaxIndexSize) and was refused before anything was allocated.
var ErrTooLarge = errors.New("logfmt: size exceeds limit")

// ErrMalformed means a structure inside a CRC-valid block does not parse:
// a length runs past its section, counts disagree, an unknown enum value.
var ErrMalformed = errors.New("logfmt: malformed structure")

// ErrUnknownChannel means a record names a channel id that was never added.
var ErrUnknownChannel = errors.New("logfmt: unknown channel")

// ErrClosed means the Writer or Reader was used after Close.
var ErrClosed = errors.New("logfmt: closed")

// ErrExists means Create or Recover refused to replace an existing file.
// It is vrlog's one "output exists" error: errors.Is(err, fs.ErrExist) is
// true for it too, as for an outfile.Create refusal.
var ErrExists error = existsError{}

type existsError struct{}

func (existsError) Error() string        { return fs.ErrExist.Error() } // outfile's words: "file already exists"
func (existsError) Is(target error) bool { return target == fs.ErrExist }

// pathless drops the path an *fs.PathError carries, for an error that
// names its file itself (once).
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ErrNotRegular means a log path names a FIFO, pipe, device, socket or
// directory. A log is read with random access (the index at its end,
// chunks in time order), so it must be a regular file.
var ErrNotRegular = errors.New("logfmt: not a regular file")

// ErrNoFooter means the file has no valid footer (it was not closed); the
// reader fell back to a linear scan. Reported by Verify, not by Open.
var ErrNoFooter = errors.New("logfmt: no footer")

// CorruptionError describes damage found in a log: the file, the byte
// offset of the damaged structure, what was being read and what was
// expected there. Err is one of the sentinel errors (ErrBadCRC,
// ErrTornTail, ...) and is returned by Unwrap, so errors.Is works.
type CorruptionError struct {
	File     string // path, or the name given in ReaderOptions.Name
	Offset   int64  // byte offset of the damaged structure from the start of the file
	What     string // the structure: "block header", "chunk metadata", "payload block of channel 3", ...
	Expected string // what the reader expected to find, e.g. "crc32c 0x1234abcd"
	Err      error  // sentinel cause
}

func (e *CorruptionError) Error() string {
	s := fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, e.What)
	if e.Expected != "" {
		s += ": expected " + e.Expected
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the sentinel cause.
func (e *CorruptionError) Unwrap() error { return e.Err }

func corrupt(file string, off int64, what, expected string, err error) *CorruptionError {
	return &CorruptionError{File: file, Offset: off, What: what, Expected: expected, Err: err}
}
