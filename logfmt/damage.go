package logfmt

import "fmt"

// Damage is what of one log was not read as written: the findings every
// verb reports on stderr, in the same words (Lines), whatever it does
// with the records, and the one definition of an intact log (Intact).
type Damage struct {
	File string
	Size int64 // the file's size in bytes
	// TornTail is the byte offset where an unfinished log ends mid-block
	// (what a killed recorder leaves), -1 when it does not.
	TornTail int64
	// NoFooter: the log ends without its footer (the writer never closed
	// it: a recorder killed at a chunk boundary leaves no torn tail, yet
	// the recording was not finished). Not set for a live log (Live).
	NoFooter bool
	// Live says a writer still holds the log ("being written by PID 123
	// (record)"): its missing footer and the block cut at its end are
	// where the writer is, no damage, but it is not finished either.
	Live string
	// Skipped are the corrupt chunks (and other blocks) left out, each
	// naming the file and its offset (CorruptionError.Error).
	Skipped []string
	// ReadAround is damage read around without losing a record (a damaged
	// prelude, header block, footer index or trailer).
	ReadAround []string
}

// Damage is r's damage so far: a torn tail, a missing footer and the
// damage read around are known once Open returns, corrupt chunks skipped
// in tolerant mode only as the records are read, so call it after
// reading.
func (r *Reader) Damage() Damage {
	d := Damage{File: r.opts.Name, Size: r.size, TornTail: -1, NoFooter: r.noFooter && r.live == "", Live: r.live}
	if r.tornTail != nil && r.live == "" { // a live log ends where its writer is: no damage
		d.TornTail = r.tornTail.Offset
	}
	for _, ce := range r.SkippedChunks() {
		d.Skipped = append(d.Skipped, ce.Error())
	}
	for _, ce := range r.warnings {
		d.ReadAround = append(d.ReadAround, ce.Error())
	}
	return d
}

// Intact reports whether the log is whole: finished (its footer there, no
// writer holding it), no torn tail, no chunk skipped, no damage read
// around. Every verb's "intact" is this one (analyze --require-intact,
// verify's OK, the warnings of cat, export, replay, ...).
func (d Damage) Intact() bool { return d.NotIntact() == "" }

// NotIntact says in a few words why the log is not intact (the first
// reason), "" when it is.
func (d Damage) NotIntact() string {
	switch {
	case d.Live != "":
		return d.Live + ", not finished"
	case d.TornTail >= 0:
		return fmt.Sprintf("torn tail at byte %d (an unfinished recording)", d.TornTail)
	case d.NoFooter:
		return "no footer: the log was not closed (an unfinished recording)"
	case len(d.Skipped) > 0:
		return fmt.Sprintf("%d corrupt chunks skipped", len(d.Skipped))
	case len(d.ReadAround) > 0:
		return "damaged: " + d.ReadAround[0]
	}
	return ""
}

// Lines says each finding on one line, nil for an intact log or a live
// one (whose verbs say it is being written, in their own words).
func (d Damage) Lines() []string {
	var out []string
	if d.TornTail >= 0 {
		out = append(out, fmt.Sprintf("%s: torn tail at byte %d of %d: the log ends mid-block (an unfinished recording: a killed recorder?); the records before it were read", d.File, d.TornTail, d.Size))
	} else if d.NoFooter {
		out = append(out, fmt.Sprintf("%s: no footer: the log was not closed (an unfinished recording: a killed recorder?); what it holds was read by a linear scan (`vrlog recover` writes a finished copy)", d.File))
	}
	for _, s := range d.Skipped {
		out = append(out, "skipped corrupt chunk: "+s)
	}
	for _, s := range d.ReadAround {
		out = append(out, "damaged, read around it (no record lost): "+s)
	}
	return out
}
