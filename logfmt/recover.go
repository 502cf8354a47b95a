package logfmt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"sort"

	"github.com/vrlog/vrlog/outfile"
)

// RecoverOptions configures Recover.
type RecoverOptions struct {
	// Reader bounds what is read from the damaged file.
	Reader ReaderOptions
	// Overwrite lets Recover replace an existing destination.
	Overwrite bool
	// Force searches a source that does not start like a vrlog log (its
	// prelude and the block after it both damaged, or foreign bytes in
	// front) for blocks from its first byte. Without it such a source is
	// refused with ErrBadMagic.
	Force bool
	// Stdout is what the destination "-" writes to (nil refuses "-"): a
	// repaired log streamed to a pipe, checked as it is written but not
	// read back.
	Stdout io.Writer
	// Metadata is set in the copy's header metadata, over the source's
	// (recover: the source's session epoch, MetaSessionEpoch, which a
	// dropped first chunk would change).
	Metadata map[string]string
}

// RecoverReport says what Recover kept and what it dropped.
type RecoverReport struct {
	Source, Dest string
	ChunksKept   int
	RecordsKept  uint64
	// Dropped lists damaged chunks and blocks in the middle of the source
	// that were left out, each with its offset in the source.
	Dropped []*CorruptionError
	// Salvaged lists the chunks one of whose payload blocks was damaged:
	// the records of their sound blocks are kept (in a chunk written
	// anew), those of the damaged ones lost.
	Salvaged []Salvaged
	// Rebuilt lists damage to structures that held no record and that
	// the copy writes anew: the prelude, the header block (its metadata
	// is lost; the copy's creation time is the earliest receive time),
	// the footer, the trailer.
	Rebuilt []*CorruptionError
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
	// BytesWritten is the size of the copy: what was written to dst,
	// also when dst is a device, FIFO or stdout written in place.
	BytesWritten int64
}

// Salvaged is one chunk of the source kept without its damaged payload
// blocks (Damaged): Kept records of its sound blocks, Lost of the
// damaged ones.
type Salvaged struct {
	Offset     int64
	Kept, Lost uint64
	Damaged    []*CorruptionError
}

// Recover writes a repaired copy of src to dst: every complete chunk
// whose CRCs and structure check out is copied byte for byte, with the
// channel definitions, the latest recorder drop counts, a new index and
// footer. The output is an outfile.File: a temporary file next to dst
// (links followed), synced, verified (Verify, then every record read back)
// and only then moved to dst and the directory synced. On any error, and
// when ctx is cancelled, the temporary file is removed and dst is left as
// it was. Without Overwrite an existing dst is refused with ErrExists, also
// if it appears while Recover runs. A device, FIFO or socket dst, or "-"
// (opts.Stdout), is written in place and cannot be read back.
func Recover(ctx context.Context, src, dst string, opts RecoverOptions) (*RecoverReport, error) {
	fail := func(err error) error {
		if errors.Is(err, fs.ErrExist) && !errors.Is(err, ErrExists) {
			err = fmt.Errorf("create %s: %w", dst, ErrExists)
		}
		return fmt.Errorf("recover %s: %w", src, err)
	}
	in, size, err := openLogFile(src)
	if err != nil {
		return nil, fail(err)
	}
	defer in.Close()
	out, err := outfile.Create(dst, outfile.Options{Force: opts.Overwrite, Stdout: opts.Stdout})
	if err != nil {
		return nil, fail(err)
	}
	defer out.Abort()
	ro := opts.Reader
	ro.Name = src
	rep, err := recoverTo(ctx, in, size, out, ro, opts.Force, opts.Metadata)
	if err != nil {
		return rep, fail(err)
	}
	rep.Source, rep.Dest = src, dst
	err = out.CommitChecked(func(tmp string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rep.Verified, err = checkCopy(tmp, rep, opts.Reader)
		return err
	})
	if err == nil {
		err = ctx.Err() // a device or FIFO took it all: still an interrupted run
	}
	if err != nil {
		return rep, fail(err)
	}
	return rep, nil
}

// checkCopy verifies the written copy and reads every record of it back,
// payloads included: a repaired file that cannot be read is no repair.
func checkCopy(path string, rep *RecoverReport, ro ReaderOptions) (*VerifyReport, error) {
	v, err := Verify(path, ro)
	if err != nil {
		return nil, err
	}
	if !v.OK() || v.Records != rep.RecordsKept || v.Chunks != rep.ChunksKept {
		return v, fmt.Errorf("%s failed verification (%d problems, %d/%d records)", path, len(v.Problems), v.Records, rep.RecordsKept)
	}
	r, err := Open(path, ro)
	if err != nil {
		return v, err
	}
	defer r.Close()
	var n uint64
	it := r.Records(Filter{})
	for it.Next() {
		n++
	}
	if err := it.Err(); err != nil {
		return v, err
	}
	if !r.Indexed() || n != rep.RecordsKept {
		return v, fmt.Errorf("%s: read %d records back (indexed %v), kept %d", path, n, r.Indexed(), rep.RecordsKept)
	}
	return v, nil
}

