package analyzer

import (
	"fmt"

	"github.com/vrlog/vrlog/logfmt"
)

// damage is what was read of f, as logfmt says it of a reader.
func (f *FileReport) damage() logfmt.Damage {
	d := logfmt.Damage{File: f.Path, Size: f.SizeBytes, TornTail: f.TornTail, NoFooter: !f.Finished && f.BeingWritten == "",
		Live: f.BeingWritten, Skipped: f.SkippedChunks, ReadAround: f.Warnings}
	if f.BeingWritten != "" {
		d.TornTail = -1 // a live log: its end cut mid-block is where the writer is
	}
	return d
}

// Damage says, one line per finding and file, what of the inputs was not
// read as written: a torn tail or a missing footer (what a killed
// recorder leaves: analyzed up to it), a corrupt chunk skipped by
// --tolerant, damage read around. analyze prints these on stderr whatever
// its output, -q included, so a gate on a damaged or unfinished log never
// passes without saying so.
func (r *Report) Damage() []string {
	var d []string
	for i := range r.Files {
		f := &r.Files[i]
		if f.BeingWritten != "" {
			d = append(d, fmt.Sprintf("%s: %s: analyzed what was there when it was opened (no footer yet)", f.Path, f.BeingWritten))
		}
		d = append(d, f.damage().Lines()...)
	}
	return d
}

// Intact reports whether every input is intact (logfmt.Damage.Intact:
// finished, untorn, no chunk skipped, no damage read around).
func (r *Report) Intact() bool {
	for i := range r.Files {
		if !r.Files[i].damage().Intact() {
			return false
		}
	}
	return true
}

// Damaged reports whether an input was damaged: a torn tail, a skipped
// chunk or damage read around. An unfinished log (no footer) or a live
// one is not intact, yet not damaged.
func (r *Report) Damaged() bool {
	for i := range r.Files {
		d := r.Files[i].damage()
		d.NoFooter, d.Live = false, ""
		if !d.Intact() {
			return true
		}
	}
	return false
}

// CheckIntact adds one "intact" check per input file (--require-intact):
// it fails when the file is not intact (logfmt.Damage.Intact: unfinished,
// torn, a skipped corrupt chunk or damage read around), so a CI gate can
// refuse a log that is not whole.
func (r *Report) CheckIntact() {
	for i := range r.Files {
		f := &r.Files[i]
		why := f.damage().NotIntact()
		c := Check{Name: "intact", Channel: f.Path, Pass: why == "", Message: "intact " + f.Path + ": whole and undamaged"}
		if why != "" {
			c.Message = "intact " + f.Path + ": " + why
		}
		r.Checks = append(r.Checks, c)
	}
	r.updatePass()
}
