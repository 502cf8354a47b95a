package replayctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// maxWait bounds how long a command's reply waits for it to take effect (a
// step of many lockstep records can take long; the client's own timeout
// usually ends the wait first).
const maxWait = 10 * time.Minute

// statusEvery is how often the status is published while nothing changes.
const statusEvery = time.Second

// Server answers a replay's control queries and publishes its status.
type Server struct {
	name    string
	p       *player.Player
	span    time.Duration
	q       *zenoh.Queryable
	pub     *zenoh.Publisher
	nudge   chan struct{}
	stop    chan struct{}
	done    sync.WaitGroup
	closeMu sync.Once
}

// Serve declares the control queryable (ControlKey) and the status
// publisher (StatusKey) of the replay name on sess. span is the replay
// window's length, for the status.
func Serve(sess *zenoh.Session, name string, p *player.Player, span time.Duration) (*Server, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	s := &Server{name: name, p: p, span: span, nudge: make(chan struct{}, 1), stop: make(chan struct{})}
	var err error
	if s.pub, err = sess.Publisher(StatusKey(name), zenoh.PublisherOptions{Encoding: "application/json"}); err != nil {
		return nil, err
	}
	if s.q, err = sess.DeclareQueryable(ControlKey(name), s.handle); err != nil {
		s.pub.Close()
		return nil, err
	}
	s.done.Add(1)
	go s.publish()
	return s, nil
}

// Status is the replay's status now.
func (s *Server) Status() Status { return StatusOf(s.name, s.p.Status(), s.span) }

func (s *Server) handle(q zenoh.Query) []zenoh.Reply {
	fail := func(err error) []zenoh.Reply {
		return []zenoh.Reply{{Err: true, Payload: []byte(err.Error()), Encoding: ErrorEncoding}}
	}
	var req player.Request
	var err error
	if body := bytes.TrimSpace(q.Payload); q.HasPayload && len(body) > 0 {
		req, err = ParseCommand(string(body))
	} else {
		req, err = ParseParameters(q.Parameters)
	}
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), maxWait)
	_, err = s.p.Do(ctx, req)
	cancel()
	s.changed()
	if err != nil {
		return fail(err) // refused, or the replay has finished
	}
	b, _ := json.Marshal(s.Status())
	return []zenoh.Reply{{Payload: b, Encoding: "application/json"}}
}

func (s *Server) changed() {
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// publish puts the status on StatusKey when its state changes, after each
// command, and every statusEvery otherwise.
func (s *Server) publish() {
	defer s.done.Done()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	var last time.Time
	lastState := ""
	for {
		select {
		case <-s.stop:
			return
		case <-s.nudge:
		case <-t.C:
			if st := s.Status().State; st == lastState && time.Since(last) < statusEvery {
				continue
			}
		}
		st := s.Status()
		b, _ := json.Marshal(st)
		s.pub.Put(b, nil) // a lost status is told again within statusEvery
		last, lastState = time.Now(), st.State
	}
}

// Close publishes the last status, then stops serving.
func (s *Server) Close() error {
	var err error
	s.closeMu.Do(func() {
		close(s.stop)
		s.done.Wait()
		b, _ := json.Marshal(s.Status())
		err = errors.Join(s.pub.Put(b, nil), s.q.Close(), s.pub.Close())
	})
	return err
}
