package fleetctl

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/logfmt"
)

// ErrNoSimClock: the merged log is not on the simulator's clock, so the
// recorders' starts cannot be compared.
var ErrNoSimClock = errors.New("fleetctl: the merged log is not on the simulator's clock")

// Skew is how far apart the recorders' recordings began: each one's
// first record, on the simulator's clock.
type Skew struct {
	// SpreadNs is the last first record minus the earliest;
	// UncertaintyNs bounds its error (the two hosts' clock models').
	SpreadNs      int64         `json:"spread_ns"`
	UncertaintyNs int64         `json:"uncertainty_ns"`
	Firsts        []FirstRecord `json:"first_records"`
}

// FirstRecord is one recorder's first record of the recording.
type FirstRecord struct {
	Name string `json:"name"`
	File string `json:"file"` // the collected file it is in
	// SimNs is its receive stamp on the simulator's clock; AfterNs how
	// long after the earliest recorder's it came.
	SimNs         int64 `json:"sim_ns"`
	AfterNs       int64 `json:"after_ns"`
	UncertaintyNs int64 `json:"uncertainty_ns"` // its host's clock model's
}

// StartSkew measures the start skew of a recording merged on the
// simulator's clock into merged from files, each recorder's collected
// files by its name: the first record on a data channel (not the
// recorder's own channels, not its clock probes) of each recorder's
// files, converted with the host's clock model as the merge stored it.
// A recorder whose files hold no data record is left out.
func StartSkew(merged string, files map[string][]string) (Skew, error) {
	r, err := logfmt.Open(merged, logfmt.ReaderOptions{})
	if err != nil {
		return Skew{}, err
	}
	sc, err := hostclock.ParseSimClock(r.Header().Metadata)
	r.Close()
	if err != nil {
		return Skew{}, err
	}
	if sc == nil {
		return Skew{}, fmt.Errorf("%w: %s", ErrNoSimClock, merged)
	}
	hosts := map[string]hostclock.Host{}
	for _, h := range sc.Hosts {
		for _, f := range h.Inputs() {
			hosts[f] = h
		}
	}
	var sk Skew
	for name, paths := range files {
		first := FirstRecord{Name: name, SimNs: math.MaxInt64}
		for _, p := range paths {
			h, ok := hosts[p]
			if !ok {
				return Skew{}, fmt.Errorf("fleetctl: %s is not an input of %s", p, merged)
			}
			wall, ok, err := firstData(p)
			if err != nil {
				return Skew{}, err
			}
			if sim := h.ToSim(wall); ok && sim < first.SimNs {
				first.SimNs, first.File, first.UncertaintyNs = sim, p, h.UncertaintyNs
			}
		}
		if first.File != "" {
			sk.Firsts = append(sk.Firsts, first)
		}
	}
	if len(sk.Firsts) == 0 {
		return sk, nil
	}
	sort.Slice(sk.Firsts, func(i, j int) bool { return sk.Firsts[i].SimNs < sk.Firsts[j].SimNs })
	early, late := sk.Firsts[0], sk.Firsts[len(sk.Firsts)-1]
	for i := range sk.Firsts {
		sk.Firsts[i].AfterNs = sk.Firsts[i].SimNs - early.SimNs
	}
	sk.SpreadNs, sk.UncertaintyNs = late.SimNs-early.SimNs, early.UncertaintyNs+late.UncertaintyNs
	if len(sk.Firsts) == 1 {
		sk.UncertaintyNs = 0
	}
	return sk, nil
}

// lookAhead is how far past its earliest data record so far a log is
// read for an earlier one: a recorder writes its records in the order it
// received them but for its lanes' batching, far less than this apart.
const lookAhead = int64(1e9)

// firstData is the earliest receive wall stamp of a record on a data
// channel of the log at path (ok false when it has none).
func firstData(path string) (wall int64, ok bool, err error) {
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		return 0, false, err
	}
	defer r.Close()
	var data []uint16
	for _, c := range r.Channels() {
		if c.Transport != logfmt.TransportInternal && !hostclock.IsProbe(c) {
			data = append(data, c.ID)
		}
	}
	if len(data) == 0 {
		return 0, false, nil
	}
	it := r.Records(logfmt.Filter{Channels: data, MetaOnly: true})
	for it.Next() {
		w := it.Record().RecvWallNs
		if ok && w > wall+lookAhead {
			break
		}
		if !ok || w < wall {
			wall, ok = w, true
		}
	}
	return wall, ok, it.Err()
}
