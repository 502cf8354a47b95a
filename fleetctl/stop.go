package fleetctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Prefix is the key space of running fleet recordings.
const Prefix = "vrlog/fleet"

// TokenKey is the liveliness token of the fleet recording name; StopKey
// the key it answers stop queries on.
func TokenKey(name string) string { return Prefix + "/" + name }
func StopKey(name string) string  { return Prefix + "/" + name + "/stop" }

// Schema names the JSON layout of StopReply.
const StopSchema = "vrlog.fleet.stop/1"

// MaxStopRequest bounds a stop query's payload: a reason, a line or two.
const MaxStopRequest = 4 << 10

// maxWaiting bounds the stop queries waiting for the recorders' stop at
// once; more are refused at once (a flood costs no memory).
const maxWaiting = 64

var (
	// ErrRequest: a stop request that does not parse.
	ErrRequest = errors.New("fleetctl: bad stop request")
	// ErrNoFleet: no fleet recording answered the stop query.
	ErrNoFleet = errors.New("fleetctl: no fleet recording answered")
)

// CheckName validates a fleet recording's name: one key level, no
// wildcard.
func CheckName(name string) error {
	if !keyexpr.IsName(name) {
		return fmt.Errorf("%w: fleet name %q: want one zenoh key level without wildcards (e.g. run1)", ErrRequest, name)
	}
	return nil
}

// StopRequest is a stop query's payload: empty, or {"reason": "..."},
// a text the fleet prints as why it stopped.
type StopRequest struct {
	Reason string `json:"reason,omitempty"`
}

// ParseStopRequest decodes a stop query's payload: empty or one JSON
// object of the known fields, at most MaxStopRequest bytes, nothing
// after it, no NUL or control character in the reason.
func ParseStopRequest(payload []byte) (StopRequest, error) {
	var r StopRequest
	if len(payload) > MaxStopRequest {
		return r, fmt.Errorf("%w: %d bytes, at most %d", ErrRequest, len(payload), MaxStopRequest)
	}
	if len(bytes.TrimSpace(payload)) == 0 {
		return r, nil
	}
	d := json.NewDecoder(bytes.NewReader(payload))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return StopRequest{}, fmt.Errorf("%w: want nothing or a JSON object such as {\"reason\": \"tests done\"}: %v", ErrRequest, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return StopRequest{}, fmt.Errorf("%w: more after the JSON object", ErrRequest)
	}
	if strings.ContainsFunc(r.Reason, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return StopRequest{}, fmt.Errorf("%w: a control character in the reason", ErrRequest)
	}
	return r, nil
}

// checkStopKey checks that a query named this fleet's stop key, the
// fleet's name or '*' at its level: a query on vrlog/** never stops a
// fleet (access control rules match a query's key expression).
func checkStopKey(key string) error {
	parts := strings.Split(key, "/")
	if len(parts) != 4 || parts[0]+"/"+parts[1] != Prefix || parts[3] != "stop" || strings.Contains(parts[2], "**") {
		return fmt.Errorf("%w: a fleet stops only on a query for %s (NAME its name or *), not on %s", ErrRequest, StopKey("NAME"), key)
	}
	return nil
}

// StopReply is a fleet's answer to a stop query: sent once its
// recorders have answered their stop (or were given up on), or at once
// when the request is refused.
type StopReply struct {
	Schema    string   `json:"schema"`
	Name      string   `json:"name"`
	OK        bool     `json:"ok"`
	Error     string   `json:"error,omitempty"`
	Recorders []Member `json:"recorders,omitempty"`
}

// StopServer answers a running fleet's stop queries.
type StopServer struct {
	name      string
	q         *zenoh.Queryable
	token     *zenoh.Token
	requested chan struct{}

	mu      sync.Mutex
	reason  string
	waiting []*zenoh.Pending
	answer  *StopReply // once stopped: later queries get it at once
}

