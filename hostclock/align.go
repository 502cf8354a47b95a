package hostclock

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
)

var (
	// ErrAmbiguous: a log probed several time services and nothing chose
	// the one whose clock to use.
	ErrAmbiguous = errors.New("hostclock: several time services")
	// ErrServiceMismatch: the inputs probed different time services, so
	// their models map onto different clocks.
	ErrServiceMismatch = errors.New("hostclock: the inputs probed different time services")
	// ErrAligned: the log's receive stamps are already on a simulator's
	// clock (a merge put them there).
	ErrAligned = errors.New("hostclock: already on the simulator's clock")
)

// Alignment puts several hosts' logs on one simulator's clock, each with
// the model of its own probes of that simulator's time service. It is the
// Restamp of a merge (logfmt.MergeOptions).
//
// A receive wall stamp w of input i becomes ToSim_i(w). A monotonic stamp
// m becomes ToSim_i(m + D_i) − C, D_i being the input's wall-minus-
// monotonic difference (constant on Linux but for clock steps: both clocks
// follow NTP's frequency corrections) and C the first input's D plus its
// offset: the merged log's monotonic stamps are the simulator's clock
// minus C, so they order records as the converted wall stamps do, each
// host's receive intervals are kept (scaled by its drift, when the probes
// measured one), and the first input's are unchanged without drift.
// Replay paces by them.
type Alignment struct {
	service string
	inputs  []aligned
	c       int64 // C: simulator time minus the merged log's monotonic time
}

// aligned is one input's conversion.
type aligned struct {
	file          string
	model         Model
	wallMinusMono int64    // D_i
	data          []uint16 // its channels other than probes, for SimClock
	recoveredFrom string   // logfmt.MetaRecoveredFrom of its header
}

// Align builds the alignment of rs, named files in errors. service, if
// not nil, chooses the time service among each log's probe channels
// (matched against their service and name); without it each log must have
// probed exactly one. Every input must end up with the
// same service. An input without usable probes of it (ErrNoProbes), with
// several (ErrAmbiguous), or already on the simulator's clock
// (ErrAligned) is an error naming its file.
func Align(rs []*logfmt.Reader, files []string, service *keyexpr.Pattern) (*Alignment, error) {
	a := &Alignment{}
	for i, r := range rs {
		if sc, _ := ParseSimClock(r.Header().Metadata); sc != nil {
			return nil, fmt.Errorf("%s: %w (merged from %s): merge the hosts' own logs", files[i], ErrAligned, sc.files())
		}
		m, err := chooseModel(r, service)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", files[i], err)
		}
		if i == 0 {
			a.service = m.Service
		} else if m.Service != a.service {
			return nil, fmt.Errorf("%w: %s probed %s, %s probed %s; they may be different simulators' clocks", ErrServiceMismatch,
				files[0], a.service, files[i], m.Service)
		}
		d, err := wallMinusMono(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", files[i], err)
		}
		in := aligned{file: files[i], model: m, wallMinusMono: d, recoveredFrom: r.Header().Metadata[logfmt.MetaRecoveredFrom]}
		for _, c := range r.Channels() {
			if !IsProbe(c) {
				in.data = append(in.data, c.ID)
			}
		}
		a.inputs = append(a.inputs, in)
	}
	if len(a.inputs) > 0 {
		a.c = a.inputs[0].wallMinusMono + a.inputs[0].model.OffsetNs()
	}
	return a, nil
}

// chooseModel is the model of the probe channel pat selects (any, if nil):
// exactly one must match.
func chooseModel(r *logfmt.Reader, pat *keyexpr.Pattern) (Model, error) {
	chans, err := probeChannels(r)
	if err != nil {
		return Model{}, err
	}
	var services, matched []string
	var chosen *probes
	for _, p := range chans {
		services = append(services, p.ch.Topic)
		if pat == nil || pat.Match(p.ch.Topic) || pat.Match(p.ch.Name) {
			matched = append(matched, p.ch.Topic)
			chosen = p
		}
	}
	switch {
	case len(matched) == 0:
		return Model{}, fmt.Errorf("%w of a time service matching %s (it probed %s)", ErrNoProbes, pat, strings.Join(services, ", "))
	case len(matched) > 1 && pat == nil:
		return Model{}, fmt.Errorf("%w probed: %s", ErrAmbiguous, strings.Join(matched, ", "))
	case len(matched) > 1:
		return Model{}, fmt.Errorf("%w match %s: %s", ErrAmbiguous, pat, strings.Join(matched, ", "))
	}
	return chosen.model()
}

// wallMinusMono is the log's receive wall stamp minus its monotonic one:
// the median over its first records (their difference moves only when
// the wall clock is stepped).
func wallMinusMono(r *logfmt.Reader) (int64, error) {
	const n = 255
	var d []int64
	it := r.Records(logfmt.Filter{MetaOnly: true})
	for len(d) < n && it.Next() {
		rec := it.Record()
		d = append(d, rec.RecvWallNs-rec.RecvMonoNs)
	}
	if err := it.Err(); err != nil {
		return 0, err
	}
	if len(d) == 0 {
		return 0, errors.New("hostclock: the log has no records")
	}
	slices.Sort(d)
	return d[len(d)/2], nil
}

// Service is the time service whose clock the inputs are put on.
func (a *Alignment) Service() string { return a.service }

// Model is input i's clock model.
func (a *Alignment) Model(i int) Model { return a.inputs[i].model }

// Restamp puts record r of input i on the simulator's clock: its receive
// wall and monotonic stamps (see Alignment). A probe's payload keeps its
// host's stamps, so its estimate can be made again from the merged log.
func (a *Alignment) Restamp(i int, r *logfmt.Record) {
	in := &a.inputs[i]
	r.RecvWallNs = in.model.ToSim(r.RecvWallNs)
	r.RecvMonoNs = in.model.ToSim(r.RecvMonoNs+in.wallMinusMono) - a.c
}

// SimClock describes the alignment for the merged log's metadata; plan
// names each input's probe channel in the merged log.
func (a *Alignment) SimClock(plan *logfmt.MergePlan) SimClock {
	sc := SimClock{Service: a.service, SimMinusMonoNs: a.c, Hosts: []Host{}}
	for i, in := range a.inputs {
		e := in.model.Estimate
		sc.Hosts = append(sc.Hosts, Host{File: in.file, ProbeChannel: plan.Name(i, in.model.ChannelID),
			OffsetNs: e.OffsetNs, UncertaintyNs: in.model.UncertaintyNs(), RTTNs: e.RTTNs, Probes: e.Probes, Used: e.Used,
			DriftPPM: e.DriftPPM, DriftValid: e.DriftValid, RefNs: e.RefNs, WallMinusMonoNs: in.wallMinusMono,
			RecoveredFrom: in.recoveredFrom})
		h := &sc.Hosts[len(sc.Hosts)-1]
		for _, id := range in.data {
			if n := plan.Name(i, id); n != "" && !slices.Contains(h.Channels, n) {
				h.Channels = append(h.Channels, n)
			}
		}
	}
	return sc
}
