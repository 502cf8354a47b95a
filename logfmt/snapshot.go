package logfmt

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Snapshot is what a snapshot log (record --snapshot) says of itself in
// its header metadata (docs/log-format.md, section 4): what triggered it,
// and the receive-time window its records were taken from. Nothing else
// in the format differs.
type Snapshot struct {
	// Triggers: the first opened the window, later ones (while it was
	// still open) extended it; at most MaxSnapshotTriggers are kept, and
	// TriggerCount counts them all.
	Triggers     []SnapshotTrigger
	TriggerCount int
	// Before and After are the window asked for around the triggers.
	Before, After time.Duration
	// From and To bound the records' receive stamps, both included, on
	// the recorder's monotonic clock (which selected them) and wall clock.
	FromMonoNs, ToMonoNs int64
	FromWallNs, ToWallNs int64
	// Short says why the window holds less than asked ("" when it holds
	// all of it): the memory bound, or the recording's start or end.
	Short string
	// HeldOpen says why the window ends past To asked ("" when it does
	// not): a stream received late was waited for.
	HeldOpen string
	// Recording identifies the recording the snapshot was cut from (one
	// id per recorder run; "" in older snapshots): snapshots of one
	// recording whose windows overlap hold the same records there.
	Recording string
	// SessionEpochNs is the recording's session epoch, the t_ns of the
	// first state sample the recorder received (HasSessionEpoch), which
	// may be long before the window: every verb counts elapsed from it,
	// so that times read as the controller's own.
	SessionEpochNs  int64
	HasSessionEpoch bool
}

// SnapshotTrigger is one trigger of a snapshot.
type SnapshotTrigger struct {
	Cause  string `json:"cause"`
	WallNs int64  `json:"wall_ns"` // when, on the recorder's wall clock
	MonoNs int64  `json:"mono_ns"` // and on its monotonic clock
	// CaptureNs is the capture stamp of the sample that showed a timing
	// fault (0 for a signal or a query).
	CaptureNs int64 `json:"capture_ns"`
}

// MaxSnapshotTriggers bounds the triggers a snapshot's metadata lists: a
// fault that recurs keeps a window open, and its header small.
const MaxSnapshotTriggers = 100

// Snapshot metadata keys.
const (
	metaSnapshotCount    = "vrlog.snapshot.trigger_count"
	metaSnapshotCause    = "vrlog.snapshot.cause"
	metaSnapshotTrigger  = "vrlog.snapshot.trigger_ns"
	metaSnapshotTriggers = "vrlog.snapshot.triggers"
	metaSnapshotBefore   = "vrlog.snapshot.before"
	metaSnapshotAfter    = "vrlog.snapshot.after"
	metaSnapshotFrom     = "vrlog.snapshot.from_ns"
	metaSnapshotTo       = "vrlog.snapshot.to_ns"
	metaSnapshotFromMono = "vrlog.snapshot.from_mono_ns"
	metaSnapshotToMono   = "vrlog.snapshot.to_mono_ns"
	metaSnapshotShort    = "vrlog.snapshot.short"
	metaSnapshotHeldOpen = "vrlog.snapshot.held_open"
	metaSnapshotRec      = "vrlog.snapshot.recording"
	metaSnapshotEpoch    = "vrlog.snapshot.session_epoch_ns"
)

// AddTo stores s in a log's metadata md.
func (s *Snapshot) AddTo(md map[string]string) {
	list, _ := json.Marshal(s.Triggers) // plain values: cannot fail
	md[metaSnapshotTriggers] = string(list)
	if len(s.Triggers) > 0 {
		md[metaSnapshotCause] = s.Triggers[0].Cause
		md[metaSnapshotTrigger] = strconv.FormatInt(s.Triggers[0].WallNs, 10)
	}
	md[metaSnapshotCount] = strconv.Itoa(s.TriggerCount)
	md[metaSnapshotBefore], md[metaSnapshotAfter] = s.Before.String(), s.After.String()
	for k, v := range map[string]int64{metaSnapshotFrom: s.FromWallNs, metaSnapshotTo: s.ToWallNs,
		metaSnapshotFromMono: s.FromMonoNs, metaSnapshotToMono: s.ToMonoNs} {
		md[k] = strconv.FormatInt(v, 10)
	}
	if s.Short != "" {
		md[metaSnapshotShort] = s.Short
	}
	if s.HeldOpen != "" {
		md[metaSnapshotHeldOpen] = s.HeldOpen
	}
	if s.Recording != "" {
		md[metaSnapshotRec] = s.Recording
	}
	if s.HasSessionEpoch {
		md[metaSnapshotEpoch] = strconv.FormatInt(s.SessionEpochNs, 10)
	}
}

