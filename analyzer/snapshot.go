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
// (its header metadata); damaged metadata is a note, not a failure.
func (a *Analysis) addSnapshot(path string, h logfmt.Header) bool {
	s, err := logfmt.ParseSnapshot(h.Metadata)
	switch {
	case err != nil:
		a.notes = append(a.notes, fmt.Sprintf("%s: %v", path, err))
	case s != nil:
		a.snaps = append(a.snaps, fileSnapshot{path, s})
		return true
	}
	return false
}

// overlapStart is where to begin reading the snapshot just added (by
// RecvMonoNs; 0: from its start): past the end of earlier snapshots of the
// same recording whose windows overlap it, which hold the same records
// there. Counted twice, those records read as seq going back: restarts
// that never happened.
func (a *Analysis) overlapStart() int64 {
	if len(a.snaps) < 2 {
		return 0
	}
	cur := a.snaps[len(a.snaps)-1]
	if cur.s.Recording == "" {
		return 0
	}
	var end int64
	var with string
	for _, p := range a.snaps[:len(a.snaps)-1] {
		if p.s.Recording == cur.s.Recording && p.s.ToMonoNs >= cur.s.FromMonoNs && p.s.ToMonoNs > end {
			end, with = p.s.ToMonoNs, p.path
		}
	}
	if end == 0 {
		return 0
	}
	a.notes = append(a.notes, fmt.Sprintf("%s overlaps %s (snapshots of one recording) by %.3f s: their common records are counted once",
		cur.path, with, float64(min(end, cur.s.ToMonoNs)-cur.s.FromMonoNs)/1e9))
	return end + 1
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
