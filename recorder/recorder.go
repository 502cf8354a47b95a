package recorder

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/recorder/files"
	"github.com/vrlog/vrlog/recorder/output"
	"github.com/vrlog/vrlog/recorder/snapshot"
	"github.com/vrlog/vrlog/transport/iceoryx2"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Recorder is a running recorder: its transports subscribed, its
// pipeline running, its output idle, recording or paused. Control it
// with Start, Stop, Pause, Resume, Split and Snapshot (control.go); it
// ends with the context Open was given (or Config.Duration), and Wait
// returns its summary.
type Recorder struct {
	cfg     Config
	w       *writer
	out     output.Output
	sess    *zenoh.Session
	started time.Time
	status  atomic.Pointer[Status]
	watch   *sessionWatch // the zenoh session's connectivity, if there is a session
	done    chan struct{} // the writer stage ended and the output is closed
	sum     *Summary
	err     error
}

// Mount is what Config.Mount starts on a running recorder (its control
// plane, a file server): it is given the recorder's zenoh session, and
// what it returns is closed when the recording is over, before the
// session.
type Mount func(r *Recorder, sess *zenoh.Session) (io.Closer, error)

// Run records until ctx ends or a write fails, then closes the log. The
// returned Summary is valid in both cases.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	r, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return r.Wait()
}

// Open opens the output and the transports and starts the pipeline:
// sources → lanes → writer stage (books, output). The recording ends when
// ctx ends, after Config.Duration, or when a write fails.
func Open(ctx context.Context, cfg Config) (*Recorder, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	comp, err := compileCompression(cfg.Compression)
	if err != nil {
		return nil, err
	}
	var named []string             // iceoryx2 services by name
	var patterns []keyexpr.Pattern // and by pattern, found by discover
	for _, s := range cfg.IceoryxServices {
		p, err := keyexpr.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("recorder: iceoryx2 service %w", err)
		}
		if p.Literal() {
			named = append(named, s)
		} else {
			patterns = append(patterns, p)
		}
	}
	r := &Recorder{cfg: cfg, done: make(chan struct{})}
	subs := &subscriptions{}
	w := &writer{cfg: &r.cfg, lanes: newLanes(cfg.Snapshot != nil), books: newBooks(&r.cfg, comp, subs), cmds: make(chan command),
		ended: new(atomic.Int64), status: func() { r.publish(true) }}
	r.w = w
	abandon := func() {}
	if cfg.Snapshot != nil {
		md := logMetadata(cfg)
		md[hostclock.MetaRecording] = newRecordingID()
		if w.snap, err = snapshot.New(snapshot.Options{Config: *cfg.Snapshot, Base: cfg.Output, Force: cfg.Force,
			FlushInterval: cfg.FlushInterval, Metadata: md}); err != nil {
			return nil, err
		}
		w.out, abandon = w.snap, func() { w.snap.Close() }
	} else {
		if w.files, err = files.New(files.Options{Path: cfg.Output, Force: cfg.Force, SplitSize: cfg.SplitSize, SplitDuration: cfg.SplitDuration,
			MaxFiles: cfg.MaxFiles, FlushInterval: cfg.FlushInterval, Sync: cfg.Sync, Metadata: logMetadata(cfg), Idle: cfg.Idle}); err != nil {
			return nil, err
		}
		w.out, abandon = w.files, w.files.Abandon
	}
	r.out = w.out
	if cfg.OnOpen != nil {
		cfg.OnOpen()
	}

	ctx, endRecording := context.WithCancel(ctx) // ctx's end, Duration's or a write failure ends the recording
	rctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	stopAfter := context.AfterFunc(ctx, func() { w.ended.Store(time.Now().UnixNano()) }) // the drain's start
	stopEnd := func() { stopAfter() }
	src := &sources{cfg: &r.cfg, lanes: w.lanes, subs: subs}
	var closers []func()
	teardown := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	setupErr := func() error {
		sess := cfg.Session
		if sess == nil && (len(cfg.ZenohKeys) > 0 || cfg.All || cfg.ProbeInterval > 0 || cfg.Mount != nil) {
			if sess, err = zenoh.Open(cfg.Zenoh); err != nil {
				return zenoh.Named(err)
			}
			closers = append(closers, func() { sess.Close() })
		}
		r.sess = sess
		var node *iceoryx2.Node
		if len(cfg.IceoryxServices) > 0 || cfg.All {
			if node, err = iceoryx2.NewNode("vrlog-record"); err != nil {
				return fmt.Errorf("iceoryx2: %w", err)
			}
			closers = append(closers, func() { node.Close() })
		}
		keys := cfg.ZenohKeys
		if cfg.All {
			keys = []string{"**"}
		}
		for _, k := range keys {
			if err := src.subscribeZenoh(rctx, sess, k); err != nil {
				return err
			}
		}
		var pending []string // named services that do not exist yet
		for _, s := range named {
			switch err := src.subscribeIceoryx(rctx, node, s); {
			case errors.Is(err, iceoryx2.ErrServiceNotFound):
				pending = append(pending, s)
			case errors.Is(err, iceoryx2.ErrInvalid):
				return err // a bad name: the selection itself is wrong
			case err != nil:
				src.failed(rctx, node, s, err)
			}
		}
		if cfg.All || len(pending) > 0 || len(patterns) > 0 {
			src.wg.Add(1)
			go func() { defer src.wg.Done(); src.discover(rctx, node, pending, patterns) }()
		}
		if sess != nil {
			r.watch = &sessionWatch{}
			src.wg.Add(1)
			go func() { defer src.wg.Done(); r.watch.run(rctx, sess) }()
			if cfg.ProbeInterval > 0 {
				src.wg.Add(1)
				go func() { defer src.wg.Done(); src.probe(rctx, sess) }()
			}
		}
		return nil
	}()
	r.started = time.Now() // the transports are open: the recording starts
	w.start = r.started
	r.publish(false)
	if setupErr == nil && cfg.Mount != nil && r.sess != nil {
		m, err := cfg.Mount(r, r.sess) // its requests wait for the writer stage, started below
		if err != nil {
			setupErr = err
		} else {
			closers = append(closers, func() { m.Close() })
		}
	}
	if setupErr != nil {
		cancel()
		src.wg.Wait()
		teardown()
		abandon()
		stopEnd()
		endRecording()
		return nil, setupErr
	}
	src.wg.Add(1)
	go func() { defer src.wg.Done(); src.heartbeat(rctx, cfg.FlushInterval) }()
	src.feed(rctx)
	go func() { src.wg.Wait(); w.lanes.close() }()
	if cfg.OnStart != nil {
		cfg.OnStart()
	}
	if cfg.Duration > 0 {
		t := time.AfterFunc(cfg.Duration, endRecording)
		closers = append(closers, func() { t.Stop() })
	}
	r.runWriter(rctx, teardown, stopEnd, endRecording)
	return r, nil
}

