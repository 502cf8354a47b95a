package analyzer

import (
	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// SessionEpoch is the session epoch of a log from its index alone, as the
// analysis defines it: the t_ns of the first state sample received (the
// robot's first state), else the earliest capture stamp of any channel,
// else the log's first receive time. 'elapsed' counts from it in every
// verb. source says which it is.
//
// A log stored its source's epoch in its metadata (logfmt.StoredEpoch):
// a snapshot (record --snapshot) its recording's, a cut or merge its
// inputs'; that wins, since its own first state may be long after.
func SessionEpoch(r *logfmt.Reader) (ns int64, source string) {
	if ns, ok, err := logfmt.StoredEpoch(r.Header().Metadata); ok && err == nil {
		return ns, storedEpochSource(r.Header().Metadata)
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
		return first.FirstCaptureNs, "first state sample on " + name
	}
	for _, c := range r.Channels() {
		s := r.StatsOf(c.ID)
		if c.Transport != logfmt.TransportInternal && s.HasCapture && s.Records > 0 && (!found || s.FirstCaptureNs < ns) {
			ns, name, found = s.FirstCaptureNs, c.Name, true
		}
	}
	if found {
		return ns, "no state channel: earliest capture stamp (" + name + ")"
	}
	ns, _ = r.Start()
	return ns, "no capture stamps: the log's first receive time"
}

// storedEpochSource says where a stored epoch (logfmt.StoredEpoch) came
// from.
func storedEpochSource(md map[string]string) string {
	if _, ok := md[logfmt.MetaSessionEpoch]; ok {
		return "the source log's, kept in metadata " + logfmt.MetaSessionEpoch
	}
	return "the recording's first state sample (snapshot metadata)"
}