// SnapshotEpoch is the session epoch a snapshot log's metadata md stores
// (Snapshot.SessionEpochNs); ok is false when md has none (not a
// snapshot, or an older one). A damaged value is an error.
func SnapshotEpoch(md map[string]string) (ns int64, ok bool, err error) {
	v, has := md[metaSnapshotEpoch]
	if !has {
		return 0, false, nil
	}
	ns, err = strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%w: snapshot metadata %s: %v", ErrMalformed, metaSnapshotEpoch, err)
	}
	return ns, true, nil
}

// MetaSessionEpoch is the metadata key of the session epoch a log keeps
// from the log it was made of (cut, merge): unix ns, decimal. Elapsed
// counts from it, as in the source, though the log's own first state may
// be later.
const MetaSessionEpoch = "vrlog.session_epoch_ns"

// MetaSessionEpochSource says what the stored session epoch is (the
// first state sample on a channel, of which input), as analyze's
// epoch_source says it: a later merge or analysis of the log can tell a
// first state sample from a fallback (a log without states: its earliest
// capture stamp), which never wins over a log with the state stream.
const MetaSessionEpochSource = "vrlog.session_epoch_source"

// StoredEpoch is the session epoch a log's metadata md stores: under
// MetaSessionEpoch (cut, merge), else a snapshot's (SnapshotEpoch); ok is
// false when md has neither. A damaged value is an error.
func StoredEpoch(md map[string]string) (ns int64, ok bool, err error) {
	v, has := md[MetaSessionEpoch]
	if !has {
		return SnapshotEpoch(md)
	}
	if ns, err = strconv.ParseInt(v, 10, 64); err != nil {
		return 0, false, fmt.Errorf("%w: metadata %s: %v", ErrMalformed, MetaSessionEpoch, err)
	}
	return ns, true, nil
}

// ParseSnapshot reads what AddTo stored; nil, nil when md is not a
// snapshot's.
func ParseSnapshot(md map[string]string) (*Snapshot, error) {
	list, ok := md[metaSnapshotTriggers]
	if !ok {
		return nil, nil
	}
	s := &Snapshot{Short: md[metaSnapshotShort], HeldOpen: md[metaSnapshotHeldOpen], Recording: md[metaSnapshotRec]}
	bad := func(key string, err error) error {
		return fmt.Errorf("%w: snapshot metadata %s: %v", ErrMalformed, key, err)
	}
	var err error
	if err = json.Unmarshal([]byte(list), &s.Triggers); err != nil {
		return nil, bad(metaSnapshotTriggers, err)
	}
	if len(s.Triggers) == 0 {
		return nil, bad(metaSnapshotTriggers, fmt.Errorf("no trigger"))
	}
	if s.TriggerCount, err = strconv.Atoi(md[metaSnapshotCount]); err != nil || s.TriggerCount < len(s.Triggers) {
		return nil, bad(metaSnapshotCount, fmt.Errorf("%q for %d triggers listed", md[metaSnapshotCount], len(s.Triggers)))
	}
	for k, d := range map[string]*time.Duration{metaSnapshotBefore: &s.Before, metaSnapshotAfter: &s.After} {
		v, err := time.ParseDuration(md[k])
		if err != nil {
			return nil, bad(k, err)
		}
		*d = v
	}
	for k, p := range map[string]*int64{metaSnapshotFrom: &s.FromWallNs, metaSnapshotTo: &s.ToWallNs,
		metaSnapshotFromMono: &s.FromMonoNs, metaSnapshotToMono: &s.ToMonoNs} {
		v, err := strconv.ParseInt(md[k], 10, 64)
		if err != nil {
			return nil, bad(k, err)
		}
		*p = v
	}
	if s.SessionEpochNs, s.HasSessionEpoch, err = SnapshotEpoch(md); err != nil {
		return nil, err
	}
	return s, nil
}
