package mcapexport

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/foxglove/mcap/go/mcap"
)

// Check reads an exported file back with the reference reader before a
// tool reports success for it, through its index, without reading a
// message's bytes (which would cost another pass over the pixels): the
// summary (schemas, channels, statistics, chunk indexes) must parse, every
// chunk index must point at a chunk record whose header agrees with it
// (length, sizes, compression), and the message indexes after each chunk
// must parse and list, per channel, the messages the statistics count
// (want in all), each at an offset inside its chunk's records.
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
	st := info.Statistics
	if st == nil || st.MessageCount != want {
		return fmt.Errorf("statistics disagree with the %d messages written", want)
	}
	counts := map[uint16]uint64{}
	var n uint64
	for _, ci := range info.ChunkIndexes {
		if err := checkChunk(f, ci, info, counts, &n); err != nil {
			return fmt.Errorf("chunk at %d: %w", ci.ChunkStartOffset, err)
		}
	}
	if n != want {
		return fmt.Errorf("message indexes list %d messages, wrote %d", n, want)
	}
	for id, c := range st.ChannelMessageCounts {
		if counts[id] != c {
			return fmt.Errorf("channel %d: message indexes list %d messages, statistics %d", id, counts[id], c)
		}
	}
	return nil
}

// checkChunk checks one chunk record's header and its message indexes
// against the chunk index ci, adding the indexed messages to counts and n.
func checkChunk(f *os.File, ci *mcap.ChunkIndex, info *mcap.Info, counts map[uint16]uint64, n *uint64) error {
	// opcode, record length, then the chunk's fixed fields and its
	// compression string (at most a few bytes), records length.
	head := make([]byte, 9+8+8+8+4+4+len(ci.Compression)+8)
	if _, err := f.ReadAt(head, int64(ci.ChunkStartOffset)); err != nil {
		return fmt.Errorf("read chunk header: %w", err)
	}
	le := binary.LittleEndian
	if mcap.OpCode(head[0]) != mcap.OpChunk || le.Uint64(head[1:]) != ci.ChunkLength-9 {
		return fmt.Errorf("no chunk record of %d bytes there", ci.ChunkLength)
	}
	b := head[9:]
	usize, clen := le.Uint64(b[16:]), le.Uint32(b[28:])
	comp := string(b[32 : 32+clen])
	if clen != uint32(len(ci.Compression)) || usize != ci.UncompressedSize || comp != string(ci.Compression) ||
		le.Uint64(b[32+clen:]) != ci.CompressedSize {
		return fmt.Errorf("chunk header disagrees with its index")
	}
	idx := make([]byte, ci.MessageIndexLength)
	at := int64(ci.ChunkStartOffset + ci.ChunkLength)
	if _, err := f.ReadAt(idx, at); err != nil {
		return fmt.Errorf("read message indexes: %w", err)
	}
	for len(idx) > 0 {
		if len(idx) < 9 || mcap.OpCode(idx[0]) != mcap.OpMessageIndex || le.Uint64(idx[1:]) > uint64(len(idx)-9) {
			return fmt.Errorf("bad message index record")
		}
		l := le.Uint64(idx[1:])
		mi, err := mcap.ParseMessageIndex(idx[9 : 9+l])
		if err != nil {
			return err
		}
		if _, ok := info.Channels[mi.ChannelID]; !ok {
			return fmt.Errorf("message index of unknown channel %d", mi.ChannelID)
		}
		if off, ok := ci.MessageIndexOffsets[mi.ChannelID]; !ok || off != uint64(at) {
			return fmt.Errorf("message index of channel %d at %d, the chunk index says %d", mi.ChannelID, at, off)
		}
		for _, e := range mi.Records { // a parsed index: Entries() is the writer's view
			if e.Offset >= usize {
				return fmt.Errorf("channel %d: message at %d past the chunk's %d bytes", mi.ChannelID, e.Offset, usize)
			}
		}
		counts[mi.ChannelID] += uint64(len(mi.Records))
		*n += uint64(len(mi.Records))
		idx = idx[9+l:]
		at += int64(9 + l)
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
