package logfmt

import (
	"fmt"
	"io"
	"os"
	"reflect"
)

// VerifyReport is the result of a full check of a log.
type VerifyReport struct {
	File      string
	HasFooter bool // a valid footer and trailer end the file
	Chunks    int  // chunks that passed every check
	Records   uint64
	Channels  int
	// Problems lists every damaged structure in the middle of the file
	// (bad CRC, malformed block, footer disagreeing with the chunks), each
	// with its byte offset.
	Problems []*CorruptionError
	// TornTail is where the file ends mid-block, or nil.
	TornTail *CorruptionError
}

// OK reports a clean file: closed properly and nothing damaged.
func (v *VerifyReport) OK() bool { return v.HasFooter && len(v.Problems) == 0 && v.TornTail == nil }

// Verify checks a whole log without trusting its footer: every block
// header, every CRC (meta sections and payload blocks), every record's
// metadata against its chunk's directory, and the footer against what
// the scan found. Damage goes into the report; the error is for files
// that cannot be checked at all (not a vrlog file, I/O errors).
func Verify(path string, opts ReaderOptions) (*VerifyReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", path, err)
	}
	opts.Name = path
	return verify(f, st.Size(), opts)
}

func verify(ra io.ReaderAt, size int64, opts ReaderOptions) (*VerifyReport, error) {
	o := opts.withDefaults()
	if o.Name == "" {
		o.Name = "log"
	}
	rep := &VerifyReport{File: o.Name}
	if _, _, err := readPrelude(ra, size, o.Name); err != nil {
		return nil, err
	}
	var n int64
	res, err := scan(ra, size, &o, true, &n)
	if err != nil {
		return nil, err
	}
	rep.Problems = append(rep.Problems, res.problems...)
	rep.TornTail = res.tornTail
	if res.headerOff < 0 {
		rep.Problems = append(rep.Problems, corrupt(o.Name, preludeSize, "header block", "a header block after the prelude", ErrMalformed))
	}
	r := &Reader{chunkLoader: chunkLoader{ra: ra, size: size, opts: o}}
	defer r.Close()
	var good []ChunkInfo
	agg := &scanResult{}
	var lc loadedChunk
	var entries []metaEntry
	defined := map[uint16]bool{}
	for _, c := range res.channels {
		defined[c.ID] = true
	}
	for i := range res.chunks {
		ci := &res.chunks[i]
		entries, err = r.loadChunk(&lc, ci, nil, false, entries[:0], 0)
		if err == nil {
			err = checkChunkRanges(ci, &lc.cm, entries)
		}
		if err != nil {
			rep.Problems = append(rep.Problems, asCorruption(err, o.Name))
			continue
		}
		for _, g := range lc.cm.groups {
			if !defined[g.channel] {
				rep.Problems = append(rep.Problems, corrupt(o.Name, ci.Offset, "chunk", fmt.Sprintf("channel %d defined before use", g.channel), ErrUnknownChannel))
				break
			}
		}
		good = append(good, *ci)
		agg.addStats(&lc.cm)
		rep.Records += uint64(ci.Records)
	}
	rep.Chunks = len(good)
	rep.Channels = len(res.channels)
	if res.footer != nil {
		var t [trailerSize]byte
		if size >= trailerSize {
			if _, err := ra.ReadAt(t[:], size-trailerSize); err == nil {
				if foff, ok := parseTrailer(t[:]); ok && foff == res.footerOff {
					rep.HasFooter = true
				}
			}
		}
		if err := compareFooter(res, res.footer); err != nil {
			rep.Problems = append(rep.Problems, corrupt(o.Name, res.footerOff, "footer block", "an index matching the chunks", err))
		}
	}
	return rep, nil
}

// checkChunkRanges checks the chunk prefix's time ranges against the
// decoded records (the index is built from them and seeks trust them).
func checkChunkRanges(ci *ChunkInfo, cm *chunkMeta, es []metaEntry) error {
	if len(es) == 0 {
		return nil
	}
	mn, mx, wn, wx := es[0].mono, es[0].mono, es[0].wall, es[0].wall
	for i := range es {
		mn, mx = min(mn, es[i].mono), max(mx, es[i].mono)
		wn, wx = min(wn, es[i].wall), max(wx, es[i].wall)
	}
	if mn != cm.minMono || mx != cm.maxMono || wn != cm.minWall || wx != cm.maxWall {
		return corrupt("", ci.Offset, "chunk", "time ranges matching the records", ErrMalformed)
	}
	return nil
}

// compareFooter checks that the footer says what a scan of the blocks
// says: channels, chunk index, statistics.
func compareFooter(res *scanResult, f *footer) error {
	if len(res.problems) > 0 || res.tornTail != nil {
		return nil // the scan is incomplete; the damage is reported already
	}
	sr := &Reader{}
	sr.fromScan(res)
	if !reflect.DeepEqual(normChannels(f.channels), normChannels(sr.channels)) {
		return fmt.Errorf("%w: channel table differs from channel blocks", ErrMalformed)
	}
	if !reflect.DeepEqual(f.chunks, res.chunks) && !(len(f.chunks) == 0 && len(res.chunks) == 0) {
		return fmt.Errorf("%w: chunk index differs from chunks", ErrMalformed)
	}
	if !reflect.DeepEqual(f.stats, sr.stats) && !(len(f.stats) == 0 && len(sr.stats) == 0) {
		return fmt.Errorf("%w: statistics differ from chunks", ErrMalformed)
	}
	return nil
}

func normChannels(cs []Channel) []Channel {
	out := make([]Channel, len(cs))
	for i, c := range cs {
		c.Meta = cloneMap(c.Meta)
		out[i] = c
	}
	return out
}
