package analyzer

import (
	"fmt"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// fileSnapshot is a snapshot input's own account of itself.
type fileSnapshot struct {
	path string
	s    *logfmt.Snapshot
}

// addSnapshot reads what a snapshot log says of its trigger and window
// (its header metadata); damaged metadata is a note, not a failure. The
// window is at most its records' span: a journal (`.partial`, or what
// recover made of one) carries the window asked when the trigger fired,
// and a recorder killed before it closed left fewer records than that.
func (a *Analysis) addSnapshot(path string, r *logfmt.Reader) bool {
	s, err := logfmt.ParseSnapshot(r.Header().Metadata)
	switch {
	case err != nil:
		a.notes = append(a.notes, fmt.Sprintf("%s: %v", path, err))
	case s != nil:
		if lo, hi, ok := recordSpan(r); ok {
			off := s.FromWallNs - s.FromMonoNs // the recorder's wall minus mono clock, as the metadata has it
			s.FromMonoNs, s.ToMonoNs = max(s.FromMonoNs, lo), min(s.ToMonoNs, hi)
			s.FromWallNs, s.ToWallNs = s.FromMonoNs+off, s.ToMonoNs+off
		}
		a.snaps = append(a.snaps, fileSnapshot{path, s})
		return true
	}
	return false
}

// recordSpan is the receive (mono) span of r's records, by its channel
// statistics.
func recordSpan(r *logfmt.Reader) (lo, hi int64, ok bool) {
	for _, st := range r.Stats() {
		if st.Records == 0 {
			continue
		}
		if !ok {
			lo, hi, ok = st.FirstMonoNs, st.LastMonoNs, true
		}
		lo, hi = min(lo, st.FirstMonoNs), max(hi, st.LastMonoNs)
	}
	return lo, hi, ok
}

// overlapStart is where to begin reading the snapshot just added (by
// RecvMonoNs; 0: from its start): past the end of earlier snapshots of the
// same recording whose windows overlap it, which hold the same records
// there. Counted twice, those records read as seq going back: restarts
// that never happened. apart says that it begins after every earlier
// snapshot of its recording ended: the time between was not captured.
func (a *Analysis) overlapStart() (start int64, apart bool) {
	if len(a.snaps) < 2 {
		return 0, false
	}
	cur := a.snaps[len(a.snaps)-1]
	if cur.s.Recording == "" {
		return 0, false
	}
	var end int64
	var with string
	same := false
	for _, p := range a.snaps[:len(a.snaps)-1] {
		if p.s.Recording != cur.s.Recording {
			continue
		}
		same = true
		if p.s.ToMonoNs >= cur.s.FromMonoNs && p.s.ToMonoNs > end {
			end, with = p.s.ToMonoNs, p.path
		}
	}
	if end == 0 {
		return 0, same
	}
	a.notes = append(a.notes, fmt.Sprintf("%s overlaps %s (snapshots of one recording) by %.3f s: their common records are counted once",
		cur.path, with, float64(min(end, cur.s.ToMonoNs)-cur.s.FromMonoNs)/1e9))
	return end + 1, false
}

// NotCaptured is time on the capture clock of which no record was kept:
// between two snapshots of one recording, or while a recording was
// paused. It is no skip, outage or restart, and no rate counts it.
type NotCaptured struct {
	// Why: "between snapshots" or "paused".
	Why    string `json:"why"`
	After  string `json:"after"`  // the file before it (the snapshot, or the paused file)
	Before string `json:"before"` // and the one after
	// Unwritten (a pause): the records the recorder received while paused.
	Unwritten   uint64  `json:"unwritten"`
	FromNs      int64   `json:"from_ns"`
	ToNs        int64   `json:"to_ns"`
	FromElapsed float64 `json:"from_elapsed"`
	ToElapsed   float64 `json:"to_elapsed"`
	GapS        float64 `json:"gap_s"`
}

// apart starts a captured span: r, the snapshot at path, was taken after
// the earlier snapshots of its recording ended, so every channel's
// timing starts afresh with its records (sampler.Stream.Break).
func (a *Analysis) apart(path string, r *logfmt.Reader) {
	var from int64
	for _, ch := range a.order {
		if ch.kind == KindProbe || ch.kind == KindRaw || ch.rep.Count == 0 {
			continue
		}
		from = max(from, ch.stream.Summary().MaxTNs)
	}
	to, have := int64(0), false
	for _, c := range r.Channels() {
		if st := r.StatsOf(c.ID); st.HasCapture && st.Records > 0 && kindOf(c.Schema) != KindProbe && (!have || st.FirstCaptureNs < to) {
			to, have = st.FirstCaptureNs, true
		}
	}
	for _, ch := range a.order {
		ch.stream.Break()
		if ch.lag != nil {
			ch.lag.Break()
		}
	}
	if from != 0 && have && to > from {
		a.gaps = append(a.gaps, NotCaptured{Why: "between snapshots", After: a.snaps[len(a.snaps)-2].path, Before: path, FromNs: from, ToNs: to,
			GapS: round3(float64(to-from)/1e9*1000) / 1000})
	}
}

// snapshots reports the snapshot inputs' triggers and windows; a recorder
// wall time reaches the elapsed scale (the capture clock) through the
// clock offset, when the log has clock-sync probes.
func (a *Analysis) snapshots(rep *Report) []SnapshotReport {
	var offset int64 // simulator clock minus recorder clock
	if rep.Clock != nil {
		offset = int64(rep.Clock.OffsetMs * 1e6)
	}
	el := func(wall int64) float64 { return round3(codec.Elapsed(wall+offset, rep.EpochNs)*1000) / 1000 }
	out := []SnapshotReport{}
	for _, fs := range a.snaps {
		s := fs.s
		sr := SnapshotReport{File: fs.path, Cause: s.Triggers[0].Cause, TriggerNs: s.Triggers[0].WallNs,
			BeforeS: s.Before.Seconds(), AfterS: s.After.Seconds(), FromNs: s.FromWallNs, ToNs: s.ToWallNs,
			FromElapsed: el(s.FromWallNs), ToElapsed: el(s.ToWallNs), Short: s.Short, Triggers: []TriggerItem{}, TriggerCount: s.TriggerCount}
		for _, t := range s.Triggers {
			ti := TriggerItem{Cause: t.Cause, AtNs: t.WallNs, Elapsed: el(t.WallNs), CaptureNs: t.CaptureNs}
			if t.CaptureNs != 0 {
				ti.Elapsed = round3(codec.Elapsed(t.CaptureNs, rep.EpochNs)*1000) / 1000
			}
			sr.Triggers = append(sr.Triggers, ti)
		}
		sr.TriggerElapsed = sr.Triggers[0].Elapsed
		out = append(out, sr)
	}
	return out
}
