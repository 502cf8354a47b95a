package cliutil

import (
	"errors"
	"fmt"

	"github.com/vrlog/vrlog/logfmt"
)

// LogHint adds to an error of reading a log what a user can do about it:
// verify and recover a damaged or torn log, nothing for a file that never
// held a record (recover would only say "nothing to recover"), upgrade
// for a newer format. The one place every verb that opens logs takes its
// hint from.
func LogHint(err error) error {
	var ce *logfmt.CorruptionError
	file := "FILE.vrlog"
	if errors.As(err, &ce) && ce.File != "" {
		file = ce.File
	}
	switch {
	case errors.Is(err, logfmt.ErrBadMagic):
		return fmt.Errorf("%w (not a vrlog log?)", err)
	case errors.Is(err, logfmt.ErrUnsupportedVersion):
		return fmt.Errorf("%w (written by a newer vrlog; upgrade to read it)", err)
	case ce != nil && ce.Offset == 0 && errors.Is(err, logfmt.ErrTornTail):
		return fmt.Errorf("%w (%s holds no record: its writer never got past the file's first bytes, so there is nothing to verify or recover; record it again, or copy it again from its source)", err, file)
	case errors.Is(err, logfmt.ErrBadCRC), errors.Is(err, logfmt.ErrMalformed), errors.Is(err, logfmt.ErrTornTail), errors.Is(err, logfmt.ErrTooLarge):
		return fmt.Errorf("%w (try `vrlog verify %s`, then `vrlog recover %s -o FIXED.vrlog`)", err, file, file)
	}
	return err
}

// WindowUsage is the usage error for a window's bounds
// (logfmt.ParseWindow), naming the flags --start, --end, --duration.
func WindowUsage(err error) error {
	var we *logfmt.WindowError
	if !errors.As(err, &we) {
		return Usage("%v", err)
	}
	if errors.Is(err, logfmt.ErrEndAndDuration) {
		return Usage("--end and --duration: give one")
	}
	return Usage("--%s %v", we.Bound, we.Err)
}
