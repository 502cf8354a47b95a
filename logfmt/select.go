package logfmt

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/vrlog/vrlog/keyexpr"
)

// Select says what to read from a log, as foxglove mcap's ReadOptions
// carries topics and time bounds: channels by pattern, a receive-time
// window, whether payloads are needed. Resolve it against a log with
// Reader.Select; read with Reader.Read.
type Select struct {
	// Channels are key-expression patterns (package keyexpr) matched
	// against each channel's name and topic, or decimal channel ids;
	// empty selects every channel. A pattern that selects nothing is an
	// error listing the channels there are.
	Channels []string
	// DataOnly leaves out internal channels (clock-sync probes).
	DataOnly bool
	// Window bounds the records' receive wall-clock time; offsets count
	// from the log's start (Reader.Start).
	Window Window
	// MetaOnly reads record metadata only (Filter.MetaOnly).
	MetaOnly bool
}

// Selection is a Select resolved against one log.
type Selection struct {
	Channels []Channel // selected, by id
	Wall     Range     // receive wall-clock bounds
	MetaOnly bool
	// Workers loads chunks ahead of the iteration (Filter.Workers); a
	// payload reader with a spare core sets ReadAhead().
	Workers int
}

// Select resolves s against r. Errors: a bad pattern (keyexpr.ErrSyntax),
// a pattern that selects nothing (a *keyexpr.NoMatchError), an empty
// window (ErrEmptyWindow).
func (r *Reader) Select(s Select) (*Selection, error) {
	sel := &Selection{MetaOnly: s.MetaOnly}
	set, err := keyexpr.ParseSet(s.Channels)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range r.channels {
		if s.DataOnly && c.Transport == TransportInternal {
			continue
		}
		names = append(names, c.Name)
		if set.Len() == 0 || matchChannel(set, s.Channels, c) {
			sel.Channels = append(sel.Channels, c)
		}
	}
	if err := set.Unmatched(channelWord(s.DataOnly), names); err != nil {
		return nil, err
	}
	start, _ := r.Start()
	if sel.Wall, err = s.Window.Resolve(start, nil); err != nil {
		return nil, err
	}
	if end, ok := r.End(); ok && !sel.Wall.Overlaps(start, end) {
		return nil, fmt.Errorf("%w: the log's records were received from %s to %s (%s)", ErrOutsideLog,
			time.Unix(0, start).UTC().Format(time.RFC3339Nano), time.Unix(0, end).UTC().Format(time.RFC3339Nano), time.Duration(end-start))
	}
	return sel, nil
}

// ErrOutsideLog means a time window holds none of a log's records.
var ErrOutsideLog = errors.New("logfmt: the time window is outside the log")

// matchChannel matches c's name and topic, and its id against the
// patterns that are numbers (marking them used).
func matchChannel(set *keyexpr.Set, pats []string, c Channel) bool {
	hit := set.Match(c.Name, c.Topic)
	id := strconv.Itoa(int(c.ID))
	for i, p := range pats {
		if p == id {
			set.MarkUsed(i)
			hit = true
		}
	}
	return hit
}

func channelWord(dataOnly bool) string {
	if dataOnly {
		return "data channel"
	}
	return "channel"
}

// IDs returns the selected channel ids.
func (s *Selection) IDs() []uint16 {
	ids := make([]uint16, len(s.Channels))
	for i, c := range s.Channels {
		ids[i] = c.ID
	}
	return ids
}

// Filter is the iterator filter of the selection.
func (s *Selection) Filter() Filter {
	return Filter{Channels: s.IDs(), Wall: s.Wall, MetaOnly: s.MetaOnly, Workers: s.Workers}
}

// Read iterates the selected records in receive order. An empty selection
// reads nothing.
func (r *Reader) Read(s *Selection) *Iterator {
	if len(s.Channels) == 0 {
		return &Iterator{r: r}
	}
	return r.Records(s.Filter())
}

// Start is the log's earliest receive wall stamp, from the index: where
// offsets of a window count from. ok is false for a log without records.
func (r *Reader) Start() (ns int64, ok bool) {
	for i, c := range r.chunks {
		if i == 0 || c.MinWallNs < ns {
			ns = c.MinWallNs
		}
	}
	return ns, len(r.chunks) > 0
}

// End is the log's latest receive wall stamp, from the index.
func (r *Reader) End() (ns int64, ok bool) {
	for i, c := range r.chunks {
		if i == 0 || c.MaxWallNs > ns {
			ns = c.MaxWallNs
		}
	}
	return ns, len(r.chunks) > 0
}

// StatsOf returns the statistics of channel id (zero for an unknown id).
func (r *Reader) StatsOf(id uint16) ChannelStats {
	i := sort.Search(len(r.stats), func(i int) bool { return r.stats[i].Channel >= id })
	if i < len(r.stats) && r.stats[i].Channel == id {
		return r.stats[i]
	}
	for _, s := range r.stats { // not sorted: a hand-made index
		if s.Channel == id {
			return s
		}
	}
	return ChannelStats{}
}

// Channel returns the definition of channel id.
func (r *Reader) Channel(id uint16) (Channel, error) {
	i := sort.Search(len(r.channels), func(i int) bool { return r.channels[i].ID >= id })
	if i < len(r.channels) && r.channels[i].ID == id {
		return r.channels[i], nil
	}
	return Channel{}, fmt.Errorf("%w %d", ErrUnknownChannel, id)
}
