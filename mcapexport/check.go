package mcapexport

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/foxglove/mcap/go/mcap"
)

// Check reads an exported file back with the reference reader before a
// tool reports success for it: the summary's statistics and a full pass
// over the messages through the index must both count want messages.
func Check(path string, want uint64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, err := mcap.NewReader(f)
	if err != nil {
		return err
	}
	info, err := rd.Info()
	if err != nil {
		return err
	}
	if info.Statistics == nil || info.Statistics.MessageCount != want {
		return fmt.Errorf("statistics disagree with the %d messages written", want)
	}
	it, err := rd.Messages(mcap.UsingIndex(true), mcap.InOrder(mcap.FileOrder))
	if err != nil {
		return err
	}
	var n uint64
	var msg mcap.Message
	for {
		_, _, _, err := it.NextInto(&msg)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n++
	}
	if n != want {
		return fmt.Errorf("read %d messages, wrote %d", n, want)
	}
	return nil
}

// CSVName turns a channel name into a file name for a per-channel table.
func CSVName(name string) string {
	b := make([]byte, 0, len(name)+4)
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b = append(b, byte(r))
		default:
			b = append(b, '_')
		}
	}
	return string(b) + ".csv"
}
