package replayer

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// answers turns the samples on the lockstep key expression into the
// player's answers, each with the trigger it names (codec.AnswerTag) and its
// receive stamp. They come from a subscriber of their own, or from the
// capture's subscription when it captures the answers (tap): then every
// answer has its receive stamp in the response log before the next
// trigger is released and stamped.
type answers struct {
	sub      *zenoh.Subscriber // nil when tapped
	pat      keyexpr.Pattern
	ch       chan player.Answer
	stop     context.CancelFunc
	done     chan struct{}
	received atomic.Uint64 // samples on the key, answers or not
	tagged   atomic.Uint64
}

func newAnswers(p keyexpr.Pattern) *answers {
	return &answers{pat: p, ch: make(chan player.Answer, 64)}
}

func (a *answers) answer(s *zenoh.Sample) {
	a.received.Add(1)
	ans := player.Answer{At: s.RecvMonoNs}
	ans.Tag, ans.Tagged = codec.ParseAnswerTag(s.Attachment)
	if ans.Tagged {
		a.tagged.Add(1)
	}
	for {
		select {
		case a.ch <- ans:
			return
		default: // full: the oldest goes (an untagged one pending is an answer)
			select {
			case <-a.ch:
			default:
			}
		}
	}
}

// tap is the capture's OnZenohSample.
func (a *answers) tap(s *zenoh.Sample) {
	if a.pat.Match(s.Key) {
		a.answer(s)
	}
}

// captured reports whether the capture patterns take in every key the
// lockstep pattern p matches (the same pattern, or a literal key one of
// them matches), so the answers can come from the capture.
func captured(p keyexpr.Pattern, capture []keyexpr.Pattern) bool {
	for _, c := range capture {
		if c.String() == p.String() || (p.Literal() && c.Match(p.String())) {
			return true
		}
	}
	return false
}

func subscribeAnswers(sess *zenoh.Session, p keyexpr.Pattern) (*answers, error) {
	sub, err := sess.Subscribe(p.String(), zenoh.SubscriberOptions{QueueLen: 1024})
	if err != nil {
		return nil, kindf(ErrTransport, "lockstep %s: %w", p, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := newAnswers(p)
	a.sub, a.stop, a.done = sub, cancel, make(chan struct{})
	go func() {
		defer close(a.done)
		var buf []zenoh.Sample
		for {
			var err error
			if buf, err = sub.Receive(ctx, buf[:0]); err != nil {
				return
			}
			for i := range buf {
				a.answer(&buf[i])
			}
		}
	}()
	return a, nil
}

func (a *answers) close() {
	if a.sub == nil {
		return
	}
	a.stop()
	<-a.done
	a.sub.Close()
}

// triggers flags the outputs whose records lockstep holds and capture
// measures the reaction from: those --stimulus selects (by name or topic),
// by default the state channels. names lists them.
func triggers(outs []output, sel *keyexpr.Set) (flags []bool, names []string, err error) {
	flags = make([]bool, len(outs))
	var have []string
	for i, o := range outs {
		have = append(have, o.Name)
		if (sel.Len() == 0 && o.Schema == codec.SchemaState) || (sel.Len() > 0 && sel.Match(o.Name, o.Topic)) {
			flags[i] = true
			names = append(names, o.Topic)
		}
	}
	if err := sel.Unmatched("replayed channel", have); err != nil {
		return nil, nil, &ConfigError{Field: "Triggers", Err: err}
	}
	if len(names) == 0 {
		return nil, nil, configErr("Triggers", "no trigger channel: the replayed channels have no state channel (%s); choose the trigger channels", strings.Join(have, ", "))
	}
	return flags, names, nil
}

// selfMatch names the published key a pattern the replay listens to would
// also match (it would hear itself), or "".
func selfMatch(p keyexpr.Pattern, outs []output, own ...string) string {
	for _, o := range outs {
		if p.Match(o.Topic) {
			return o.Topic
		}
	}
	for _, k := range own {
		if k != "" && p.Match(k) {
			return k
		}
	}
	return ""
}
