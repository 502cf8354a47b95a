// Package hostclock puts a recorder host's stamps on the simulator's clock.
//
// Every recorder stores its clock-sync probes in its log (vrlog.ClockProbe/1,
// docs/wire-format.md): T1 and T4 on the recorder host's wall clock, T2 and
// T3 on the simulator's. From them a Model estimates the offset between the
// two clocks as in NTP-style software sync (shared/seeds/002): keep the
// lowest-RTT half of the probes, the ones least disturbed by queueing, and
// average their offsets ((T2-T1)+(T3-T4))/2. Converting a receive stamp adds
// that offset (and, when the probes span long enough to measure it, the
// drift since the probes' mean time).
//
// Uncertainty: a probe's offset differs from the true one by half the
// difference of its two one-way delays, which is at most half its round
// trip (T4-T1)-(T3-T2), whatever the delays are, as long as neither is
// negative. The mean over the used probes is therefore within their mean
// RTT/2 of the truth: that is UncertaintyNs. Logs of several hosts, each
// converted with its own model, share the simulator's clock to within the
// sum of their uncertainties.
//
// The package is pure Go (no cgo): it reads logs with logfmt.
package hostclock

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// ErrNoProbes: there is nothing to estimate from (no probe channel, or no
// probe with a non-negative round trip).
var ErrNoProbes = errors.New("hostclock: no clock-sync probes")

// Model maps one recorder host's wall clock onto one simulator's clock.
type Model struct {
	// Channel and Service name the probes' log channel and the time
	// service they asked ("" when built from bare probes); ChannelID is
	// the channel's id in its log.
	Channel, Service string
	ChannelID        uint16
	// Estimate is the lowest-RTT-half estimate the model rests on.
	Estimate sampler.ClockEstimate
}

// FromProbes estimates a model from probes.
func FromProbes(probes []sampler.Probe) (Model, error) {
	e := sampler.EstimateClock(probes)
	if e.Used == 0 {
		return Model{}, ErrNoProbes
	}
	return Model{Estimate: e}, nil
}

// OffsetNs is the simulator's clock minus the host's, at RefNs.
func (m Model) OffsetNs() int64 { return m.Estimate.OffsetNs }

// UncertaintyNs bounds the error of OffsetNs: half the mean round trip of
// the probes it averages.
func (m Model) UncertaintyNs() int64 { return (m.Estimate.RTTNs + 1) / 2 }

// ToSim converts a stamp of the host's wall clock (a record's RecvWallNs,
// a probe's T1 or T4) to the simulator's clock.
func (m Model) ToSim(hostWallNs int64) int64 {
	e := &m.Estimate
	off := float64(e.OffsetNs)
	if e.DriftValid {
		off += e.DriftPPM * 1e-6 * float64(hostWallNs-e.RefNs)
	}
	return hostWallNs + int64(math.Round(off))
}

// FromLog builds one model per probe channel of the log (a recorder probes
// every time service matching its selector: one per simulator), in channel
// order. Undecodable probe records are skipped and counted in the error of
// a channel left with none.
func FromLog(r *logfmt.Reader) ([]Model, error) {
	chans, err := probeChannels(r)
	if err != nil {
		return nil, err
	}
	var models []Model
	for _, p := range chans {
		m, err := p.model()
		if err != nil {
			return nil, err
		}
		models = append(models, m)
	}
	return models, nil
}

// probes are one probe channel's decoded exchanges.
type probes struct {
	ch      logfmt.Channel
	got     []sampler.Probe
	invalid int // undecodable records
}

// model estimates the channel's model.
func (p *probes) model() (Model, error) {
	m, err := FromProbes(p.got)
	if err != nil {
		return Model{}, fmt.Errorf("hostclock: channel %s: %d probes, %d undecodable: %w", p.ch.Name, len(p.got), p.invalid, err)
	}
	m.Channel, m.ChannelID, m.Service = p.ch.Name, p.ch.ID, p.ch.Topic
	return m, nil
}

// IsProbe reports whether c is a channel of clock-sync probes.
func IsProbe(c logfmt.Channel) bool { return c.Schema == codec.SchemaClockProbe }

// probeChannels reads the probes of every probe channel of r, in channel
// id order; ErrNoProbes if it has none.
func probeChannels(r *logfmt.Reader) ([]*probes, error) {
	byID := map[uint16]*probes{}
	var ids []uint16
	for _, c := range r.Channels() {
		if IsProbe(c) {
			byID[c.ID] = &probes{ch: c}
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return nil, ErrNoProbes
	}
	it := r.Records(logfmt.Filter{Channels: ids})
	for it.Next() {
		rec := it.Record()
		p := byID[rec.Channel]
		if p == nil {
			continue
		}
		cp, err := codec.DecodeClockProbe(rec.Payload)
		if err != nil {
			p.invalid++
			continue
		}
		p.got = append(p.got, sampler.Probe{T1: cp.T1Ns, T2: cp.T2Ns, T3: cp.T3Ns, T4: cp.T4Ns})
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("hostclock: reading probes: %w", err)
	}
	slices.Sort(ids)
	out := make([]*probes, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out, nil
}
