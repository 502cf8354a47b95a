package logfmt

import (
	"encoding/binary"
	"sort"
)

// Bodies of the small blocks (header, channel, drops, footer) and the
// footer's entries. Each function pair is the byte-level spec of one
// structure in docs/log-format.md.

func appendHeaderBody(dst []byte, h Header) []byte {
	dst = le.AppendUint64(dst, uint64(h.CreatedWallNs))
	return appendMap(dst, h.Metadata)
}

func parseHeaderBody(b []byte) (Header, bool) {
	d := dec{b: b}
	h := Header{CreatedWallNs: d.i64()}
	h.Metadata = d.strMap()
	return h, !d.bad
}

func appendChannelBody(dst []byte, c *Channel) []byte {
	dst = le.AppendUint16(dst, c.ID)
	dst = append(dst, byte(c.Transport), byte(c.Compression.Kind), byte(c.Compression.Level))
	dst = appendString(dst, c.Name)
	dst = appendString(dst, c.Topic)
	dst = appendString(dst, c.Schema)
	return appendMap(dst, c.Meta)
}

func parseChannelBody(d *dec) (Channel, bool) {
	c := Channel{ID: d.u16(), Transport: Transport(d.u8())}
	c.Compression.Kind = CompressionKind(d.u8())
	c.Compression.Level = int(d.u8())
	c.Name = d.str()
	c.Topic = d.str()
	c.Schema = d.str()
	c.Meta = d.strMap()
	return c, !d.bad
}

