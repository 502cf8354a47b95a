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
	// steps and seeks wait for their records in order, on one goroutine,
	// so that status, pause, resume, rate and stop are answered at once
	// meanwhile; ctx ends their waits on Close.
	ordered chan pendingCommand
	ctx     context.Context
	cancel  context.CancelFunc
}

type pendingCommand struct {
	req player.Request
	p   *zenoh.Pending
}

// Serve declares the control queryable (ControlKey) and the status
// publisher (StatusKey) of the replay name on sess. span is the replay
// window's length, for the status.
func Serve(sess *zenoh.Session, name string, p *player.Player, span time.Duration) (*Server, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	s := &Server{name: name, p: p, span: span, nudge: make(chan struct{}, 1), stop: make(chan struct{}), ordered: make(chan pendingCommand, 64)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	var err error
	if s.pub, err = sess.Publisher(StatusKey(name), zenoh.PublisherOptions{Encoding: "application/json"}); err != nil {
		return nil, err
	}
	s.done.Add(2)
	go s.publish()
	go s.runOrdered()
	if s.q, err = sess.DeclareDeferredQueryable(ControlKey(name), s.handle); err != nil {
		s.cancel()
		close(s.stop)
		s.done.Wait()
		s.pub.Close()
		return nil, err
	}
	return s, nil
}

// Status is the replay's status now.
func (s *Server) Status() Status { return StatusOf(s.name, s.p.Status(), s.span) }

// handle answers a query: status at once from the player's status; pause,
// resume, rate and stop once applied (at the next record, or at once while
// a lockstep record waits for its answer); steps and seeks, which wait for
// their records, in arrival order on their own goroutine.
func (s *Server) handle(q zenoh.Query, p *zenoh.Pending) {
	var req player.Request
	var err error
	if body := bytes.TrimSpace(q.Payload); q.HasPayload && len(body) > 0 {
		req, err = ParseCommand(string(body))
	} else {
		req, err = ParseParameters(q.Parameters)
	}
	switch {
	case err != nil:
		p.Reply(failReply(err))
	case req.Op == player.OpStatus:
		p.Reply(s.statusReply())
	case req.Op == player.OpStep || req.Op == player.OpSeek:
		select {
		case s.ordered <- pendingCommand{req, p}:
		default:
			p.Reply(failReply(errors.New("replayctl: too many steps and seeks pending")))
		}
	default:
		p.Reply(s.do(req)...)
	}
}

// runOrdered carries out the steps and seeks in arrival order.
func (s *Server) runOrdered() {
	defer s.done.Done()
	for {
		select {
		case <-s.stop:
			for {
				select {
				case c := <-s.ordered:
					c.p.Reply(failReply(errors.New("replayctl: the replay stopped serving")))
				default:
					return
				}
			}
		case c := <-s.ordered:
			c.p.Reply(s.do(c.req)...)
		}
	}
}

// do carries out req and says how it went.
func (s *Server) do(req player.Request) []zenoh.Reply {
	ctx, cancel := context.WithTimeout(s.ctx, maxWait)
	_, err := s.p.Do(ctx, req)
	cancel()
	s.changed()
	if err != nil && req.Op == player.OpStop && (s.ctx.Err() != nil || errors.Is(err, player.ErrFinished)) {
		// The replay ended: its end closes this server (replayer's fixture),
		// which may end the stop's wait before the stop sees it done (a
		// loaded machine: "context canceled", e2e TestCtlWithoutReplayRefusesSeveral).
		err = nil
	}
	if err != nil {
		return []zenoh.Reply{failReply(err)} // refused, or the replay has finished
	}
	return []zenoh.Reply{s.statusReply()}
}

func failReply(err error) zenoh.Reply {
	return zenoh.Reply{Err: true, Payload: []byte(err.Error()), Encoding: ErrorEncoding}
}

func (s *Server) statusReply() zenoh.Reply {
	b, _ := json.Marshal(s.Status())
	return zenoh.Reply{Payload: b, Encoding: "application/json"}
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

// Close stops serving (a step or seek still waiting gets an error reply)
// and publishes the last status.
func (s *Server) Close() error {
	var err error
	s.closeMu.Do(func() {
		s.cancel()
		qerr := s.q.Close() // no query is handled after this
		close(s.stop)
		s.done.Wait()
		b, _ := json.Marshal(s.Status())
		err = errors.Join(s.pub.Put(b, nil), qerr, s.pub.Close())
	})
	return err
}
