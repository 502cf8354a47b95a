package analyzer

import (
	"fmt"

	"github.com/vrlog/vrlog/logfmt"
)

// Damage says, one line per finding and file, what of the inputs was not
// read as written: a torn tail (what a killed recorder leaves: analyzed up
// to it), a corrupt chunk skipped by --tolerant, damage read around. analyze
// prints these on stderr whatever its output, -q included, so a gate on a
// damaged log never passes without saying so.
func (r *Report) Damage() []string {
	var d []string
	for _, f := range r.Files {
		tt := f.TornTail
		if f.BeingWritten != "" {
			// A live log: its end cut mid-block is where the writer is.
			d = append(d, fmt.Sprintf("%s: %s: analyzed what was there when it was opened (no footer yet)", f.Path, f.BeingWritten))
			tt = -1
		}
		d = append(d, logfmt.Damage{File: f.Path, Size: f.SizeBytes, TornTail: tt, Skipped: f.SkippedChunks, ReadAround: f.Warnings}.Lines()...)
	}
	return d
}

// CheckIntact adds one "intact" check per input file (--require-intact):
// it fails when the file has a torn tail, a skipped corrupt chunk or
// damage read around, so a CI gate can refuse a log that is not whole.
func (r *Report) CheckIntact() {
	for _, f := range r.Files {
		why := ""
		switch {
		case f.BeingWritten != "":
			why = f.BeingWritten
		case f.TornTail >= 0:
			why = fmt.Sprintf("torn tail at byte %d", f.TornTail)
		case len(f.SkippedChunks) > 0:
			why = fmt.Sprintf("%d corrupt chunks skipped", len(f.SkippedChunks))
		case len(f.Warnings) > 0:
			why = "damaged: " + f.Warnings[0]
		}
		c := Check{Name: "intact", Channel: f.Path, Pass: why == "", Message: "intact " + f.Path + ": whole and undamaged"}
		if why != "" {
			c.Message = "intact " + f.Path + ": " + why
		}
		r.Checks = append(r.Checks, c)
	}
	r.updatePass()
}
