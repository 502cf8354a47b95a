package viewer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/vrlog/vrlog/foxws"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/replayer"
)

// Speed bounds of a playback request (the player's own are wider).
const (
	minSpeed = 0.01
	maxSpeed = 1000
)

// playback plays merged logs into a server on the log's clock, with the
// replay's engine (package player: deadlines, seek from the index), and is
// steered by the server's clients (foxws.Playback). A player runs the
// window once; a seek after the end starts another, paused where the seek
// asked.
type playback struct {
	ctx   context.Context
	logs  *replayer.Logs
	srv   *foxws.Server
	chans []player.Channel
	start int64 // the window's start, unix ns
	end   int64 // its end, unix ns

	mu      sync.Mutex // one request at a time; the fields below
	p       *player.Player
	speed   float64
	started bool        // playing was asked for (a subscription, a request)
	timer   *time.Timer // the start once subscriptions settled
	ended   bool        // p ran to the end of the window
	errs    chan error
	runs    sync.WaitGroup
}

// newPlayback plays logs into the server set in srv before the first
// client connects.
func newPlayback(ctx context.Context, logs *replayer.Logs, speed float64) *playback {
	var chans []player.Channel
	for _, c := range logs.Channels() {
		chans = append(chans, player.Channel{Name: c.Name, Schema: c.Schema, Frame: c.Frame})
	}
	start := logs.ToUnix(logs.Origin())
	return &playback{ctx: ctx, logs: logs, chans: chans, start: start, end: start + int64(logs.Span()),
		speed: speed, errs: make(chan error, 16)}
}

// Range implements foxws.Playback.
func (b *playback) Range() (uint64, uint64) { return uint64(max(b.start, 0)), uint64(max(b.end, 0)) }

// sink hands each record to the server at its log time; the receive
// stamp a record gets is that time (the receive clock's, moved to unix
// ns), which is what the recorder's heartbeats show.
func (b *playback) sink(r *player.Rec) error {
	lt := b.logs.ToUnix(r.Key)
	rec := logfmt.Record{Channel: uint16(r.Channel), RecvWallNs: lt, CaptureNs: r.CaptureNs, Seq: r.Seq, HasStamp: r.HasStamp,
		Header: r.Header, Payload: r.Payload}
	return b.srv.Write(&rec, lt)
}

// run starts a player paused at position at (from the window's start)
// and, if play, plays it; b.mu held.
func (b *playback) run(at time.Duration, play bool) error {
	p, err := player.New(b.logs.Source(), player.SinkFunc(b.sink), player.Options{Channels: b.chans, Rate: b.speed, Loops: 1,
		StartPaused: true, Origin: b.logs.Origin(), Length: b.logs.Span()})
	if err != nil {
		return err
	}
	b.p, b.ended = p, false
	b.runs.Add(2)
	go func() {
		defer b.runs.Done()
		_, err := p.Run(b.ctx)
		if err != nil && b.ctx.Err() == nil {
			select {
			case b.errs <- err:
			default:
			}
		}
		b.mu.Lock()
		ended := b.p == p && b.ctx.Err() == nil
		if ended {
			b.ended = true
		}
		b.mu.Unlock()
		if ended {
			b.srv.PlaybackChanged(b.State())
		}
	}()
	go func() { defer b.runs.Done(); b.clock(p) }()
	if at > 0 {
		if _, err := p.Do(b.ctx, player.Request{Op: player.OpSeek, At: at}); err != nil {
			return err
		}
	}
	if play {
		_, err = p.Do(b.ctx, player.Request{Op: player.OpResume})
	}
	return err
}

// clock sends time messages at 60 Hz while p plays: the log's clock also
// moves through stretches without records.
func (b *playback) clock(p *player.Player) {
	t := time.NewTicker(time.Second / 60)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-p.Done():
			return
		case <-t.C:
			if lt := p.LogTime(p.Now()); lt.Running {
				b.srv.Time(b.logs.ToUnix(lt.Key))
			}
		}
	}
}

// settle is how long playback waits, once a client subscribed, for no
// further subscription before it starts: a client subscribes to its
// panels' channels in one request or in several (the ws-protocol client
// sends one per channel).
const settle = time.Second

// Start plays from the window's start once the subscriptions settled,
// unless a client steers the playback by then: subscribing starts it. A
// client that cannot steer (foxglove.websocket.v1) subscribing after the
// end starts it again.
func (b *playback) Start(sdk bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started && !sdk && b.ended {
		b.started = false
	}
	if b.started {
		return
	}
	if b.timer != nil {
		b.timer.Reset(settle)
		return
	}
	b.timer = time.AfterFunc(settle, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.started || b.ctx.Err() != nil {
			return
		}
		b.started = true
		b.report(b.run(0, true))
		b.srv.PlaybackChanged(b.stateLocked())
	})
}

func (b *playback) report(err error) {
	if err != nil && b.ctx.Err() == nil && !errors.Is(err, player.ErrFinished) {
		select {
		case b.errs <- err:
		default:
		}
	}
}

// Control implements foxws.Playback: seek (the clients' queues emptied,
// the player paused, moved and left paused), then the speed, then play or
// pause.
func (b *playback) Control(r foxws.PlaybackRequest) foxws.PlaybackState {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.started = true
	if r.Speed > 0 {
		b.speed = min(max(float64(r.Speed), minSpeed), maxSpeed)
		if b.p != nil && !b.ended {
			_, err := b.p.Do(b.ctx, player.Request{Op: player.OpRate, Rate: b.speed})
			b.report(err)
		}
	}
	if r.Seek {
		at := time.Duration(min(max(int64(r.SeekTime)-b.start, 0), b.end-b.start))
		if b.p == nil || b.ended {
			b.srv.Flush()
			b.report(b.run(at, false))
		} else {
			_, err := b.p.Do(b.ctx, player.Request{Op: player.OpPause})
			b.report(err)
			b.srv.Flush() // nothing is published while paused: what is queued is from before the seek
			_, err = b.p.Do(b.ctx, player.Request{Op: player.OpSeek, At: at})
			b.report(err)
		}
	}
	switch {
	case b.ended:
	case r.Command == foxws.Play && b.p == nil:
		b.report(b.run(0, true))
	case r.Command == foxws.Play:
		_, err := b.p.Do(b.ctx, player.Request{Op: player.OpResume})
		b.report(err)
	case b.p != nil:
		_, err := b.p.Do(b.ctx, player.Request{Op: player.OpPause})
		b.report(err)
	}
	st := b.stateLocked()
	st.DidSeek = r.Seek
	return st
}

// State implements foxws.Playback.
func (b *playback) State() foxws.PlaybackState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stateLocked()
}

func (b *playback) stateLocked() foxws.PlaybackState {
	st := foxws.PlaybackState{Status: foxws.StatusPaused, CurrentTime: uint64(max(b.start, 0)), Speed: float32(b.speed)}
	switch {
	case b.ended:
		st.Status, st.CurrentTime = foxws.StatusEnded, uint64(max(b.end, 0))
	case b.p != nil:
		lt := b.p.LogTime(b.p.Now())
		st.CurrentTime = uint64(max(b.logs.ToUnix(lt.Key), 0))
		if !b.p.Status().Paused {
			st.Status = foxws.StatusPlaying
		}
	}
	return st
}

// wait waits for the players to stop (ctx ended).
func (b *playback) wait() {
	b.mu.Lock()
	if b.timer != nil {
		b.timer.Stop()
	}
	b.mu.Unlock()
	b.runs.Wait()
}
