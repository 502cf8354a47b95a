package logfmt

import "fmt"

// Damage is what of one log was not read as written: the findings every
// verb reports on stderr, in the same words (Lines), whatever it does
// with the records.
type Damage struct {
	File string
	Size int64 // the file's size in bytes
	// TornTail is the byte offset where an unfinished log ends mid-block
	// (what a killed recorder leaves), -1 when it does not.
	TornTail int64
	// Skipped are the corrupt chunks (and other blocks) left out, each
	// naming the file and its offset (CorruptionError.Error).
	Skipped []string
	// ReadAround is damage read around without losing a record (a damaged
	// prelude, header block, footer index or trailer).
	ReadAround []string
}

// Damage is r's damage so far: a torn tail and the damage read around are
// known once Open returns, corrupt chunks skipped in tolerant mode only
// as the records are read, so call it after reading.
func (r *Reader) Damage() Damage {
	d := Damage{File: r.opts.Name, Size: r.size, TornTail: -1}
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

// Lines says each finding on one line, nil for a sound log.
func (d Damage) Lines() []string {
	var out []string
	if d.TornTail >= 0 {
		out = append(out, fmt.Sprintf("%s: torn tail at byte %d of %d: the log ends mid-block (an unfinished recording: a killed recorder?); the records before it were read", d.File, d.TornTail, d.Size))
	}
	for _, s := range d.Skipped {
		out = append(out, "skipped corrupt chunk: "+s)
	}
	for _, s := range d.ReadAround {
		out = append(out, "damaged, read around it (no record lost): "+s)
	}
	return out
}
