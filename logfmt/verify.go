package logfmt

import (
	"fmt"
	"io"
	"reflect"
	"sort"

	"github.com/vrlog/vrlog/outfile"
)

// VerifyReport is the result of a full check of a log.
type VerifyReport struct {
	File      string
	HasFooter bool // a valid footer and trailer end the file
	Chunks    int  // chunks that passed every check
	Records   uint64
	Channels  int
	// Problems lists every damaged structure, by byte offset: in the
	// middle of the file (bad CRC, malformed block, footer disagreeing
	// with the chunks), and the damage readers read around with a
	// warning (prelude, header block, footer, trailer).
	Problems []*CorruptionError
	// TornTail is where the file ends in an incomplete block, or nil.
	TornTail *CorruptionError
	// Live says that a writer holds the file as a live log ("being
	// written by PID 123 (record)"), "" otherwise: its missing footer and
	// the chunk being written at its end are no damage, but it is not
	// finished either.
	Live string
}

// OK reports a clean file: closed properly and nothing damaged (its
// Damage is Intact).
func (v *VerifyReport) OK() bool { return v.Damage().Intact() }

// Damage is what the check found, as a reader reports it (every problem
// counts as a skipped chunk): one definition of intact for verify and
// the verbs that read.
func (v *VerifyReport) Damage() Damage {
	d := Damage{File: v.File, TornTail: -1, NoFooter: !v.HasFooter && v.Live == "", Live: v.Live}
	if v.TornTail != nil && v.Live == "" {
		d.TornTail = v.TornTail.Offset
	}
	for _, p := range v.Problems {
		d.Skipped = append(d.Skipped, p.Error())
	}
	return d
}

// Verify checks a whole log without trusting its footer: every block
// header, every CRC (meta sections and payload blocks), every record's
// metadata against its chunk's directory, and the footer against what
// the scan found. Damage goes into the report; the error is for files
// that cannot be checked at all (not a vrlog file, I/O errors).
func Verify(path string, opts ReaderOptions) (*VerifyReport, error) {
	f, size, err := openLogFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opts.Name = path
	live := outfile.Describe(f)
	rep, err := verify(f, size, opts)
	if rep != nil {
		rep.Live = live
	}
	return rep, err
}

func verify(ra io.ReaderAt, size int64, opts ReaderOptions) (*VerifyReport, error) {
	o := opts.withDefaults()
	if o.Name == "" {
		o.Name = "log"
	}
	l := &chunkLoader{ra: ra, size: size, opts: o}
	defer l.close()
	sv, err := surveyLog(l, false)
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{File: o.Name, TornTail: sv.tornTail, Chunks: len(sv.good), Records: sv.records, Channels: len(sv.channels)}
	if sv.prelude != nil {
		rep.Problems = append(rep.Problems, sv.prelude)
	}
	rep.Problems = append(rep.Problems, sv.warnings...)
	rep.Problems = append(rep.Problems, sv.problems...)
	if sv.headerOff < 0 && !sv.headerDamaged {
		rep.Problems = append(rep.Problems, corrupt(o.Name, preludeSize, "header block", "a header block after the prelude", ErrMalformed))
	}
	rep.Problems = append(rep.Problems, sv.damaged...)
	rep.Problems = append(rep.Problems, sv.undefined...)
	if sv.footer != nil {
		if foff, ok := l.trailerAt(size - trailerSize); ok && foff == sv.footerOff {
			rep.HasFooter = true
		}
		if err := compareFooter(sv.scanResult, sv.footer); err != nil {
			rep.Problems = append(rep.Problems, corrupt(o.Name, sv.footerOff, "footer block", "an index matching the chunks", err))
		}
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rep.Problems[i].Offset < rep.Problems[j].Offset })
	return rep, nil
}

// compareFooter checks that the footer says what a scan of the blocks
// says: channels, chunk index, statistics.
func compareFooter(res *scanResult, f *footer) error {
	if len(res.problems) > 0 || res.tornTail != nil {
		return nil // the scan is incomplete; the damage is reported already
	}
	channels, stats := res.index()
	if !reflect.DeepEqual(normChannels(f.channels), normChannels(channels)) {
		return fmt.Errorf("%w: channel table differs from channel blocks", ErrMalformed)
	}
	if !reflect.DeepEqual(f.chunks, res.chunks) && !(len(f.chunks) == 0 && len(res.chunks) == 0) {
		return fmt.Errorf("%w: chunk index differs from chunks", ErrMalformed)
	}
	if !reflect.DeepEqual(f.stats, stats) && !(len(f.stats) == 0 && len(stats) == 0) {
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
