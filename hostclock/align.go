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

// Alignment puts several hosts' logs on one simulator's clock, each host
// with the model of its own probes of that simulator's time service. It
// is the Restamp of a merge (logfmt.MergeOptions).
//
// A host is one recorder's clock: the inputs that share a recording id
// (MetaRecording: the split files of one recording, the recovered copy of
// its last), or the inputs the caller names one host (AlignOptions.Hosts:
// the files collected from one recorder). Its model is estimated from the
// probes of all its inputs, so a host split into many short files gets
// one model from all its probes, not one from each file's few.
//
// A receive wall stamp w of input i becomes ToSim_h(w), h its host. A
// monotonic stamp m becomes ToSim_h(m + D_i) − C, D_i being the input's
// wall-minus-monotonic difference (constant on Linux but for clock steps:
// both clocks follow NTP's frequency corrections) and C the first input's
// D plus its offset: the merged log's monotonic stamps are the
// simulator's clock minus C, so they order records as the converted wall
// stamps do, each host's receive intervals are kept (scaled by its drift,
// when the probes measured one), and the first input's are unchanged
// without drift. Replay paces by them.
type Alignment struct {
	service string
	inputs  []aligned
	hosts   []alignedHost
	c       int64 // C: simulator time minus the merged log's monotonic time
}

// aligned is one input's conversion.
type aligned struct {
	file          string
	host          int // its index in hosts
	probes        *probes
	wallMinusMono int64    // D_i
	data          []uint16 // its channels other than probes, for SimClock
	recoveredFrom string   // logfmt.MetaRecoveredFrom of its header
}

// alignedHost is one host's inputs and model.
type alignedHost struct {
	name   string // AlignOptions.Hosts' name, or ""
	inputs []int
	probed []string // the time services its files probed
	model  Model
}

// AlignOptions choose the clock and say which inputs are one host.
type AlignOptions struct {
	// Service, if not nil, chooses the time service among each log's
	// probe channels (matched against their service and name); without
	// it each log must have probed exactly one.
	Service *keyexpr.Pattern
	// Hosts, if not nil, names each input's host: inputs of one name are
	// one host (a name is e.g. the recorder they were collected from).
	// An input without a name is one host with the others of its
	// recording (MetaRecording), or alone.
	Hosts []string
}

// Align builds the alignment of rs, named files in errors. Every input
// must end up with the same service. A host without usable probes of it
// (ErrNoProbes), an input with several (ErrAmbiguous), or an input
// already on the simulator's clock (ErrAligned) is an error naming its
// files.
func Align(rs []*logfmt.Reader, files []string, o AlignOptions) (*Alignment, error) {
	a := &Alignment{}
	byKey := map[string]int{}
	for i, r := range rs {
		if sc, _ := ParseSimClock(r.Header().Metadata); sc != nil {
			return nil, fmt.Errorf("%s: %w (merged from %s): merge the hosts' own logs", files[i], ErrAligned, sc.files())
		}
		key, name := hostKey(r, i, o.Hosts)
		h, ok := byKey[key]
		if !ok {
			h = len(a.hosts)
			byKey[key] = h
			a.hosts = append(a.hosts, alignedHost{name: name})
		}
		a.hosts[h].inputs = append(a.hosts[h].inputs, i)
		p, services, err := chooseProbes(r, o.Service)
		for _, sv := range services {
			if !slices.Contains(a.hosts[h].probed, sv) {
				a.hosts[h].probed = append(a.hosts[h].probed, sv)
			}
		}
		switch {
		case errors.Is(err, errNoProbeChannel):
			// a file of a host whose probes are in its other files
		case err != nil:
			return nil, fmt.Errorf("%s: %w", files[i], err)
		case a.service == "":
			a.service = p.ch.Topic
		case p.ch.Topic != a.service:
			return nil, fmt.Errorf("%w: %s probed %s, %s probed %s; they may be different simulators' clocks", ErrServiceMismatch,
				files[a.first()], a.service, files[i], p.ch.Topic)
		}
		d, err := wallMinusMono(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", files[i], err)
		}
		in := aligned{file: files[i], host: h, probes: p, wallMinusMono: d, recoveredFrom: r.Header().Metadata[logfmt.MetaRecoveredFrom]}
		for _, c := range r.Channels() {
			if !IsProbe(c) {
				in.data = append(in.data, c.ID)
			}
		}
		a.inputs = append(a.inputs, in)
	}
	for h := range a.hosts {
		if err := a.estimate(h, o.Service); err != nil {
			return nil, err
		}
	}
	if len(a.inputs) > 0 {
		a.c = a.inputs[0].wallMinusMono + a.Model(0).OffsetNs()
	}
	return a, nil
}

// first is the first input with probes of the service.
func (a *Alignment) first() int {
	return slices.IndexFunc(a.inputs, func(in aligned) bool { return in.probes != nil })
}

