package recctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vrlog/vrlog/transport/zenoh"
)

// ErrNoAnswer: a recorder did not answer within the timeout.
var ErrNoAnswer = errors.New("recctl: no answer")

// ErrIgnored: a recorder that holds its liveliness token did not answer
// (an ErrNoAnswer too): zenoh's access control dropped the query on its
// way (a router that lets only the controller's identity ask recorders),
// a partition hides it (until zenoh's lease drops its token), or it is
// stalled.
var ErrIgnored = fmt.Errorf("%w while on the network", ErrNoAnswer)

// Answer is one recorder's answer to a request, or why there is none.
type Answer struct {
	Name  string
	Reply Reply
	Err   error // ErrNoAnswer, or an answer that is not a Reply
}

// discovery is how long List waits for more tokens once it sees some: a
// new session learns the network's tokens in its first moments.
const discovery = 300 * time.Millisecond

// List names the recorders sess reaches, sorted, from their liveliness
// tokens; it waits up to timeout for the first one, then while new ones
// arrive (zenoh.Session.FindTokens).
func List(ctx context.Context, sess *zenoh.Session, timeout time.Duration) ([]string, error) {
	keys, err := sess.FindTokens(ctx, TokenKey("*"), timeout, discovery)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("recctl: liveliness query %s: %w", TokenKey("*"), err)
	}
	var names []string
	for _, k := range keys {
		if n, ok := strings.CutPrefix(k, Prefix+"/"); ok && !strings.Contains(n, "/") {
			names = append(names, n)
		}
	}
	return names, nil
}

// waitFor waits until every name's token is seen (its queryables, declared
// before it, are then reachable), or the deadline.
func waitFor(ctx context.Context, sess *zenoh.Session, names []string, deadline time.Time) {
	for {
		keys, _ := sess.LiveTokens(TokenKey("*"), min(200*time.Millisecond, max(time.Until(deadline), time.Millisecond)))
		missing := false
		for _, n := range names {
			if !slices.Contains(keys, TokenKey(n)) {
				missing = true
			}
		}
		if !missing || time.Now().After(deadline) || ctx.Err() != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Ask sends v with req to each recorder of names, all at once, and
// returns their answers in names' order; names nil asks every recorder
// List finds. A recorder that does not answer within timeout has Err
// ErrNoAnswer. A request is sent once, never again: a recorder that
// answers late may still have acted on it.
func Ask(ctx context.Context, sess *zenoh.Session, names []string, v Verb, req Request, timeout time.Duration) ([]Answer, error) {
	if _, err := ParseRequest(v, mustJSON(req)); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	if names == nil {
		var err error
		if names, err = List(ctx, sess, timeout); err != nil {
			return nil, err
		}
	} else {
		for _, n := range names {
			if err := CheckName(n); err != nil {
				return nil, err
			}
		}
		waitFor(ctx, sess, names, deadline)
	}
	out := make([]Answer, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = ask(ctx, sess, n, v, req, max(time.Until(deadline), 100*time.Millisecond))
		}()
	}
	wg.Wait()
	ignored(sess, out, v, timeout)
	return out, nil
}

// ignored marks the answers missing from recorders whose liveliness
// token is there: ErrIgnored, said so.
func ignored(sess *zenoh.Session, answers []Answer, v Verb, timeout time.Duration) {
	var tokens []string
	for i, a := range answers {
		if !errors.Is(a.Err, ErrNoAnswer) {
			continue
		}
		if tokens == nil {
			tokens, _ = sess.LiveTokens(TokenKey("*"), time.Second)
		}
		if slices.Contains(tokens, TokenKey(a.Name)) {
			answers[i].Err = fmt.Errorf("%w: %s is on the network (its liveliness token %s is there) but did not answer %s within %v: a router's access control lets only the controller's identity ask recorders (docs/deployment.md, \"Access control\"), a partition on its way (a token outlives its link for zenoh's lease, 10 s), or the recorder is stalled",
				ErrIgnored, a.Name, TokenKey(a.Name), Key(a.Name, v), timeout.Round(100*time.Millisecond))
		}
	}
}

// ask sends one request to one recorder.
func ask(ctx context.Context, sess *zenoh.Session, name string, v Verb, req Request, timeout time.Duration) Answer {
	a := Answer{Name: name}
	var payload []byte
	if req != (Request{}) {
		payload = mustJSON(req)
	}
	replies, err := sess.Get(ctx, Key(name, v), payload, timeout)
	if err != nil {
		a.Err = fmt.Errorf("recctl: query %s: %w", Key(name, v), err)
		return a
	}
	zerr := ""
	for _, r := range replies {
		if r.Err {
			zerr = string(r.Payload)
			continue
		}
		if err := json.Unmarshal(r.Payload, &a.Reply); err != nil || a.Reply.Schema != ReplySchema {
			a.Err = fmt.Errorf("recctl: %s answered something that is not a %s: %.200q", Key(name, v), ReplySchema, r.Payload)
			return a
		}
		return a
	}
	a.Err = fmt.Errorf("%w from %s within %v", ErrNoAnswer, name, timeout)
	if zerr != "" {
		a.Err = fmt.Errorf("%w (zenoh: %s)", a.Err, zerr)
	}
	return a
}

func mustJSON(r Request) []byte {
	b, _ := json.Marshal(r) // two strings: never fails
	return b
}
