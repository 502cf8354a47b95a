package logfmt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// RecoverOptions configures Recover.
type RecoverOptions struct {
	// Reader bounds what is read from the damaged file.
	Reader ReaderOptions
	// Overwrite lets Recover replace an existing destination.
	Overwrite bool
}

// RecoverReport says what Recover kept and what it dropped.
type RecoverReport struct {
	Source, Dest string
	ChunksKept   int
	RecordsKept  uint64
	// Dropped lists damaged chunks and blocks in the middle of the source
	// that were left out, each with its offset in the source.
	Dropped []*CorruptionError
	// TornTail is where the source ended mid-block (the usual crash), or
	// nil. The incomplete block is left out.
	TornTail *CorruptionError
	// HadFooter says the source was closed properly.
	HadFooter bool
	// Placeholders lists channels whose definition was lost; the copy
	// defines them with a placeholder name so their records stay readable.
	Placeholders []uint16
	// Verified is the check of the written copy.
	Verified *VerifyReport
}

// Recover writes a repaired copy of src to dst: every complete chunk
// whose CRCs and structure check out is copied byte for byte, with the
// channel definitions, the latest recorder drop counts, a new index and
// footer. The copy is written to dst+".tmp", synced and renamed, then
// re-opened and verified before Recover reports success.
func Recover(src, dst string, opts RecoverOptions) (*RecoverReport, error) {
	if !opts.Overwrite {
		if _, err := os.Lstat(dst); err == nil {
			return nil, fmt.Errorf("recover %s: %s: %w", src, dst, ErrExists)
		}
	}
	in, err := os.Open(src)
	if err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("recover %s: %w", src, err)
	}
	ro := opts.Reader
	ro.Name = src
	bw := bufio.NewWriterSize(out, 1<<20)
	rep, err := recoverTo(in, st.Size(), bw, ro)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return rep, fmt.Errorf("recover %s to %s: %w", src, dst, err)
	}
	if d, err := os.Open(filepath.Dir(dst)); err == nil {
		d.Sync()
		d.Close()
	}
	rep.Source, rep.Dest = src, dst
	vo := opts.Reader
	vrep, err := Verify(dst, vo)
	if err != nil {
		return rep, fmt.Errorf("recover %s: re-reading %s: %w", src, dst, err)
	}
	rep.Verified = vrep
	if !vrep.OK() || vrep.Records != rep.RecordsKept || vrep.Chunks != rep.ChunksKept {
		return rep, fmt.Errorf("recover %s: %s failed verification (%d problems, %d/%d records)", src, dst, len(vrep.Problems), vrep.Records, rep.RecordsKept)
	}
	return rep, nil
}

// recoverTo writes the repaired log to out.
func recoverTo(ra io.ReaderAt, size int64, out io.Writer, ropts ReaderOptions) (*RecoverReport, error) {
	o := ropts.withDefaults()
	if o.Name == "" {
		o.Name = "log"
	}
	rep := &RecoverReport{}
	res := &scanResult{headerOff: -1, drops: map[uint16]uint64{}}
	if _, _, err := readPrelude(ra, size, o.Name); err != nil {
		var ce *CorruptionError
		if !errors.As(err, &ce) || !errors.Is(err, ErrTornTail) {
			return rep, err
		}
		rep.TornTail = ce // cut inside the prelude: nothing to keep
	} else {
		var n int64
		res, err = scan(ra, size, &o, true, &n)
		if err != nil {
			return rep, err
		}
		rep.TornTail = res.tornTail
		rep.Dropped = append(rep.Dropped, res.problems...)
		rep.HadFooter = res.footer != nil
	}
	r := &Reader{chunkLoader: chunkLoader{ra: ra, size: size, opts: o}}
	defer r.Close()

	// Keep the chunks that pass every check.
	var kept []ChunkInfo
	agg := &scanResult{}
	var lc loadedChunk
	var entries []metaEntry
	var err error
	for i := range res.chunks {
		ci := &res.chunks[i]
		entries, err = r.loadChunk(&lc, ci, nil, false, entries[:0], 0)
		if err == nil {
			err = checkChunkRanges(ci, &lc.cm, entries)
		}
		if err != nil {
			rep.Dropped = append(rep.Dropped, asCorruption(err, o.Name))
			continue
		}
		kept = append(kept, *ci)
		agg.addStats(&lc.cm)
	}
	keptRes := &scanResult{channels: res.channels, chunks: kept, drops: res.drops, stats: agg.stats}
	channels := placeholders(keptRes)
	defined := map[uint16]bool{}
	for _, c := range res.channels {
		defined[c.ID] = true
	}
	for _, c := range channels {
		if !defined[c.ID] {
			rep.Placeholders = append(rep.Placeholders, c.ID)
		}
	}

	cw := &countWriter{w: out}
	buf := appendPrelude(nil)
	buf = appendBlock(buf, kindHeader, appendHeaderBody(nil, res.header))
	for i := range channels {
		buf = appendBlock(buf, kindChannel, appendChannelBody(nil, &channels[i]))
	}
	if _, err := cw.Write(buf); err != nil {
		return rep, err
	}
	var copyBuf []byte
	newIndex := make([]ChunkInfo, 0, len(kept))
	for _, ci := range kept {
		sz := ci.Size()
		if cap(copyBuf) < int(sz) {
			copyBuf = make([]byte, sz)
		}
		b := copyBuf[:sz]
		if _, err := ra.ReadAt(b, ci.Offset); err != nil {
			return rep, fmt.Errorf("%s: read chunk at %d: %w", o.Name, ci.Offset, err)
		}
		ni := ci
		ni.Offset = cw.n
		newIndex = append(newIndex, ni)
		if _, err := cw.Write(b); err != nil {
			return rep, err
		}
		rep.ChunksKept++
		rep.RecordsKept += uint64(ci.Records)
	}
	// Drops of channels that survived.
	drops := map[uint16]uint64{}
	var dropSum uint64
	for _, c := range channels {
		if d := res.drops[c.ID]; d > 0 {
			drops[c.ID] = d
			dropSum += d
		}
	}
	buf = buf[:0]
	if len(drops) > 0 {
		buf = appendBlock(buf, kindDrops, appendDropsBody(nil, drops))
	}
	sr := &Reader{}
	keptRes.chunks = newIndex
	keptRes.drops = drops
	sr.fromScan(keptRes)
	var raw uint64
	for _, s := range sr.stats {
		raw += s.RawBytes
	}
	foff := cw.n + int64(len(buf))
	f := &footer{channels: sr.channels, chunks: newIndex, stats: sr.stats,
		writer: WriterStats{Records: rep.RecordsKept, Chunks: uint64(len(newIndex)), RawBytes: raw, BytesWritten: foff, Drops: dropSum}}
	buf = appendBlock(buf, kindFooter, appendFooterBody(nil, f))
	buf = appendTrailer(buf, foff)
	_, err = cw.Write(buf)
	return rep, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