// hostKey is the key that groups input i with the other inputs of its
// host, and the host's name.
func hostKey(r *logfmt.Reader, i int, hosts []string) (key, name string) {
	switch {
	case i < len(hosts) && hosts[i] != "":
		return "name " + hosts[i], hosts[i]
	case r.Header().Metadata[MetaRecording] != "":
		return "recording " + r.Header().Metadata[MetaRecording], ""
	}
	return fmt.Sprint("input ", i), ""
}

// estimate makes host h's model from the probes of all its inputs.
func (a *Alignment) estimate(h int, service *keyexpr.Pattern) error {
	host := &a.hosts[h]
	var all probes
	var files []string
	for _, i := range host.inputs {
		in := &a.inputs[i]
		files = append(files, in.file)
		if in.probes == nil {
			continue
		}
		if all.ch.Name == "" {
			all.ch = in.probes.ch
		}
		all.got = append(all.got, in.probes.got...)
		all.invalid += in.probes.invalid
	}
	switch {
	case all.ch.Name == "" && service != nil:
		return fmt.Errorf("%s: %w of a time service matching %s (it probed %s)", strings.Join(files, ", "), ErrNoProbes, service, orNone(host.probed))
	case all.ch.Name == "":
		return fmt.Errorf("%s: %w", strings.Join(files, ", "), ErrNoProbes)
	}
	m, err := all.model()
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(files, ", "), err)
	}
	host.model = m
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// errNoProbeChannel: a log has no probe channel at all, or none of the
// chosen service: its host's other files may have them.
var errNoProbeChannel = fmt.Errorf("%w", ErrNoProbes)

// chooseProbes are the probes of the probe channel pat selects (any, if
// nil): at most one may match; errNoProbeChannel if none does. services
// are the time services the log probed.
func chooseProbes(r *logfmt.Reader, pat *keyexpr.Pattern) (p *probes, services []string, err error) {
	chans, err := probeChannels(r)
	if errors.Is(err, ErrNoProbes) {
		return nil, nil, errNoProbeChannel
	}
	if err != nil {
		return nil, nil, err
	}
	var matched []string
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
		return nil, services, errNoProbeChannel
	case len(matched) > 1 && pat == nil:
		return nil, services, fmt.Errorf("%w probed: %s", ErrAmbiguous, strings.Join(matched, ", "))
	case len(matched) > 1:
		return nil, services, fmt.Errorf("%w match %s: %s", ErrAmbiguous, pat, strings.Join(matched, ", "))
	}
	return chosen, services, nil
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

// Model is the clock model of input i's host.
func (a *Alignment) Model(i int) Model { return a.hosts[a.inputs[i].host].model }

// Hosts is each input's host, an index from 0 in the order the hosts
// first appear: what MergeOptions.Hosts takes, so that a host's probes
// are one channel.
func (a *Alignment) Hosts() []int {
	out := make([]int, len(a.inputs))
	for i, in := range a.inputs {
		out[i] = in.host
	}
	return out
}

// Restamp puts record r of input i on the simulator's clock: its receive
// wall and monotonic stamps (see Alignment). A probe's payload keeps its
// host's stamps, so its estimate can be made again from the merged log.
func (a *Alignment) Restamp(i int, r *logfmt.Record) {
	in := &a.inputs[i]
	m := &a.hosts[in.host].model
	r.RecvWallNs = m.ToSim(r.RecvWallNs)
	r.RecvMonoNs = m.ToSim(r.RecvMonoNs+in.wallMinusMono) - a.c
}

// SimClock describes the alignment for the merged log's metadata, one
// Host per host; plan names each host's probe channel in the merged log.
func (a *Alignment) SimClock(plan *logfmt.MergePlan) SimClock {
	sc := SimClock{Service: a.service, SimMinusMonoNs: a.c, Hosts: []Host{}}
	for _, ah := range a.hosts {
		m := ah.model
		e := m.Estimate
		first := a.inputs[ah.inputs[0]]
		h := Host{Name: ah.name, File: first.file,
			OffsetNs: e.OffsetNs, UncertaintyNs: m.UncertaintyNs(), RTTNs: e.RTTNs, Probes: e.Probes, Used: e.Used,
			DriftPPM: e.DriftPPM, DriftValid: e.DriftValid, RefNs: e.RefNs, WallMinusMonoNs: first.wallMinusMono}
		var recovered []string
		for _, i := range ah.inputs {
			in := &a.inputs[i]
			if len(ah.inputs) > 1 {
				h.Files = append(h.Files, in.file)
			}
			if in.probes != nil && h.ProbeChannel == "" {
				h.ProbeChannel = plan.Name(i, in.probes.ch.ID)
			}
			if in.recoveredFrom != "" {
				recovered = append(recovered, in.recoveredFrom)
			}
			for _, id := range in.data {
				if n := plan.Name(i, id); n != "" && !slices.Contains(h.Channels, n) {
					h.Channels = append(h.Channels, n)
				}
			}
		}
		h.RecoveredFrom = strings.Join(recovered, ", ")
		sc.Hosts = append(sc.Hosts, h)
	}
	return sc
}
