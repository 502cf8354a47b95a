package mcapexport

import (
	"fmt"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// Records iterates a log's records from their metadata only, except for the
// channels named in full, whose payloads are read alongside by a second
// iterator over just those channels: a CSV export decodes every state
// without reading one frame pixel. Both iterators walk the reader's one
// order (RecvMonoNs, ties in file order), so the second one's records are
// exactly the first one's records of those channels; Next checks it.
type Records struct {
	meta, full *logfmt.Iterator
	want       []bool
	rec        *logfmt.Record
	err        error
}

// NewRecords iterates the records sel selects, with the payloads of the
// channels in full (sel.MetaOnly is ignored; sel.Workers loads their
// chunks ahead).
func NewRecords(r *logfmt.Reader, sel *logfmt.Selection, full []uint16) *Records {
	ms := *sel
	ms.MetaOnly, ms.Workers = true, 0 // metadata alone is quick: read-ahead only for the payloads
	f := ms.Filter()
	it := &Records{meta: r.Read(&ms)}
	if len(full) > 0 {
		ff := f
		ff.MetaOnly, ff.Channels, ff.Workers = false, full, sel.Workers
		it.full = r.Records(ff)
		it.want = make([]bool, 1<<16)
		for _, id := range full {
			it.want[id] = true
		}
	}
	return it
}

// Next advances to the next record.
func (it *Records) Next() bool {
	if it.err != nil || !it.meta.Next() {
		return false
	}
	it.rec = it.meta.Record()
	if it.want == nil || !it.want[it.rec.Channel] {
		return true
	}
	if !it.full.Next() {
		if it.err = it.full.Err(); it.err == nil {
			it.err = fmt.Errorf("mcapexport: payload pass ended before record at mono %d", it.rec.RecvMonoNs)
		}
		return false
	}
	f := it.full.Record()
	if f.Channel != it.rec.Channel || f.RecvMonoNs != it.rec.RecvMonoNs || f.RecvWallNs != it.rec.RecvWallNs {
		it.err = fmt.Errorf("mcapexport: payload pass disagrees with the metadata pass at mono %d", it.rec.RecvMonoNs)
		return false
	}
	it.rec = f
	return true
}

// Close stops both iterations (and the payload pass's read-ahead,
// sel.Workers): needed only when stopping before Next returned false.
func (it *Records) Close() {
	it.meta.Close()
	if it.full != nil {
		it.full.Close()
	}
}

// Record is the current record (valid until the next call to Next); it
// carries its payload when its channel is one of full.
func (it *Records) Record() *logfmt.Record { return it.rec }

// Err is the first error of either pass.
func (it *Records) Err() error {
	if it.err != nil {
		return it.err
	}
	if err := it.meta.Err(); err != nil {
		return err
	}
	if it.full != nil {
		return it.full.Err()
	}
	return nil
}

// MaxSensors reads the states f selects (f.Channels: the state channels)
// and returns the largest sensor_count per channel: the sensor slots of a
// CSV table, known before its header row.
func MaxSensors(r *logfmt.Reader, f logfmt.Filter) (map[uint16]int, error) {
	out := map[uint16]int{}
	if len(f.Channels) == 0 {
		return out, nil // no state channel (an empty filter would select all)
	}
	f.MetaOnly = false
	var s codec.State
	it := r.Records(f)
	for it.Next() {
		rec := it.Record()
		if codec.DecodeStateInto(&s, rec.Payload, 0) == nil {
			out[rec.Channel] = max(out[rec.Channel], len(s.Sensors))
		}
	}
	return out, it.Err()
}
