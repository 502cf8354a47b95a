package recctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/recorder/files"
	"github.com/vrlog/vrlog/recorder/snapshot"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// maxWait bounds how long a request waits for its outcome (a snapshot
// waits for its --after window and its writing; the client's own timeout
// usually ends the wait first).
const maxWait = 10 * time.Minute

// maxPending bounds the requests waiting for their outcomes at once; more
// are refused at once (a flood of queries costs no memory).
const maxPending = 64

// nameCheck bounds how long Serve looks for another recorder of the same
// name before it takes the name.
const nameCheck = time.Second

// ErrNameTaken: another recorder answers as that name: two of them would
// each take some of the requests (a stop reaching one while the other
// records).
var ErrNameTaken = errors.New("recctl: name taken")

// Options is what a Server says of its recorder beyond its status.
type Options struct {
	Version string // vrlog's, as --version prints it
}

// Server answers a recorder's control queries.
type Server struct {
	name    string
	r       *recorder.Recorder
	opts    Options
	token   *zenoh.Token
	qs      []*zenoh.Queryable
	slots   chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	pending sync.WaitGroup
	once    sync.Once
}

// Serve declares the recorder name's liveliness token and its verbs'
// queryables on sess.
func Serve(sess *zenoh.Session, name string, r *recorder.Recorder, opts Options) (*Server, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if keys, err := sess.LiveTokens(TokenKey(name), nameCheck); err == nil && len(keys) > 0 {
		return nil, fmt.Errorf("%w: a recorder named %q already answers on this zenoh network (give this one another name)", ErrNameTaken, name)
	}
	s := &Server{name: name, r: r, opts: opts, slots: make(chan struct{}, maxPending)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, v := range Verbs {
		q, err := sess.DeclareDeferredQueryable(Key(name, v), func(q zenoh.Query, p *zenoh.Pending) { s.handle(v, q, p) })
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("recctl: queryable %s: %w", Key(name, v), err)
		}
		s.qs = append(s.qs, q)
	}
	t, err := sess.DeclareToken(TokenKey(name)) // last: once listed, it answers
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("recctl: liveliness token %s: %w", TokenKey(name), err)
	}
	s.token = t
	return s, nil
}

// Close withdraws the token and the queryables; requests still waiting
// for their outcome are answered (closed).
func (s *Server) Close() error {
	s.once.Do(func() {
		if s.token != nil {
			s.token.Close()
		}
		s.cancel()
		s.pending.Wait()
		for _, q := range s.qs {
			q.Close()
		}
	})
	return nil
}

// handle answers one query on verb v's key: refused at once when it does
// not parse, when it would reach the verb by a wildcard (a mutating verb
// acts only on a query for its own key, the recorder's name or '*'), or
// when too many wait; else carried out on a goroutine of its own and
// answered once it took effect.
func (s *Server) handle(v Verb, q zenoh.Query, p *zenoh.Pending) {
	answer := func(rep Reply) {
		rep.Schema, rep.Name, rep.Verb = ReplySchema, s.name, v
		if rep.State == "" {
			rep.State = string(s.r.Status().State)
		}
		b, _ := json.Marshal(rep) // plain data: never fails
		p.Reply(zenoh.Reply{Key: Key(s.name, v), Payload: b, Encoding: "application/json"})
	}
	refuse := func(code Code, err error) { answer(Reply{Code: code, Error: err.Error()}) }
	if err := checkQueryKey(q.Key, v); err != nil {
		refuse(CodeBadRequest, err)
		return
	}
	req, err := ParseRequest(v, q.Payload)
	if err != nil {
		refuse(CodeBadRequest, err)
		return
	}
	if v == Status {
		st := s.report()
		answer(Reply{OK: true, Status: &st})
		return
	}
	select {
	case s.slots <- struct{}{}:
	default:
		refuse(CodeFailed, fmt.Errorf("recctl: %d requests wait already: try again", maxPending))
		return
	}
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		defer func() { <-s.slots }()
		ctx, cancel := context.WithTimeout(s.ctx, maxWait)
		defer cancel()
		answer(s.do(ctx, v, req, q))
	}()
}

