package hostclock

import (
	"errors"
	"fmt"
	"time"

	"github.com/vrlog/vrlog/logfmt"
)

// ErrSeveralRecorders: logs read as one session were recorded on
// different hosts' receive clocks, and no merge put them on one.
var ErrSeveralRecorders = errors.New("hostclock: the logs were recorded on different hosts' clocks")

// Header metadata the recorder writes (docs/log-format.md): the host it
// ran on, and an id shared by every file of one recording (split files,
// snapshots).
const (
	MetaHost      = "host"
	MetaRecording = "recording"
)

// MaxWallMinusMonoDrift is how far the wall-minus-monotonic difference
// of two logs of one host's recorders may differ: NTP slews the wall
// clock by some ppm (at most 500 ppm), so over the minutes between two
// recordings a few ms at most. Two hosts' differ by their boot times.
const MaxWallMinusMonoDrift = 10 * time.Millisecond

// OneReceiveClock is the rule for reading several logs as one session
// (analyze; replay's multi-file open): their receive stamps must be on
// one clock. SameClock first (mixed simulator and recorder clocks are
// ErrMixedClocks, as merge refuses them); logs on their recorders' clocks
// must then be one host's: the same host in their metadata, and, unless
// they are files of one recording, a wall-minus-monotonic difference
// within MaxWallMinusMonoDrift (a second host on one machine, or a clock
// stepped between the recordings, shows there). Otherwise
// ErrSeveralRecorders, naming the files: put them on the simulator's
// clock by their probes first (a merge onto the simulator's clock).
// Logs without records are not compared.
func OneReceiveClock(rs []*logfmt.Reader, files []string) error {
	if err := SameClock(rs, files); err != nil {
		return err
	}
	if len(rs) < 2 || rs[0].Header().Metadata[MetaKey] != "" {
		return nil // one log, or parts of one merge onto the simulator's clock
	}
	first := -1
	var firstWM int64
	for i, r := range rs {
		wm, err := wallMinusMono(r)
		if err != nil {
			continue // no records: nothing to compare
		}
		if first < 0 {
			first, firstWM = i, wm
			continue
		}
		a, b := rs[first].Header().Metadata, r.Header().Metadata
		switch {
		case a[MetaHost] != "" && b[MetaHost] != "" && a[MetaHost] != b[MetaHost]:
			return fmt.Errorf("%w: %s on %s, %s on %s", ErrSeveralRecorders, files[first], a[MetaHost], files[i], b[MetaHost])
		case a[MetaRecording] != "" && a[MetaRecording] == b[MetaRecording]:
		case abs(wm-firstWM) > MaxWallMinusMonoDrift.Nanoseconds():
			return fmt.Errorf("%w: the receive stamps of %s and %s differ by %v between their wall and monotonic clocks (two hosts, or a wall clock stepped between the recordings)",
				ErrSeveralRecorders, files[first], files[i], time.Duration(wm-firstWM).Round(time.Microsecond))
		}
	}
	return nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
