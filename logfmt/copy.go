package logfmt

import "fmt"

// CopyStats is what Copy and MergeCopy wrote.
type CopyStats struct {
	Records  uint64
	Channels int
	// Renamed lists the channels MergeCopy renamed to keep two different
	// streams of one name apart.
	Renamed []Renamed
	// Duplicates are the records a merge left out, per channel: second
	// copies of samples another input recorded too.
	Duplicates []Duplicates
}

// Duplicates is how many second copies of one channel's samples a merge
// left out.
type Duplicates struct {
	Channel string
	Records uint64
}

// Renamed is a channel that a merge gave a new name.
type Renamed struct {
	Input    int // the input's position, from 0
	From, To string
	// Apart: the same stream is in an earlier input, kept apart on
	// purpose (MergeOptions.Apart); otherwise a different stream had the
	// name.
	Apart bool
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
	defer it.Close() // stops the read-ahead (sel.Workers) on a write error
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

// Stream is what makes channels of different logs one channel: the same
// name, transport, topic and schema. It is the one rule merge, replay and
// analyze match channels across files by (a channel of the same name
// that differs in any of the others is another stream, which merge and
// analyze name NAME@N after its input's position N from 1).
type Stream struct {
	Name, Topic, Schema string
	Transport           Transport
}

// StreamOf is c's stream.
func StreamOf(c Channel) Stream {
	return Stream{Name: c.Name, Topic: c.Topic, Schema: c.Schema, Transport: c.Transport}
}

// InputName is the name of a stream of input i (from 0) whose name an
// earlier input's different stream holds: NAME@N, N = i+1.
func InputName(name string, i int) string { return fmt.Sprintf("%s@%d", name, i+1) }

// streamKey is a stream within a merge: a channel kept apart is one
// stream per input.
type streamKey struct {
	Stream
	input int // -1, or the input of a channel kept apart
}

// MergeOptions change how MergeCopy joins its inputs. The zero value
// joins them as recorded.
type MergeOptions struct {
	// Apart reports channels that stay one channel per input even where
	// another input holds the same stream: each host's clock-sync probes
	// measure that host's clock only. A later input's is renamed NAME@N
	// like a different stream (Renamed.Apart set).
	Apart func(Channel) bool
	// Hosts, if not nil, is each input's host (an index from 0): the
	// channels kept apart are then one channel per host, not per input,
	// a later host's renamed NAME@N, N the host's index + 1 (the split
	// files of one recording share their probes' channel).
	Hosts []int
	// Restamp rewrites each record as it is read, before the records are
	// ordered by RecvWallNs (MergeRestamped): e.g. puts each host's
	// receive stamps on the simulator's clock.
	Restamp MergeRestamp
	// Workers loads each input's chunks ahead (Filter.Workers): memory is
	// Workers+1 chunks per input.
	Workers int
}

// MergePlan is how a merge joins its inputs' channels, decided before
// anything is written so that the output's metadata can name them.
type MergePlan struct {
	rs      []*Reader
	opts    MergeOptions
	defs    []Channel        // the output's channels, in the order they are added
	idx     []map[uint16]int // per input: channel id → index in defs
	drops   []uint64         // per def: the inputs' recorder drops, added up
	inputs  []int            // per def: how many inputs hold it
	renamed []Renamed
}

// PlanMerge matches the channels of rs. Channels are matched by their
// Stream (name, transport, topic and schema): the same stream in two inputs becomes one
// channel and its drops add up; a different stream under a name already
// used, or a channel kept apart (MergeOptions.Apart) of a later input, is
// renamed NAME@N, N its input's position from 1. A renamed name that is
// itself taken is an error.
func PlanMerge(rs []*Reader, opts MergeOptions) (*MergePlan, error) {
	p := &MergePlan{rs: rs, opts: opts, idx: make([]map[uint16]int, len(rs))}
	byKey := map[streamKey]int{}
	used := map[string]bool{}
	for i, r := range rs {
		p.idx[i] = map[uint16]int{}
		for _, c := range r.Channels() {
			apart := opts.Apart != nil && opts.Apart(c)
			k := streamKey{StreamOf(c), -1}
			rename := i
			if apart {
				k.input = i
				if opts.Hosts != nil {
					k.input, rename = opts.Hosts[i], opts.Hosts[i]
				}
			}
			n, ok := byKey[k]
			if !ok {
				def := renumbered(c)
				if used[c.Name] {
					def.Name = InputName(c.Name, rename)
					if used[def.Name] {
						return nil, fmt.Errorf("logfmt: merge: input %d: channel %s cannot be renamed %s: that name is taken", i+1, c.Name, def.Name)
					}
					p.renamed = append(p.renamed, Renamed{Input: i, From: c.Name, To: def.Name, Apart: apart})
				}
				used[def.Name] = true
				n = len(p.defs)
				p.defs = append(p.defs, def)
				p.drops = append(p.drops, 0)
				p.inputs = append(p.inputs, 0)
				byKey[k] = n
			}
			p.inputs[n]++
			p.idx[i][c.ID] = n
			p.drops[n] += r.StatsOf(c.ID).Drops
		}
	}
	return p, nil
}

// Name is the output's name of channel id of input i ("" if there is none).
func (p *MergePlan) Name(input int, id uint16) string {
	if n, ok := p.idx[input][id]; ok {
		return p.defs[n].Name
	}
	return ""
}

// Renamed lists the channels the merge renames.
func (p *MergePlan) Renamed() []Renamed { return p.renamed }

// Copy writes the planned merge to w: the channels, their drops, and the
// records of every input in receive wall-clock order (after Restamp; ties
// in input order), but for the second copy of a sample that two inputs
// recorded (two recorders of one stream: Dedup), counted in
// CopyStats.Duplicates. It does not close w. Errors are as Copy's.
func (p *MergePlan) Copy(w *Writer) (CopyStats, error) {
	st := CopyStats{Channels: len(p.defs), Renamed: p.renamed}
	ids := make([]uint16, len(p.defs))
	for n, def := range p.defs {
		id, err := w.AddChannel(def)
		if err != nil {
			return st, fmt.Errorf("channel %s: %w", def.Name, err)
		}
		ids[n] = id
		w.AddDrops(id, p.drops[n])
	}
	its := make([]*Iterator, len(p.rs))
	for i, r := range p.rs {
		its[i] = r.Records(Filter{Workers: p.opts.Workers})
		defer its[i].Close() // stops the read-ahead on a write error
	}
	m := MergeRestamped(its, p.opts.Restamp, func(_ int, r *Record) int64 { return r.RecvWallNs })
	dd := newDedup(len(p.defs))
	for m.Next() {
		cp := *m.Record()
		n := p.idx[m.Input()][cp.Channel]
		if p.inputs[n] > 1 && dd.again(n, m.Input(), &cp) {
			continue
		}
		cp.Channel = ids[n]
		if err := w.Write(&cp); err != nil {
			return st, err
		}
		st.Records++
	}
	for n, k := range dd.dropped {
		if k > 0 {
			st.Duplicates = append(st.Duplicates, Duplicates{Channel: p.defs[n].Name, Records: k})
		}
	}
	return st, m.Err()
}

// MergeCopy writes the records of every input to w in receive wall-clock
// order (the one receive clock comparable across recorders and hosts;
// ties in input order), channels matched as PlanMerge matches them with
// no options. It does not close w. Errors are as Copy's.
func MergeCopy(w *Writer, rs []*Reader) (CopyStats, error) {
	p, err := PlanMerge(rs, MergeOptions{})
	if err != nil {
		return CopyStats{}, err
	}
	return p.Copy(w)
}
