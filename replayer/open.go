package replayer

import (
	"fmt"
	"slices"
	"time"

	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/logfmt"
)

// session is the opened inputs, the selected outputs and the window.
type session struct {
	files      []string
	inputs     []*input
	outs       []output
	src        *logSource
	logStart   int64 // key of the log's first data record
	logEnd     int64
	wallOffset int64 // file 0's wall - mono
}

func (s *session) close() {
	for _, in := range s.inputs {
		in.r.Close()
	}
}

// joinRule is the one place where a replay decides how file in joins the
// files opened before it (file0 the first, wall0 its wall - mono): the
// shift of its monotonic clock onto file 0's, and the identity under which
// its channels merge with theirs (channels of one identity are one
// output). It applies the rules merge and analyze apply: the files' receive
// stamps must be one clock (hostclock.OneReceiveClock: mixed simulator and
// recorder clocks, or several hosts' recorders, are refused, pointing at a
// merge onto the simulator's clock), and a channel is the same stream in
// two files when logfmt.StreamOf says so, with the topic it is published
// on (after remapping) in place of the recorded one.
func joinRule(file0, in *input, wall0 int64) (shift int64, identity func(ch logfmt.Channel, topic string) string, err error) {
	r := in.r
	if file0 != in {
		if err := hostclock.OneReceiveClock([]*logfmt.Reader{file0.r, r}, []string{file0.path, in.path}); err != nil {
			return 0, nil, err
		}
	}
	return wallMinusMono(r) - wall0, func(ch logfmt.Channel, topic string) string {
		st := logfmt.StreamOf(ch)
		return st.Transport.String() + "\x00" + topic + "\x00" + st.Schema
	}, nil
}

// open opens the files and selects channels and the window; with
// cfg.internal also the recorder's own channels (never published: for a
// viewer, OpenLogs), whose records then widen the window.
func open(cfg *Config, remapUsed []bool) (*session, error) {
	s := &session{files: cfg.Files, src: &logSource{clock: cfg.Clock}}
	var names []string        // the data channels there are, for errors
	index := map[string]int{} // identity → output
	first := true
	records := uint64(0)
	for _, path := range cfg.Files {
		r, err := logfmt.Open(path, logfmt.ReaderOptions{Tolerant: cfg.Tolerant})
		if err != nil {
			s.close()
			return nil, kinded(ErrInput, err)
		}
		in := &input{path: path, r: r, out: map[uint16]int{}}
		s.inputs = append(s.inputs, in)
		if tt := r.TornTail(); tt != nil && !cfg.Tolerant {
			s.close()
			return nil, kindf(ErrInput, "%w (truncated log; a tolerant replay replays the intact part)", tt)
		}
		if len(s.inputs) == 1 {
			s.wallOffset = wallMinusMono(r)
		}
		shift, identity, err := joinRule(s.inputs[0], in, s.wallOffset)
		if err != nil { // the error names the files
			s.close()
			return nil, kinded(ErrInput, err)
		}
		in.shift = shift
		for _, ch := range r.Channels() {
			own := ch.Transport == logfmt.TransportInternal
			if own && !cfg.internal {
				continue
			}
			if !own && !slices.Contains(names, ch.Name) {
				names = append(names, ch.Name)
			}
			st := r.StatsOf(ch.ID)
			if !own {
				records += st.Records
			}
			if st.Records > 0 {
				k0, k1 := st.FirstMonoNs+in.shift, st.LastMonoNs+in.shift
				if cfg.Clock == ClockCapture {
					k0, k1 = st.FirstCaptureNs, st.LastCaptureNs
				}
				if cfg.Clock == ClockReceive || st.HasCapture {
					if first || k0 < s.logStart {
						s.logStart = k0
					}
					if first || k1 > s.logEnd {
						s.logEnd = k1
					}
					if cfg.Clock == ClockCapture && s.src.captureOff == 0 {
						s.src.captureOff = st.FirstCaptureNs - (st.FirstMonoNs + in.shift)
					}
					first = false
				}
			}
			if cfg.Channels.Len() > 0 && !cfg.Channels.Match(ch.Name, ch.Topic) {
				continue
			}
			topic := publishedTopic(cfg, remapUsed, ch)
			k := identity(ch, topic)
			oi, ok := index[k]
			if !ok {
				oi = len(s.outs)
				index[k] = oi
				avg := 0
				if st.Records > 0 {
					avg = int(st.RawBytes / st.Records)
				}
				s.outs = append(s.outs, output{Name: ch.Name, Transport: ch.Transport, Topic: topic, Schema: ch.Schema,
					Meta: ch.Meta, MaxRecord: avg + avg/4, Frame: isFrame(ch)})
			}
			in.out[ch.ID] = oi
			in.ids = append(in.ids, ch.ID)
		}
	}
	s.src.inputs = s.inputs
	if err := cfg.Channels.Unmatched("data channel", names); err != nil {
		s.close()
		return nil, &ConfigError{Field: "Channels", Err: err}
	}
	for i, used := range remapUsed {
		if !used {
			s.close()
			return nil, configErr("Remaps", "%s: FROM matches no replayed channel (name or topic)", cfg.Remaps[i])
		}
	}
	switch {
	case len(names) == 0:
		s.close()
		return nil, kindf(ErrInput, "nothing to replay: %s no data channel", inputsText(cfg.Files, "has", "have"))
	case records == 0:
		s.close()
		return nil, kindf(ErrInput, "nothing to replay: %s no data record (an empty log)", inputsText(cfg.Files, "holds", "hold"))
	case len(s.outs) == 0:
		s.close()
		return nil, kindf(ErrInput, "nothing to replay: no data channel selected")
	case first && cfg.Clock == ClockCapture:
		s.close()
		return nil, &ConfigError{Field: "Clock", Err: errString("capture: no channel carries capture stamps")}
	}
	fromUnix := func(unix int64) int64 { return unix - s.wallOffset } // receive key: file 0's monotonic clock
	if cfg.Clock == ClockCapture {
		fromUnix = nil
	}
	win, err := cfg.Window.Resolve(s.logStart, fromUnix)
	if err == nil && !win.Overlaps(s.logStart, s.logEnd) {
		err = fmt.Errorf("%w: it spans %s from its start", logfmt.ErrOutsideLog, time.Duration(s.logEnd-s.logStart))
	}
	if err != nil {
		s.close()
		return nil, &ConfigError{Field: "Window", Err: err}
	}
	s.src.start, s.src.end, s.src.hasEnd = s.logStart, win.End, win.HasEnd
	if win.HasStart {
		s.src.start = win.Start
	}
	return s, nil
}

// span is the played window's log time.
func (s *session) span() time.Duration {
	if s.src.hasEnd {
		return time.Duration(min(s.src.end, s.logEnd) - s.src.start)
	}
	return time.Duration(s.logEnd - s.src.start)
}

// inputsText is the subject "FILE has" or "the N logs have" (one, many).
func inputsText(files []string, one, many string) string {
	if len(files) == 1 {
		return files[0] + " " + one
	}
	return fmt.Sprintf("the %d logs %s", len(files), many)
}
