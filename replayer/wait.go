package replayer

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vrlog/vrlog/transport/zenoh"
)

// waitPoll is how often --wait-for-subscribers looks again.
const waitPoll = 20 * time.Millisecond

// unmatched lists the outputs still without their subscribers: a zenoh
// key without a matching subscriber (zenoh's matching status), an
// iceoryx2 service with fewer than n subscribers.
func (p *publishers) unmatched(n int) ([]string, error) {
	var out []string
	for i, o := range p.outs {
		switch {
		case p.zpub[i] != nil:
			m, err := p.zpub[i].Matching()
			if err != nil {
				return nil, fmt.Errorf("zenoh %s: %w", o.Topic, err)
			}
			if !m {
				out = append(out, o.Topic+" (zenoh: no matching subscriber)")
			}
		case p.ipub[i] != nil:
			c, err := p.ipub[i].Subscribers()
			if err != nil {
				return nil, fmt.Errorf("iceoryx2 %s: %w", o.Topic, err)
			}
			if c < n {
				out = append(out, fmt.Sprintf("%s (iceoryx2: %d of %d subscribers)", o.Topic, c, n))
			}
		}
	}
	return out, nil
}

// waitForSubscribers returns once every output has its subscribers; after
// timeout (0: none) it fails naming the ones still unmatched. It says on
// w what it waits for, and again whenever that changes.
func waitForSubscribers(ctx context.Context, p *publishers, n int, timeout time.Duration, w io.Writer) error {
	start := time.Now()
	said := ""
	t := time.NewTicker(waitPoll)
	defer t.Stop()
	for {
		left, err := p.unmatched(n)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			if said != "" && w != nil {
				fmt.Fprintf(w, "replay: every channel has its subscribers after %.1f s\n", time.Since(start).Seconds())
			}
			return nil
		}
		if timeout > 0 && time.Since(start) >= timeout {
			return kindf(ErrNoSubscribers, "no subscribers after %v on %d channel(s): %s", timeout, len(left), strings.Join(left, ", "))
		}
		if now := strings.Join(left, ", "); now != said && w != nil {
			fmt.Fprintf(w, "replay: waiting for subscribers on %s\n", now)
			said = now
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// subscribers is output i's subscriber count: zenoh's matching status (0
// or 1), iceoryx2's count; 0 for an output without a publisher.
func (p *publishers) subscribers(i int) (int, error) {
	switch {
	case p.zpub[i] != nil:
		m, err := p.zpub[i].Matching()
		if m {
			return 1, err
		}
		return 0, err
	case p.ipub[i] != nil:
		return p.ipub[i].Subscribers()
	}
	return 0, nil
}

// waitForController returns once a zenoh liveliness token exists on a key
// of the lockstep key expression: the controller's, declared on its
// answer key (a recorder declares none there); after timeout (0: none) it
// fails. It says on w what it waits for, once.
func waitForController(ctx context.Context, sess *zenoh.Session, key string, timeout time.Duration, w io.Writer) error {
	start := time.Now()
	said := false
	for {
		tokens, err := sess.LiveTokens(key, 200*time.Millisecond)
		if err != nil {
			return kindf(ErrTransport, "waiting for the controller: %w", err)
		}
		if len(tokens) > 0 {
			if said && w != nil {
				fmt.Fprintf(w, "replay: the controller is there after %.1f s (liveliness token %s)\n", time.Since(start).Seconds(), tokens[0])
			}
			return nil
		}
		if timeout > 0 && time.Since(start) >= timeout {
			return kindf(ErrNoController, "no controller after %v: no zenoh liveliness token on %s (a controller declares one on its answer key: docs/replay.md \"Waiting for the controller\")", timeout, key)
		}
		if !said && w != nil {
			fmt.Fprintf(w, "replay: waiting for the controller: a zenoh liveliness token on %s (subscribers of the trigger keys, a recorder too, do not count)\n", key)
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(waitPoll):
		}
	}
}