// drops block: cumulative recorder drops per channel; the last one in the
// file wins.
func appendDropsBody(dst []byte, drops map[uint16]uint64) []byte {
	ids := make([]int, 0, len(drops))
	for id := range drops {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	dst = binary.AppendUvarint(dst, uint64(len(ids)))
	for _, id := range ids {
		dst = le.AppendUint16(dst, uint16(id))
		dst = le.AppendUint64(dst, drops[uint16(id)])
	}
	return dst
}

func parseDropsBody(b []byte) (map[uint16]uint64, bool) {
	d := dec{b: b}
	n := d.count(10)
	m := make(map[uint16]uint64, n)
	for i := 0; i < n && !d.bad; i++ {
		id := d.u16()
		m[id] = d.u64()
	}
	return m, !d.bad
}

func appendChunkEntry(dst []byte, c *ChunkInfo) []byte {
	dst = le.AppendUint64(dst, uint64(c.Offset))
	dst = le.AppendUint32(dst, c.MetaLen)
	dst = le.AppendUint32(dst, c.DataLen)
	dst = le.AppendUint32(dst, c.Records)
	dst = appendBool(dst, c.Sorted)
	dst = append(dst, 0, 0, 0)
	dst = le.AppendUint64(dst, uint64(c.MinMonoNs))
	dst = le.AppendUint64(dst, uint64(c.MaxMonoNs))
	dst = le.AppendUint64(dst, uint64(c.MinWallNs))
	dst = le.AppendUint64(dst, uint64(c.MaxWallNs))
	dst = binary.AppendUvarint(dst, uint64(len(c.Channels)))
	for _, cc := range c.Channels {
		dst = le.AppendUint16(dst, cc.Channel)
		dst = le.AppendUint32(dst, cc.Records)
		dst = le.AppendUint32(dst, cc.RawBytes)
		dst = le.AppendUint32(dst, cc.StoredBytes)
	}
	return dst
}

func parseChunkEntry(d *dec) (ChunkInfo, bool) {
	c := ChunkInfo{Offset: int64(d.u64()), MetaLen: d.u32(), DataLen: d.u32(), Records: d.u32()}
	c.Sorted = d.u8() != 0
	d.take(3)
	c.MinMonoNs, c.MaxMonoNs, c.MinWallNs, c.MaxWallNs = d.i64(), d.i64(), d.i64(), d.i64()
	n := d.count(14)
	if n > 0 {
		c.Channels = make([]ChunkChannel, n)
		for i := range c.Channels {
			c.Channels[i] = ChunkChannel{Channel: d.u16(), Records: d.u32(), RawBytes: d.u32(), StoredBytes: d.u32()}
		}
	}
	return c, !d.bad
}

func appendStatsEntry(dst []byte, s *ChannelStats) []byte {
	dst = le.AppendUint16(dst, s.Channel)
	dst = appendBool(dst, s.HasCapture)
	dst = append(dst, 0, 0, 0, 0, 0)
	for _, v := range [...]uint64{s.Records, s.RawBytes, s.StoredBytes, s.Drops,
		uint64(s.FirstMonoNs), uint64(s.LastMonoNs), uint64(s.FirstWallNs), uint64(s.LastWallNs),
		uint64(s.FirstCaptureNs), uint64(s.LastCaptureNs)} {
		dst = le.AppendUint64(dst, v)
	}
	return dst
}

func parseStatsEntry(d *dec) (ChannelStats, bool) {
	s := ChannelStats{Channel: d.u16()}
	s.HasCapture = d.u8() != 0
	d.take(5)
	s.Records, s.RawBytes, s.StoredBytes, s.Drops = d.u64(), d.u64(), d.u64(), d.u64()
	s.FirstMonoNs, s.LastMonoNs, s.FirstWallNs, s.LastWallNs = d.i64(), d.i64(), d.i64(), d.i64()
	s.FirstCaptureNs, s.LastCaptureNs = d.i64(), d.i64()
	return s, !d.bad
}

// footer is the decoded footer block.
type footer struct {
	channels []Channel
	chunks   []ChunkInfo
	stats    []ChannelStats
	writer   WriterStats
}

func appendFooterBody(dst []byte, f *footer) []byte {
	var tmp []byte
	sub := func(b []byte) {
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		dst = append(dst, b...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(f.channels)))
	for i := range f.channels {
		tmp = appendChannelBody(tmp[:0], &f.channels[i])
		sub(tmp)
	}
	dst = binary.AppendUvarint(dst, uint64(len(f.chunks)))
	for i := range f.chunks {
		tmp = appendChunkEntry(tmp[:0], &f.chunks[i])
		sub(tmp)
	}
	dst = binary.AppendUvarint(dst, uint64(len(f.stats)))
	for i := range f.stats {
		tmp = appendStatsEntry(tmp[:0], &f.stats[i])
		sub(tmp)
	}
	tmp = tmp[:0]
	for _, v := range [...]uint64{f.writer.Records, f.writer.Chunks, f.writer.RawBytes, uint64(f.writer.BytesWritten), f.writer.Drops} {
		tmp = le.AppendUint64(tmp, v)
	}
	sub(tmp)
	return dst
}

func parseFooterBody(b []byte, maxChannels int) (*footer, bool) {
	d := &dec{b: b}
	f := &footer{}
	n := d.count(8)
	if n > maxChannels {
		return nil, false
	}
	f.channels = make([]Channel, 0, n)
	for i := 0; i < n && !d.bad; i++ {
		c, ok := parseChannelBody(d.sub())
		if !ok {
			return nil, false
		}
		f.channels = append(f.channels, c)
	}
	n = d.count(49)
	f.chunks = make([]ChunkInfo, 0, n)
	for i := 0; i < n && !d.bad; i++ {
		c, ok := parseChunkEntry(d.sub())
		if !ok {
			return nil, false
		}
		f.chunks = append(f.chunks, c)
	}
	n = d.count(89)
	if n > maxChannels {
		return nil, false
	}
	f.stats = make([]ChannelStats, 0, n)
	for i := 0; i < n && !d.bad; i++ {
		s, ok := parseStatsEntry(d.sub())
		if !ok {
			return nil, false
		}
		f.stats = append(f.stats, s)
	}
	w := d.sub()
	f.writer = WriterStats{Records: w.u64(), Chunks: w.u64(), RawBytes: w.u64(), BytesWritten: w.i64(), Drops: w.u64()}
	return f, !d.bad && !w.bad
}
