package logfmt

import "fmt"

// CopyStats is what Copy and MergeCopy wrote.
type CopyStats struct {
	Records  uint64
	Channels int
	// Renamed lists the channels MergeCopy renamed to keep two different
	// streams of one name apart.
	Renamed []Renamed
}

// Renamed is a channel that MergeCopy gave a new name.
type Renamed struct {
	Input    int // the input's position, from 0
	From, To string
}

// Copy writes what sel selects from r to w (a cut): the selected
// channels' definitions, ids renumbered in id order; the records byte for
// byte with all their stamps; and, when sel has no time window, the
// channels' recorder drop counts (they count a whole recording, so a
// window cannot say which belong to it). It does not close w. An error
// reading r is a *CorruptionError or names r's file; any other is w's.
func Copy(w *Writer, r *Reader, sel *Selection) (CopyStats, error) {
	var st CopyStats
	ids := map[uint16]uint16{}
	for _, c := range sel.Channels {
		id, err := w.AddChannel(renumbered(c))
		if err != nil {
			return st, fmt.Errorf("channel %s: %w", c.Name, err)
		}
		ids[c.ID] = id
		if !sel.Wall.Bounded() {
			w.AddDrops(id, r.StatsOf(c.ID).Drops)
		}
	}
	st.Channels = len(ids)
	it := r.Read(sel)
	for it.Next() {
		cp := *it.Record()
		cp.Channel = ids[cp.Channel]
		if err := w.Write(&cp); err != nil {
			return st, err
		}
		st.Records++
	}
	return st, it.Err()
}

// renumbered is c without its id, for AddChannel to assign one.
func renumbered(c Channel) Channel {
	c.ID = 0
	return c
}

// streamKey is what makes two channels of different logs one stream.
type streamKey struct {
	name, topic, schema string
	transport           Transport
}

// MergeCopy writes the records of every input to w in receive wall-clock
// order (the one receive clock comparable across recorders and hosts;
// ties in input order). Channels are matched by name, transport, topic and
// schema: the same stream in two inputs becomes one channel and its drops
// add up; a different stream under a name already used is renamed
// NAME@N, N its input's position from 1 (listed in CopyStats.Renamed).
// It does not close w. Errors are as Copy's.
func MergeCopy(w *Writer, rs []*Reader) (CopyStats, error) {
	var st CopyStats
	byKey := map[streamKey]uint16{}
	used := map[string]bool{}
	ids := make([]map[uint16]uint16, len(rs)) // per input: old id → new
	its := make([]*Iterator, len(rs))
	for i, r := range rs {
		ids[i] = map[uint16]uint16{}
		for _, c := range r.Channels() {
			k := streamKey{c.Name, c.Topic, c.Schema, c.Transport}
			id, ok := byKey[k]
			if !ok {
				def := renumbered(c)
				if used[c.Name] {
					def.Name = fmt.Sprintf("%s@%d", c.Name, i+1)
					st.Renamed = append(st.Renamed, Renamed{Input: i, From: c.Name, To: def.Name})
				}
				var err error
				if id, err = w.AddChannel(def); err != nil {
					return st, fmt.Errorf("channel %s: %w", def.Name, err)
				}
				used[def.Name] = true
				byKey[k] = id
			}
			ids[i][c.ID] = id
			w.AddDrops(id, r.StatsOf(c.ID).Drops)
		}
		its[i] = r.Records(Filter{})
	}
	st.Channels = len(byKey)
	m := Merge(its, func(_ int, r *Record) int64 { return r.RecvWallNs })
	for m.Next() {
		cp := *m.Record()
		cp.Channel = ids[m.Input()][cp.Channel]
		if err := w.Write(&cp); err != nil {
			return st, err
		}
		st.Records++
	}
	return st, m.Err()
}
