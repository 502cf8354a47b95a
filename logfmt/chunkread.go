package logfmt

import "fmt"

// ReadChunk reads chunk i of r (Chunks()[i]) as a Chunk, its bytes
// checked as a reader checks them (block header, meta section and payload
// CRCs), for another log to take byte for byte (Writer.WriteChunk) as it
// takes a memory writer's: a journal written to disk is copied into the
// final log without decoding or recompressing its records. The block is
// read into into's buffer when into is given and large enough; the Chunk
// returned must not be reused before the Writer it was written to has
// returned from Flush or Close.
func (r *Reader) ReadChunk(i int, into *Chunk) (*Chunk, error) {
	if i < 0 || i >= len(r.chunks) {
		return nil, fmt.Errorf("%s: chunk %d of %d", r.opts.Name, i, len(r.chunks))
	}
	ci := r.chunks[i]
	name := r.opts.Name
	if int64(ci.MetaLen) > r.opts.MaxChunkSize || int64(ci.DataLen) > r.opts.MaxChunkSize {
		return nil, corrupt(name, ci.Offset, "chunk", fmt.Sprintf("sections <= %d bytes", r.opts.MaxChunkSize), ErrTooLarge)
	}
	if ci.Offset < 0 || ci.Offset+ci.Size() > r.size {
		return nil, corrupt(name, ci.Offset, "chunk", "a chunk inside the file", ErrTornTail)
	}
	c := into
	if c == nil {
		c = &Chunk{}
	}
	c.block = sized(c.block, int(ci.Size()))
	if _, err := r.ReadAt(c.block, ci.Offset); err != nil {
		return nil, fmt.Errorf("%s: read chunk at %d: %w", name, ci.Offset, err)
	}
	h, err := parseBlockHeader(c.block)
	if err != nil {
		return nil, corrupt(name, ci.Offset, "chunk block header", "a valid block header", err)
	}
	if h.kind != kindChunk || h.metaLen != ci.MetaLen || h.dataLen != ci.DataLen {
		return nil, corrupt(name, ci.Offset, "chunk block header", fmt.Sprintf("chunk with sections %d+%d (index)", ci.MetaLen, ci.DataLen), ErrMalformed)
	}
	meta := c.block[blockHeaderSize : blockHeaderSize+int(h.metaLen)]
	if crc(meta) != h.metaCRC {
		return nil, corrupt(name, ci.Offset+blockHeaderSize, "chunk meta section", fmt.Sprintf("crc32c %#08x", h.metaCRC), ErrBadCRC)
	}
	var cm chunkMeta
	if err := parseChunkMeta(meta, h.dataLen, &r.opts, &cm); err != nil {
		return nil, corrupt(name, ci.Offset+blockHeaderSize, "chunk meta section", "", err)
	}
	data := c.block[blockHeaderSize+int(h.metaLen):]
	c.groups = c.groups[:0]
	for _, g := range cm.groups {
		if crc(data[g.dataOff:g.dataOff+g.storedLen]) != g.crc {
			return nil, corrupt(name, ci.Offset+blockHeaderSize+int64(h.metaLen)+int64(g.dataOff), payloadBlock(g.channel), fmt.Sprintf("crc32c %#08x", g.crc), ErrBadCRC)
		}
		c.groups = append(c.groups, chunkGroup{channel: g.channel, records: g.records, raw: g.rawLen, hasCapture: g.hasCap, first: g.first, last: g.last})
	}
	c.info = ci
	c.info.Offset = 0 // in no file: the writer places it
	c.info.Channels = append(c.info.Channels[:0:0], ci.Channels...)
	return c, nil
}