// recoverTo writes the repaired log to out.
func recoverTo(ctx context.Context, ra io.ReaderAt, size int64, out io.Writer, ropts ReaderOptions, force bool, meta map[string]string) (*RecoverReport, error) {
	o := ropts.withDefaults()
	if o.Name == "" {
		o.Name = "log"
	}
	l := &chunkLoader{ra: ra, size: size, opts: o}
	defer l.close()
	sv, err := surveyLog(l, force)
	if err != nil {
		if errors.Is(err, ErrTornTail) {
			err = fmt.Errorf("nothing to recover: %w", err)
		}
		return nil, err
	}
	rep := &RecoverReport{TornTail: sv.tornTail, HadFooter: sv.footer != nil}
	rep.Dropped = append(rep.Dropped, sv.problems...)
	salv := map[int]*salvaged{}
	for k, i := range sv.damagedAt {
		s := l.salvage(&sv.chunks[i])
		if s == nil || s.block == nil { // nothing sound to keep: dropped whole
			rep.Dropped = append(rep.Dropped, sv.damaged[k])
			continue
		}
		salv[i] = s
		rep.Salvaged = append(rep.Salvaged, Salvaged{Offset: sv.chunks[i].Offset, Kept: uint64(s.info.Records), Lost: s.lost, Damaged: s.bad})
	}
	sort.SliceStable(rep.Dropped, func(i, j int) bool { return rep.Dropped[i].Offset < rep.Dropped[j].Offset })
	if sv.prelude != nil {
		rep.Rebuilt = append(rep.Rebuilt, sv.prelude)
	}
	rep.Rebuilt = append(rep.Rebuilt, sv.warnings...)

	kept, blocks := sv.kept(salv)
	header := kept.header
	if kept.headerOff < 0 {
		header = lostHeader(kept.chunks)
	}
	if len(meta) > 0 {
		header.Metadata = maps.Clone(header.Metadata)
		if header.Metadata == nil {
			header.Metadata = map[string]string{}
		}
		maps.Copy(header.Metadata, meta)
	}
	channels, _ := kept.index()
	defined := map[uint16]bool{}
	for _, c := range kept.channels {
		defined[c.ID] = true
	}
	drops := map[uint16]uint64{} // of the channels that survived
	var dropSum uint64
	for _, c := range channels {
		if !defined[c.ID] {
			rep.Placeholders = append(rep.Placeholders, c.ID)
		}
		if d := kept.drops[c.ID]; d > 0 {
			drops[c.ID] = d
			dropSum += d
		}
	}

	cw := &countWriter{w: out}
	buf := appendPrelude(nil)
	buf = appendBlock(buf, kindHeader, appendHeaderBody(nil, header))
	for i := range channels {
		buf = appendBlock(buf, kindChannel, appendChannelBody(nil, &channels[i]))
	}
	if _, err := cw.Write(buf); err != nil {
		return rep, err
	}
	copyBuf := make([]byte, 1<<20)
	for i := range kept.chunks {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		ci := &kept.chunks[i]
		at := ci.Offset
		ci.Offset = cw.n
		if blocks[i] != nil { // salvaged: its sound payload blocks, written anew
			if _, err := cw.Write(blocks[i]); err != nil {
				return rep, err
			}
		} else if _, err := io.CopyBuffer(cw, io.NewSectionReader(l, at, ci.Size()), copyBuf); err != nil {
			return rep, fmt.Errorf("copy chunk at %d of %s: %w", at, o.Name, err)
		}
		rep.ChunksKept++
		rep.RecordsKept += uint64(ci.Records)
	}
	buf = buf[:0]
	if len(drops) > 0 {
		buf = appendBlock(buf, kindDrops, appendDropsBody(nil, drops))
	}
	kept.drops = drops
	channels, stats := kept.index()
	var raw uint64
	for _, s := range stats {
		raw += s.RawBytes
	}
	foff := cw.n + int64(len(buf))
	f := &footer{channels: channels, chunks: kept.chunks, stats: stats,
		writer: WriterStats{Records: rep.RecordsKept, Chunks: uint64(len(kept.chunks)), RawBytes: raw, BytesWritten: foff, Drops: dropSum}}
	buf = appendBlock(buf, kindFooter, appendFooterBody(nil, f))
	buf = appendTrailer(buf, foff)
	_, err = cw.Write(buf)
	rep.BytesWritten = cw.n
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