// ServeStop declares the fleet name's stop queryable and its liveliness
// token on sess. Requested is closed by the first stop query that
// parses; Answer replies to it and every later one.
func ServeStop(sess *zenoh.Session, name string) (*StopServer, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	s := &StopServer{name: name, requested: make(chan struct{})}
	q, err := sess.DeclareDeferredQueryable(StopKey(name), s.handle)
	if err != nil {
		return nil, fmt.Errorf("fleetctl: queryable %s: %w", StopKey(name), err)
	}
	s.q = q
	if s.token, err = sess.DeclareToken(TokenKey(name)); err != nil {
		q.Close()
		return nil, fmt.Errorf("fleetctl: liveliness token %s: %w", TokenKey(name), err)
	}
	return s, nil
}

// Requested is closed once a stop was asked for.
func (s *StopServer) Requested() <-chan struct{} { return s.requested }

// Reason is the first stop request's reason ("" when it gave none).
func (s *StopServer) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

func (s *StopServer) handle(q zenoh.Query, p *zenoh.Pending) {
	reply := func(rep StopReply) {
		rep.Schema, rep.Name = StopSchema, s.name
		b, _ := json.Marshal(rep) // plain data: never fails
		p.Reply(zenoh.Reply{Key: StopKey(s.name), Payload: b, Encoding: "application/json"})
	}
	refuse := func(err error) { reply(StopReply{Error: err.Error()}) }
	if err := checkStopKey(q.Key); err != nil {
		refuse(err)
		return
	}
	req, err := ParseStopRequest(q.Payload)
	if err != nil {
		refuse(err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.answer != nil:
		reply(*s.answer)
		return
	case len(s.waiting) >= maxWaiting:
		refuse(fmt.Errorf("fleetctl: %d stop requests wait already for the recorders", maxWaiting))
		return
	}
	s.waiting = append(s.waiting, p)
	select {
	case <-s.requested:
	default:
		s.reason = req.Reason
		close(s.requested)
	}
}

// Answer replies rep to every stop query waiting, and to those that come
// later.
func (s *StopServer) Answer(rep StopReply) {
	rep.Schema, rep.Name = StopSchema, s.name
	b, _ := json.Marshal(rep)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = &rep
	for _, p := range s.waiting {
		p.Reply(zenoh.Reply{Key: StopKey(s.name), Payload: b, Encoding: "application/json"})
	}
	s.waiting = nil
}

// Close withdraws the token and the queryable; a stop query still
// waiting is answered that the fleet went away.
func (s *StopServer) Close() error {
	s.token.Close()
	s.mu.Lock()
	if s.answer == nil {
		for _, p := range s.waiting {
			b, _ := json.Marshal(StopReply{Schema: StopSchema, Name: s.name, Error: "fleetctl: the fleet recording ended before its recorders were stopped"})
			p.Reply(zenoh.Reply{Key: StopKey(s.name), Payload: b, Encoding: "application/json"})
		}
		s.waiting = nil
	}
	s.mu.Unlock()
	return s.q.Close()
}

// RequestStop asks the fleet recording name to stop its recorders and
// returns its answer, which comes once they have answered their stop.
func RequestStop(ctx context.Context, sess *zenoh.Session, name string, req StopRequest, timeout time.Duration) (StopReply, error) {
	if err := CheckName(name); err != nil {
		return StopReply{}, err
	}
	b, _ := json.Marshal(req)
	if _, err := ParseStopRequest(b); err != nil {
		return StopReply{}, err
	}
	replies, err := sess.Get(ctx, StopKey(name), b, timeout)
	if err != nil {
		return StopReply{}, fmt.Errorf("fleetctl: query %s: %w", StopKey(name), err)
	}
	zerr := ""
	for _, r := range replies {
		if r.Err {
			zerr = string(r.Payload)
			continue
		}
		var rep StopReply
		if err := json.Unmarshal(r.Payload, &rep); err != nil || rep.Schema != StopSchema {
			return StopReply{}, fmt.Errorf("fleetctl: %s answered something that is not a %s: %.200q", StopKey(name), StopSchema, r.Payload)
		}
		return rep, nil
	}
	if zerr != "" {
		return StopReply{}, fmt.Errorf("%w on %s within %v (zenoh: %s)", ErrNoFleet, StopKey(name), timeout, zerr)
	}
	return StopReply{}, fmt.Errorf("%w on %s within %v", ErrNoFleet, StopKey(name), timeout)
}
