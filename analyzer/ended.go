package analyzer

import (
	"fmt"
	"slices"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/logfmt"
)

// recordingSpan is what the recorder's heartbeats say about the recording
// itself (codec.SchemaHeartbeat, recorder.HeartbeatChannel): when it last
// received, on its wall clock, and when each data channel last did. A
// channel whose samples stop while the recording goes on (a publisher that
// crashed) has no gap between two of its samples to call an outage; the
// silence from its last sample to the recording's end is one. Each
// channel is held against the end of the recordings that hold it (a
// recording's files share its id, hostclock.MetaRecording; files without
// one count as one recording): two recorders of one session stop at
// their own times.
type recordingSpan struct {
	endWallNs map[string]int64    // recording id → its latest heartbeat
	lastWall  map[string]int64    // data channel name → its latest receive stamp
	in        map[string][]string // data channel name → the recordings that hold it
}

// isHeartbeat reports whether c carries the recorder's heartbeats: never a
// data channel of the report.
func isHeartbeat(c logfmt.Channel) bool {
	return c.Transport == logfmt.TransportInternal && c.Schema == codec.SchemaHeartbeat
}

// note takes one file's channel statistics (its index, or its scan);
// name is the analysis's name of each channel id (nil: not a data
// channel).
func (s *recordingSpan) note(r *logfmt.Reader, name func(id uint16) *channel) {
	if s.endWallNs == nil {
		s.endWallNs, s.lastWall, s.in = map[string]int64{}, map[string]int64{}, map[string][]string{}
	}
	rec := r.Header().Metadata[hostclock.MetaRecording]
	for _, c := range r.Channels() {
		st := r.StatsOf(c.ID)
		if st.Records == 0 {
			continue
		}
		if isHeartbeat(c) {
			s.endWallNs[rec] = max(s.endWallNs[rec], st.LastWallNs)
			continue
		}
		ch := name(c.ID)
		if ch == nil {
			continue
		}
		n := ch.rep.Name
		s.lastWall[n] = max(s.lastWall[n], st.LastWallNs)
		if !slices.Contains(s.in[n], rec) {
			s.in[n] = append(s.in[n], rec)
		}
	}
}

// trailingOutage is the silence of channel c from its last sample to the
// recording's end when it is an outage by the same rule as a gap between
// samples (above factor × the nominal period), else ok is false.
func (s *recordingSpan) trailingOutage(c *ChannelReport, factor float64, nominalNs int64) (o OutageItem, ok bool) {
	last, seen := s.lastWall[c.Name]
	var end int64
	for _, rec := range s.in[c.Name] {
		end = max(end, s.endWallNs[rec])
	}
	if end == 0 || !seen || nominalNs <= 0 || c.Count == 0 {
		return OutageItem{}, false
	}
	gap := end - last
	if float64(gap) <= factor*float64(nominalNs) {
		return OutageItem{}, false
	}
	return OutageItem{FromNs: c.LastNs, ToNs: c.LastNs + gap, GapS: round3(float64(gap)/1e9*1000) / 1000, Ended: true}, true
}

// endedNote says in words what trailingOutage found.
func endedNote(name string, o OutageItem) string {
	return fmt.Sprintf("%s fell silent %v before the recording ended (its last sample, then nothing until the recorder stopped): counted as an outage",
		name, time.Duration(o.GapS*1e9).Round(time.Millisecond))
}
