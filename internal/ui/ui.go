// Package ui is what people read of vrlog, in one place, as restic's
// internal/ui is: sizes and rates (Bytes, Rate), the one loop that redraws
// a status line on a terminal or prints a plain line now and then off one
// (Loop), and the progress bar of long verbs built on it (Progress).
// Terminal detection is cliutil's (Terminal): a verb passes what it found.
// Libraries (analyzer's text report) format sizes here too; the package is
// pure Go (no cgo), like the analyzer.
package ui

import (
	"strconv"
	"strings"
)

// Bytes is n bytes for people, in binary units to one decimal, a whole
// number without it: 512 B, 1.5 KiB, 512 MiB, 6.1 GiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, exp := float64(n), -1
	for (f >= unit || f <= -unit) && exp < 5 {
		f /= unit
		exp++
	}
	s := strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0")
	return s + " " + "KMGTPE"[exp:exp+1] + "iB"
}

// Rate is a rate in bytes per second for people: 186 MiB/s.
func Rate(bytesPerSecond float64) string { return Bytes(int64(bytesPerSecond)) + "/s" }
