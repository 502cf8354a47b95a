package logfmt

import (
	"errors"
	"fmt"
)

// ReadBack checks a log just written, before a tool reports success for
// it: a full Verify, then every record read through the index, payloads
// included. It returns the record count (which the caller compares with
// what it wrote).
func ReadBack(path string) (uint64, error) {
	rep, err := Verify(path, ReaderOptions{})
	if err != nil {
		return 0, err
	}
	if !rep.OK() {
		msg := fmt.Sprintf("%s: verification failed: footer %v, %d problems", path, rep.HasFooter, len(rep.Problems))
		if len(rep.Problems) > 0 {
			msg += ": " + rep.Problems[0].Error()
		}
		if rep.TornTail != nil {
			msg += ": torn tail: " + rep.TornTail.Error()
		}
		return 0, errors.New(msg)
	}
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if !r.Indexed() {
		return 0, fmt.Errorf("%s: no index after writing", path)
	}
	var n uint64
	it := r.Records(Filter{})
	for it.Next() {
		n++
	}
	if err := it.Err(); err != nil {
		return n, err
	}
	if n != rep.Records {
		return n, fmt.Errorf("%s: read %d records, verify counted %d", path, n, rep.Records)
	}
	return n, nil
}

// ReadBackCheck is ReadBack as an outfile.File.CommitChecked check: the
// log must read back with exactly records records.
func ReadBackCheck(records uint64) func(path string) error {
	return func(path string) error {
		got, err := ReadBack(path)
		if err == nil && got != records {
			err = fmt.Errorf("it holds %d records, %d were written", got, records)
		}
		return err
	}
}
