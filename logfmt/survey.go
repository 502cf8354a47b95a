package logfmt

import (
	"errors"
	"fmt"
)

// survey is a check of a whole log that trusts nothing in it: the block
// scan, then every chunk the scan found loaded again, its payload blocks
// CRC-checked and decompressed and its records decoded against its
// directory. Verify reports it; Recover copies the chunks that pass.
type survey struct {
	*scanResult
	// prelude is damage to the prelude that the scan read past, or nil.
	prelude *CorruptionError
	// good are the indices in chunks (and groups) of the chunks that
	// passed every check, records the records they hold.
	good    []int
	records uint64
	// damaged lists the chunks that failed a check after the scan,
	// damagedAt their indices in chunks.
	damaged   []*CorruptionError
	damagedAt []int
	// undefined lists chunks that use a channel no channel block defines.
	undefined []*CorruptionError
}

// surveyLog checks the log l reads. The prelude must be valid, or be
// followed by a valid block; with force, a file that does not start like
// a vrlog log is searched from its first byte for blocks. The error is
// for a file that cannot be checked at all: not a vrlog log, a newer
// major version, cut inside its prelude, an I/O error.
func surveyLog(l *chunkLoader, force bool) (*survey, error) {
	o := &l.opts
	sv := &survey{}
	start := int64(preludeSize)
	_, _, warning, err := checkStart(l)
	switch {
	case err != nil && force && !errors.Is(err, ErrUnsupportedVersion):
		if start = resync(l, -1); start < 0 || start+trailerSize == l.size {
			return nil, fmt.Errorf("%w (no vrlog block found anywhere in the file)", err)
		}
		sv.prelude = asCorruption(err, o.Name)
	case err != nil:
		return nil, err
	default:
		sv.prelude = warning
	}
	res, err := scan(l, start, true)
	if err != nil {
		return nil, err
	}
	sv.scanResult = res
	defined := map[uint16]bool{}
	for _, c := range res.channels {
		defined[c.ID] = true
	}
	var lc loadedChunk
	var entries []metaEntry
	for i := range res.chunks {
		ci := &res.chunks[i]
		if err := l.checkChunk(&lc, ci, &entries); err != nil {
			sv.damaged, sv.damagedAt = append(sv.damaged, asCorruption(err, o.Name)), append(sv.damagedAt, i)
			continue
		}
		for _, g := range lc.cm.groups {
			if !defined[g.channel] {
				sv.undefined = append(sv.undefined, corrupt(o.Name, ci.Offset, "chunk", fmt.Sprintf("channel %d defined before use", g.channel), ErrUnknownChannel))
				break
			}
		}
		sv.good = append(sv.good, i)
		sv.records += uint64(ci.Records)
	}
	return sv, nil
}

// kept returns the scan result restricted to the chunks that passed and
// those salvaged (by chunk index), in file order; blocks holds the new
// block of each salvaged one (nil: copied as it is).
func (sv *survey) kept(salv map[int]*salvaged) (res *scanResult, blocks [][]byte) {
	r := *sv.scanResult
	r.chunks, r.groups = nil, nil
	good := map[int]bool{}
	for _, i := range sv.good {
		good[i] = true
	}
	for i := range sv.chunks {
		switch s := salv[i]; {
		case good[i]:
			r.chunks, r.groups, blocks = append(r.chunks, sv.chunks[i]), append(r.groups, sv.groups[i]), append(blocks, nil)
		case s != nil && s.block != nil:
			r.chunks, r.groups, blocks = append(r.chunks, s.info), append(r.groups, s.groups), append(blocks, s.block)
		}
	}
	return &r, blocks
}

// checkChunk loads one chunk with its payloads and checks its records
// against the chunk's prefix: counts, byte sums, order, and the time
// ranges the index is built from.
func (l *chunkLoader) checkChunk(lc *loadedChunk, ci *ChunkInfo, scratch *[]metaEntry) error {
	if err := l.openChunk(lc, ci, nil, false, 0); err != nil {
		return err
	}
	tr, err := lc.checkRecords(l.opts.Name, scratch)
	if cm := &lc.cm; err == nil && tr.n > 0 && tr != (timeRange{cm.minMono, cm.maxMono, cm.minWall, cm.maxWall, tr.n}) {
		err = corrupt(l.opts.Name, ci.Offset, "chunk", "time ranges matching the records", ErrMalformed)
	}
	return err
}
