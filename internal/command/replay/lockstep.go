package replay

import (
	"context"
	"fmt"
	"strings"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// answers turns the samples on --lockstep's key expression into the
// player's answer channel: one pending value means "answered". They come
// from a subscriber of its own, or from the capture's subscription when it
// captures the answers (tap): then every answer has its receive stamp in
// the response log before the next trigger is released and stamped.
type answers struct {
	sub  *zenoh.Subscriber // nil when tapped
	pat  keyexpr.Pattern
	ch   chan struct{}
	stop context.CancelFunc
	done chan struct{}
}

func (a *answers) answer() {
	select {
	case a.ch <- struct{}{}:
	default: // an answer is pending already
	}
}

// tapAnswers takes the answers from the capture's samples (tap).
func tapAnswers(p keyexpr.Pattern) *answers {
	return &answers{pat: p, ch: make(chan struct{}, 1)}
}

// tap is the capture's OnZenohSample.
func (a *answers) tap(key string) {
	if a.pat.Match(key) {
		a.answer()
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

func subscribeAnswers(sess *zenoh.Session, key string) (*answers, error) {
	sub, err := sess.Subscribe(key, zenoh.SubscriberOptions{QueueLen: 1024})
	if err != nil {
		return nil, fmt.Errorf("--lockstep %s: %w", key, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &answers{sub: sub, ch: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		var buf []zenoh.Sample
		for {
			var err error
			if buf, err = sub.Receive(ctx, buf[:0]); err != nil {
				return
			}
			a.answer()
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
// measures the reaction from: those --trigger selects (by name or topic),
// by default the state channels. names lists them.
func triggers(outs []output, sel *keyexpr.Set, why string) (flags []bool, names []string, err error) {
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
		return nil, nil, fmt.Errorf("--trigger %w", err)
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("%s: no trigger channel: the replayed channels have no state channel (%s); choose them with --trigger", why, strings.Join(have, ", "))
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
