package filexfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vrlog/vrlog/transport/zenoh"
)

// Server serves a recorder's finished files on its zenoh session.
type Server struct {
	name, host string
	cat        *catalog
	files      *zenoh.Queryable
	ranges     *zenoh.Queryable
	token      *zenoh.Token // on FilesKey: collectors find the recorders that serve files
	work       chan job
	wg         sync.WaitGroup
	ctx        context.Context
	cancel     context.CancelFunc
	closeOnce  sync.Once
	closeErr   error
}

type job struct {
	q    zenoh.Query
	p    *zenoh.Pending
	list bool
}

// Workers read and answer requests; queued bounds the requests waiting
// for one. The server's memory is workers × MaxChunk for the bytes in
// flight; a request beyond the queue is answered busy at once, and the
// client asks again.
const (
	workers = 4
	queued  = 256
)

// rescanEvery is how often the output directory is looked at between
// listings, so that a file just finished is hashed before it is asked for.
const rescanEvery = 2 * time.Second

// Serve mounts the file server of the recorder name on sess: FilesKey(name)
// lists the finished logs of dir (each with its size and SHA-256), and
// RangeKey(name) serves byte ranges of them. Only regular files directly
// in dir are served, and only finished ones: a log a writer still holds
// is listed as pending, a log a crash left unfinished is recovered into a
// verified copy first (NAME.recovered.vrlog, marked as recovered). Close
// it before the session.
func Serve(sess *zenoh.Session, name, dir string) (*Server, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	cat, err := openCatalog(dir)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	s := &Server{name: name, host: host, cat: cat, work: make(chan job, queued)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for range workers {
		s.wg.Add(1)
		go s.worker()
	}
	s.wg.Add(1)
	go s.rescan()
	if s.files, err = sess.DeclareDeferredQueryable(FilesKey(name), s.enqueue(true)); err == nil {
		if s.ranges, err = sess.DeclareDeferredQueryable(RangeKey(name), s.enqueue(false)); err == nil {
			s.token, err = sess.DeclareToken(TokenKey(name))
		}
	}
	if err != nil {
		s.closeQueryables()
		s.stop()
		return nil, fmt.Errorf("filexfer: serve %s: %w", name, err)
	}
	return s, nil
}

// enqueue hands a query to the workers, or answers busy when they are
// behind: the queryable's goroutine never waits on a disk.
func (s *Server) enqueue(list bool) func(zenoh.Query, *zenoh.Pending) {
	return func(q zenoh.Query, p *zenoh.Pending) {
		select {
		case s.work <- job{q: q, p: p, list: list}:
		default:
			p.Reply(errorReply(&RemoteError{Schema: ErrorSchema, Code: CodeBusy, Message: fmt.Sprintf("%d requests waiting: ask again", queued)}))
		}
	}
}

func (s *Server) worker() {
	defer s.wg.Done()
	var buf []byte // as large as the largest range this worker served: at most MaxChunk
	for j := range s.work {
		if j.list {
			j.p.Reply(s.list(j.q))
		} else {
			j.p.Reply(s.serveRange(j.q, &buf))
		}
	}
}

func (s *Server) rescan() {
	defer s.wg.Done()
	t := time.NewTicker(rescanEvery)
	defer t.Stop()
	for {
		s.cat.scan(s.ctx) // errors are answered to the next listing
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// list answers a listing request.
func (s *Server) list(q zenoh.Query) zenoh.Reply {
	if err := checkKey(q.Key, FilesKey(s.name)); err != nil {
		return badRequest(err)
	}
	if err := ParseListRequest(q.Payload); err != nil {
		return badRequest(err)
	}
	files, pending, err := s.cat.scan(s.ctx)
	if err != nil {
		return errorReply(&RemoteError{Schema: ErrorSchema, Code: CodeInternal, Message: err.Error()})
	}
	if files == nil {
		files = []File{}
	}
	b, _ := json.Marshal(Listing{Schema: ListingSchema, Name: s.name, Host: s.host, Files: files, Pending: pending})
	return zenoh.Reply{Payload: b, Encoding: ListingEncoding}
}

// serveRange answers a range request with the bytes asked for (fewer
// only at the file's end), read into *buf (grown to the request).
func (s *Server) serveRange(q zenoh.Query, buf *[]byte) zenoh.Reply {
	if err := checkKey(q.Key, RangeKey(s.name)); err != nil {
		return badRequest(err)
	}
	req, err := ParseRangeRequest(q.Payload)
	if err != nil {
		return badRequest(err)
	}
	f, size, err := s.cat.open(req.File, req.SHA256)
	if err != nil {
		return errorReply(err)
	}
	defer f.Close()
	if req.Offset > size {
		return badRequest(fmt.Errorf("%w: offset %d is past the end of %s (%d bytes)", ErrRequest, req.Offset, req.File, size))
	}
	want := min(req.Length, size-req.Offset)
	if int64(cap(*buf)) < want {
		*buf = make([]byte, want)
	}
	n, err := f.ReadAt((*buf)[:want], req.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return errorReply(&RemoteError{Schema: ErrorSchema, Code: CodeInternal, Message: fmt.Sprintf("read %s: %v", req.File, err)})
	}
	return zenoh.Reply{Payload: (*buf)[:n], Encoding: RangeEncoding}
}

func badRequest(err error) zenoh.Reply {
	return errorReply(&RemoteError{Schema: ErrorSchema, Code: CodeBadRequest, Message: err.Error()})
}

func errorReply(err error) zenoh.Reply {
	var re *RemoteError
	if !errors.As(err, &re) {
		re = &RemoteError{Schema: ErrorSchema, Code: CodeInternal, Message: err.Error()}
	}
	b, _ := json.Marshal(re)
	return zenoh.Reply{Err: true, Payload: b, Encoding: ErrorEncoding}
}

// Close stops serving: queries already taken are answered first.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.closeQueryables()
		s.stop()
	})
	return s.closeErr
}

// closeQueryables withdraws the token and the queryables: no handler runs
// after it.
func (s *Server) closeQueryables() error {
	var errs []error
	if s.token != nil {
		errs = append(errs, s.token.Close())
	}
	for _, q := range []*zenoh.Queryable{s.files, s.ranges} {
		if q != nil {
			errs = append(errs, q.Close())
		}
	}
	return errors.Join(errs...)
}

func (s *Server) stop() {
	s.cancel()
	close(s.work)
	s.wg.Wait()
	s.cat.close()
}
