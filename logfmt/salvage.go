package logfmt

import (
	"fmt"
	"slices"
)

// A chunk whose meta section and record metadata are sound but one of
// whose payload blocks is damaged (a bit flip in a frame) still holds the
// records of its other channels: each payload block has its CRC, so
// Recover keeps them, per block, instead of dropping the whole chunk (4
// damaged bytes in one frame block cost 60 records, ~50 of them states
// whose own block was intact).

// salvaged is what Recover keeps of such a chunk: the records of its
// sound payload blocks, written as a chunk of their own.
type salvaged struct {
	block  []byte             // the new chunk block (nil: no record kept, the chunk is dropped)
	info   ChunkInfo          // its index entry, Offset 0 until written
	groups []groupEntry       // its group directory
	lost   uint64             // the records of the damaged blocks
	bad    []*CorruptionError // the damaged payload blocks
}

// salvage reads the chunk ci block by block. It returns nil when the chunk
// cannot be salvaged: its meta section or record metadata is damaged, or
// no payload block is (the damage is elsewhere).
func (l *chunkLoader) salvage(ci *ChunkInfo) *salvaged {
	name := l.opts.Name
	var lc loadedChunk
	if err := l.openChunk(&lc, ci, nil, true, 0); err != nil {
		return nil
	}
	es, err := lc.dec.decode(nil, len(lc.metaRaw))
	if err != nil {
		return nil
	}
	s := &salvaged{}
	data := make([][]byte, len(lc.cm.groups))
	dataAt := ci.Offset + blockHeaderSize + int64(ci.MetaLen)
	for i, g := range lc.cm.groups {
		at := dataAt + int64(g.dataOff)
		stored := make([]byte, g.storedLen)
		if _, err := l.ReadAt(stored, at); err != nil && len(stored) > 0 {
			s.bad = append(s.bad, corrupt(name, at, payloadBlock(g.channel), "", err))
			continue
		}
		if crc(stored) != g.crc {
			s.bad = append(s.bad, corrupt(name, at, payloadBlock(g.channel), fmt.Sprintf("crc32c %#08x", g.crc), ErrBadCRC))
			continue
		}
		d, err := l.decompress(g.kind, stored, g.rawLen, nil)
		if err != nil {
			s.bad = append(s.bad, corrupt(name, at, payloadBlock(g.channel), "", err))
			continue
		}
		data[i] = append([]byte{}, d...)
	}
	if len(s.bad) == 0 {
		return nil
	}
	j := &job{kind: jobChunk}
	j.reset()
	groups := map[uint16]int{} // old group → new
	for _, e := range es {
		d := data[e.group]
		end := uint64(e.dataOff) + uint64(e.hdrLen) + uint64(e.payLen)
		if d == nil || end > uint64(len(d)) {
			s.lost++
			continue
		}
		g, ok := groups[e.group]
		if !ok {
			old := lc.cm.groups[e.group]
			g = j.b.addGroup(e.channel, Compression{Kind: old.kind, Level: max(int(old.level), 1)})
			groups[e.group] = g
		}
		r := Record{Channel: e.channel, RecvWallNs: e.wall, RecvMonoNs: e.mono, CaptureNs: e.capture, Seq: e.seq,
			HasStamp: e.flags&rfStamp != 0, HasPubSN: e.flags&rfPubSN != 0, PublisherSN: e.sn,
			Header: d[e.dataOff : e.dataOff+e.hdrLen], Payload: d[e.dataOff+e.hdrLen : end]}
		if e.pubLen > 0 {
			r.PublisherID = lc.metaRaw[e.pubOff : e.pubOff+e.pubLen]
		}
		j.b.add(g, &r, nil)
	}
	if len(groups) == 0 {
		return s
	}
	var c compressor
	defer c.close()
	c.sealChunk(j, Compression{Kind: lc.cm.metaKind, Level: 1})
	s.block = slices.Clone(j.head)
	for _, g := range j.b.groups[:j.b.ng] {
		s.block = append(s.block, g.out...)
	}
	h, err := parseBlockHeader(s.block)
	var cm chunkMeta
	if err == nil {
		err = parseChunkMeta(s.block[blockHeaderSize:blockHeaderSize+int(h.metaLen)], h.dataLen, &l.opts, &cm)
	}
	if err != nil { // what the writer's own encoder wrote does not parse: keep nothing of it
		return &salvaged{lost: uint64(len(es)), bad: s.bad}
	}
	s.info, s.groups = chunkInfoOf(0, h, &cm), slices.Clone(cm.groups)
	return s
}