// checkQueryKey checks that a query for the mutating verb v named it: the
// query's key is vrlog/record/NAME/v, NAME a name or '*', so that a query
// for vrlog/record/** never starts, stops and splits a recorder at once.
func checkQueryKey(key string, v Verb) error {
	if v == Status {
		return nil
	}
	parts := strings.Split(key, "/")
	if len(parts) != 4 || parts[0]+"/"+parts[1] != Prefix || parts[3] != string(v) || strings.Contains(parts[2], "**") {
		return fmt.Errorf("%w: %s acts only on a query for %s (NAME a recorder's name or *), not on %s", ErrRequest, v, Key("NAME", v), key)
	}
	return nil
}

// do carries out a request.
func (s *Server) do(ctx context.Context, v Verb, req Request, q zenoh.Query) Reply {
	var o recorder.Outcome
	var err error
	switch v {
	case Start:
		o, err = s.r.Start(ctx, req.File, req.Note)
	case Stop:
		o, err = s.r.Stop(ctx)
	case Pause:
		o, err = s.r.Pause(ctx)
	case Resume:
		o, err = s.r.Resume(ctx)
	case Split:
		o, err = s.r.Split(ctx)
	case Snapshot:
		cause := "zenoh query on " + q.Key
		if req.Note != "" {
			cause += ": " + req.Note
		}
		t := logfmt.SnapshotTrigger{Cause: cause, WallNs: q.RecvWallNs, MonoNs: q.RecvMonoNs}
		if t.MonoNs == 0 {
			t = snapshot.TriggerNow(cause)
		}
		o, err = s.r.Snapshot(ctx, t, "query")
	}
	rep := Reply{OK: err == nil, State: string(o.State), File: abs(o.File)}
	if f := o.Finished; f != nil && f.Path != "" {
		rep.Finished = &FileReport{Path: abs(f.Path), Bytes: f.Bytes, Records: f.Records}
	}
	if sn := o.Snapshot; sn != nil && sn.Err == nil {
		rep.Snapshot = &SnapshotReport{Path: abs(sn.Path), Records: sn.Records, Bytes: sn.Bytes, BeforeS: sn.Before.Seconds(), AfterS: sn.After.Seconds(),
			Short: sn.Snapshot.Short, HeldOpen: sn.Snapshot.HeldOpen}
	}
	if err != nil {
		rep.Code, rep.Error = codeOf(err), message(err)
	}
	return rep
}

// message is err for the person who asked: the words of its kind left
// out (the reply's code says them), what the recorder says of it kept
// ("paused already", "recording into run.vrlog already").
func message(err error) string {
	s := err.Error()
	for _, e := range []error{files.ErrState, files.ErrName, files.ErrExists, recorder.ErrMode} {
		s = strings.Replace(s, e.Error()+": ", "", 1)
	}
	return s
}

// codeOf classifies a refusal or failure.
func codeOf(err error) Code {
	switch {
	case errors.Is(err, files.ErrName):
		return CodeName
	case errors.Is(err, files.ErrExists), errors.Is(err, logfmt.ErrExists):
		return CodeExists
	case errors.Is(err, recorder.ErrState):
		return CodeState
	case errors.Is(err, recorder.ErrMode):
		return CodeMode
	case errors.Is(err, recorder.ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, snapshot.ErrEnded):
		return CodeClosed
	}
	return CodeFailed
}

// report is the recorder's status as JSON reports it.
func (s *Server) report() StatusReport {
	st := s.r.Status()
	host, _ := os.Hostname()
	mode := "files"
	if st.Snapshot != nil {
		mode = "snapshot"
	}
	rep := StatusReport{Schema: StatusSchema, Name: s.name, Host: host, PID: os.Getpid(), Version: s.opts.Version, State: string(st.State), Mode: mode,
		Dir: abs(s.r.Dir()), File: abs(st.File), Files: len(st.Files), UptimeS: round3(st.Elapsed.Seconds()), BytesWritten: st.BytesWritten, Records: st.Records,
		BacklogBytes: st.Backlog, QueueBytes: st.QueueBytes, DiskKeepsUp: st.Backlog < st.QueueBytes/4, Channels: []ChannelReport{}}
	if st.Zenoh != nil {
		rep.Zenoh = st.Zenoh.String()
	}
	for _, c := range st.Channels {
		rep.Drops += c.Drops
		rep.Channels = append(rep.Channels, ChannelReport{Name: c.Name, Transport: c.Transport, Schema: c.Schema, Records: c.Msgs, Hz: c.Hz,
			MBps: round3(c.MBps), Drops: c.Drops, Unwritten: c.Unwritten, Skipped: c.Skipped, Error: c.Error, Warning: c.Warning})
	}
	return rep
}

func abs(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