// runWriter runs the writer stage until every source is done, then
// finishes the output and tears the transports down; the channel it
// returns (r.done) closes then.
func (r *Recorder) runWriter(ctx context.Context, teardown, stopEnd, end func()) <-chan struct{} {
	go func() {
		defer close(r.done)
		werr := r.w.run(ctx)
		for {
			select { // what came too late: the recording is over
			case c := <-r.w.cmds:
				c.reply <- reply{Outcome{State: StateStopping}, ErrClosed}
				continue
			default:
			}
			break
		}
		cerr := r.out.Close()
		r.publish(true)
		r.sum = r.summary()
		teardown()
		stopEnd()
		end()
		r.err = werr
		if r.err == nil {
			r.err = cerr
		}
	}()
	return r.done
}

// Wait waits for the recording to end and its output to be finished.
func (r *Recorder) Wait() (*Summary, error) {
	<-r.done
	return r.sum, r.err
}

// Dir is the directory the recorder writes into: the only one the
// control plane's file names reach.
func (r *Recorder) Dir() string { return filepath.Dir(r.cfg.Output) }

// Done is closed once the recording has ended and its output is finished.
func (r *Recorder) Done() <-chan struct{} { return r.done }

// Name is the host's name, for a status.
func hostname() string {
	h, _ := os.Hostname()
	return h
}

// logMetadata is the header metadata of the logs a recording writes: the
// tool, the caller's metadata, the note, the host.
func logMetadata(cfg Config) map[string]string {
	md := map[string]string{"tool": "vrlog record"}
	for k, v := range cfg.Metadata {
		md[k] = v
	}
	if cfg.Note != "" {
		md["note"] = cfg.Note
	}
	if h := hostname(); h != "" {
		md[hostclock.MetaHost] = h
	}
	return md
}

// newRecordingID is a random id for one recording's files.
func newRecordingID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
