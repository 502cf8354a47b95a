package hostclock

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// MetaKey is the header metadata key of a log whose receive stamps a merge
// put on a simulator's clock; its value is a SimClock in JSON
// (docs/log-tools.md). A log without it has each recorder's own stamps.
const MetaKey = "vrlog.sim_clock"

// ErrMixedClocks: logs merged as recorded do not share a receive clock.
var ErrMixedClocks = errors.New("hostclock: the inputs' receive stamps are on different clocks")

// SimClock is what a merge onto the simulator's clock did, stored in the
// merged log: every host's model, and how the stamps were converted, so
// nothing of the recording is lost.
type SimClock struct {
	// Service is the time service whose clock it is.
	Service string `json:"time_service"`
	// SimMinusMonoNs is C: the merged log's monotonic stamps are the
	// simulator's clock minus it.
	SimMinusMonoNs int64 `json:"sim_minus_mono_ns"`
	// Hosts are the inputs, in order.
	Hosts []Host `json:"hosts"`
}

// Host is one host of the merge (Alignment): its files, where its probes
// are in the merged log, and the model its stamps were converted with.
type Host struct {
	// Name is the host's name when the merge was given one (collect: the
	// recorder's).
	Name string `json:"name,omitempty"`
	// File is its first file; Files all of them, when it had several
	// (the split files of one recording; the files of one recorder).
	File         string   `json:"file"`
	Files        []string `json:"files,omitempty"`
	ProbeChannel string   `json:"probe_channel"`
	// OffsetNs is the simulator's clock minus the host's at RefNs (host
	// time); UncertaintyNs bounds its error (RTT/2).
	OffsetNs      int64 `json:"offset_ns"`
	UncertaintyNs int64 `json:"uncertainty_ns"`
	RTTNs         int64 `json:"rtt_ns"`
	Probes        int   `json:"probes"`
	Used          int   `json:"used"`
	// DriftPPM was applied (from RefNs) only when DriftValid.
	DriftPPM   float64 `json:"drift_ppm"`
	DriftValid bool    `json:"drift_valid"`
	RefNs      int64   `json:"ref_ns"`
	// WallMinusMonoNs is D: the host's wall minus monotonic receive stamp.
	WallMinusMonoNs int64 `json:"wall_minus_mono_ns"`
	// Channels are the merged log's channels this input recorded (its
	// probes aside): which host each stream, and each loss on it, is from.
	Channels []string `json:"channels,omitempty"`
	// RecoveredFrom, when set, says an input was the verified copy of a
	// log its recorder never finished (logfmt.MetaRecoveredFrom; several
	// are joined by ", ").
	RecoveredFrom string `json:"recovered_from,omitempty"`
}

// Label names the host: its name, else its first file.
func (h Host) Label() string {
	if h.Name != "" {
		return h.Name
	}
	return h.File
}

// Inputs are the host's files.
func (h Host) Inputs() []string {
	if len(h.Files) > 0 {
		return h.Files
	}
	return []string{h.File}
}

// ToSim converts a stamp of the host's wall clock to the simulator's
// clock, as the merge converted the host's records: what the merged
// log's metadata alone says of a host's stamps (the first record of a
// recording, the start of a file).
func (h Host) ToSim(hostWallNs int64) int64 {
	e := sampler.ClockEstimate{OffsetNs: h.OffsetNs, RefNs: h.RefNs, DriftPPM: h.DriftPPM, DriftValid: h.DriftValid}
	return Model{Estimate: e}.ToSim(hostWallNs)
}

// Encode is the MetaKey value.
func (sc SimClock) Encode() string {
	b, _ := json.Marshal(sc) // plain fields: cannot fail
	return string(b)
}

// files lists the hosts' files.
func (sc *SimClock) files() string {
	var fs []string
	for _, h := range sc.Hosts {
		fs = append(fs, h.Inputs()...)
	}
	return strings.Join(fs, ", ")
}

// ParseSimClock reads a log's SimClock from its header metadata: nil if
// the log is on its recorders' clocks, an error if the value is malformed.
func ParseSimClock(meta map[string]string) (*SimClock, error) {
	v, ok := meta[MetaKey]
	if !ok {
		return nil, nil
	}
	var sc SimClock
	if err := json.Unmarshal([]byte(v), &sc); err != nil {
		return nil, fmt.Errorf("hostclock: metadata %s: %w", MetaKey, err)
	}
	if sc.Service == "" || len(sc.Hosts) == 0 {
		return nil, fmt.Errorf("hostclock: metadata %s: no time service or no hosts", MetaKey)
	}
	return &sc, nil
}

// SameClock checks that logs to be merged as recorded share their receive
// clock: none is on a simulator's clock, or all are, by one merge (parts
// of one merged log). Errors name the files (ErrMixedClocks, or a
// malformed SimClock).
func SameClock(rs []*logfmt.Reader, files []string) error {
	var first string
	for i, r := range rs {
		meta := r.Header().Metadata
		if _, err := ParseSimClock(meta); err != nil {
			return fmt.Errorf("%s: %w", files[i], err)
		}
		v, aligned := meta[MetaKey]
		switch {
		case i == 0:
			first = v
		case v == first:
		case first == "" || !aligned:
			on, off := files[0], files[i]
			if first == "" {
				on, off = off, on
			}
			return fmt.Errorf("%w: %s is on the simulator's clock (a merge put it there), %s on its recorder's", ErrMixedClocks, on, off)
		default:
			return fmt.Errorf("%w: %s and %s were put on a simulator's clock by different merges", ErrMixedClocks, files[0], files[i])
		}
	}
	return nil
}
