package analyzer

import (
	"strconv"
	"strings"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// Epoch is a log's session epoch: the t_ns 'elapsed' counts from, what it
// is (Source, said in epoch_source), and whether it is the robot's first
// state sample (State), the one epoch the seeds define for every stream of
// the robot, or a fallback (the earliest capture stamp, the first receive
// time) of a log without the state stream.
type Epoch struct {
	Ns     int64
	Source string
	State  bool
}

// stateSource begins the source of every epoch that is a first state
// sample, stored ones included (a stored source is read back by it).
const stateSource = "first state sample"

// stateEpoch is the epoch of the first state sample ns on channel name.
func stateEpoch(ns int64, name string) Epoch {
	return Epoch{Ns: ns, Source: stateSource + " on " + name, State: true}
}

// SessionEpoch is LogEpoch's time and source.
func SessionEpoch(r *logfmt.Reader) (ns int64, source string) {
	e := LogEpoch(r)
	return e.Ns, e.Source
}

// LogEpoch is the session epoch of a log from its index alone, as the
// analysis defines it: the t_ns of the first state sample received (the
// robot's first state), else the earliest capture stamp of any channel,
// else the log's first receive time. 'elapsed' counts from it in every
// verb.
//
// A log stored its source's epoch in its metadata (logfmt.StoredEpoch):
// a snapshot (record --snapshot) its recording's, a cut or merge its
// inputs'; that wins, since its own first state may be long after.
func LogEpoch(r *logfmt.Reader) Epoch {
	if e, ok := storedEpoch(r.Header().Metadata); ok {
		return e
	}
	var first logfmt.ChannelStats
	var name string
	found := false
	for _, c := range r.Channels() {
		s := r.StatsOf(c.ID)
		if c.Schema == codec.SchemaState && s.HasCapture && s.Records > 0 && (!found || s.FirstMonoNs < first.FirstMonoNs) {
			first, name, found = s, c.Name, true
		}
	}
	if found {
		return stateEpoch(first.FirstCaptureNs, name)
	}
	var ns int64
	for _, c := range r.Channels() {
		s := r.StatsOf(c.ID)
		if c.Transport != logfmt.TransportInternal && s.HasCapture && s.Records > 0 && (!found || s.FirstCaptureNs < ns) {
			ns, name, found = s.FirstCaptureNs, c.Name, true
		}
	}
	if found {
		return Epoch{Ns: ns, Source: "no state channel: earliest capture stamp (" + name + ")"}
	}
	ns, _ = r.Start()
	return Epoch{Ns: ns, Source: "no capture stamps: the log's first receive time"}
}

// SessionEpochOf is the session epoch of logs read as one session (merge,
// cut, analyze of several): the earliest epoch of the logs that hold the
// robot's state stream, and only when none does the earliest fallback. A
// fallback never wins over a log with the state stream, whatever the
// order of the inputs: frames recorded on one host (their epoch the first
// frame) and states on another make one session whose epoch is the first
// state. With several logs, Source says which one it came from (names,
// by log).
func SessionEpochOf(names []string, es []Epoch) Epoch {
	best := -1
	for i, e := range es {
		if best < 0 || (e.State && !es[best].State) || (e.State == es[best].State && e.Ns < es[best].Ns) {
			best = i
		}
	}
	if best < 0 {
		return Epoch{}
	}
	e := es[best]
	if len(es) > 1 && best < len(names) && !strings.Contains(e.Source, "(in ") {
		e.Source += " (in " + names[best] + ")"
	}
	return e
}

// StoreEpoch keeps e in the metadata md of a log made of others (cut,
// merge, recover), so that elapsed keeps its meaning there and the
// epoch's source is still known (logfmt.MetaSessionEpoch and
// logfmt.MetaSessionEpochSource).
func StoreEpoch(md map[string]string, e Epoch) {
	md[logfmt.MetaSessionEpoch] = strconv.FormatInt(e.Ns, 10)
	md[logfmt.MetaSessionEpochSource] = strings.TrimSuffix(e.Source, keptIn)
}

// keptIn ends the source of an epoch read from metadata.
const keptIn = ", kept in metadata " + logfmt.MetaSessionEpoch

// storedEpoch is the epoch a log's metadata md stores (logfmt.StoredEpoch),
// ok false when none. A stored epoch is a first state sample unless its
// stored source says otherwise: a snapshot's always is, and a log stored
// before the source was kept counted as one.
func storedEpoch(md map[string]string) (Epoch, bool) {
	ns, ok, err := logfmt.StoredEpoch(md)
	if !ok || err != nil {
		return Epoch{}, false
	}
	if _, general := md[logfmt.MetaSessionEpoch]; !general {
		return Epoch{Ns: ns, Source: "the recording's first state sample (snapshot metadata)", State: true}, true
	}
	src, has := md[logfmt.MetaSessionEpochSource]
	if !has {
		return Epoch{Ns: ns, Source: "the source log's, kept in metadata " + logfmt.MetaSessionEpoch, State: true}, true
	}
	return Epoch{Ns: ns, Source: src + keptIn, State: strings.HasPrefix(src, stateSource)}, true
}
