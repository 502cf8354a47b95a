package outfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// Stream is a verb's standard output: buffered, its first write error
// kept, flushed and (when it is a regular file, as in `vrlog analyze >
// report.json`) fsynced by Close, so a full disk fails the verb instead
// of leaving a short file behind a success.
type Stream struct {
	w     *bufio.Writer
	under io.Writer
	err   error
}

// NewStream wraps w (os.Stdout, or a test's buffer).
func NewStream(w io.Writer) *Stream {
	return &Stream{w: bufio.NewWriterSize(w, 64<<10), under: w}
}

// Write buffers p; after an error every Write returns it.
func (s *Stream) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.err = fmt.Errorf("write standard output: %w", unwrapPath(err))
	}
	return n, s.err
}

// Flush writes out the buffer (before waiting for a long time, so a
// reader of a pipe sees what is done).
func (s *Stream) Flush() error {
	if s.err == nil {
		if err := s.w.Flush(); err != nil {
			s.err = fmt.Errorf("write standard output: %w", unwrapPath(err))
		}
	}
	return s.err
}

// Close flushes, and fsyncs a regular file; the first error of any write
// since NewStream is the result.
func (s *Stream) Close() error {
	if err := s.Flush(); err != nil {
		return err
	}
	if f, ok := s.under.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if err := f.Sync(); err != nil {
				s.err = fmt.Errorf("write standard output: %w", unwrapPath(err))
			}
		}
	}
	return s.err
}
