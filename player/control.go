package player

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Control requests (a replay's control channel) go through the publishing
// goroutine like the keys do, but each is answered: Do returns the status
// once the request took effect.

var (
	// ErrFinished: the replay has ended; nothing is left to control.
	ErrFinished = errors.New("player: the replay has finished")
	// ErrBadRequest: a control request the player cannot carry out.
	ErrBadRequest = errors.New("player: bad request")
)

// Op is a control operation.
type Op int

const (
	OpStatus Op = iota // nothing: the status now
	OpPause
	OpResume
	OpStep // publish the next N records now (pausing first when playing)
	OpSeek // move the position to At; the next record is the first at or after it
	OpRate // change the rate to Rate
	OpStop // end the replay after the current record
)

// Request is one control request.
type Request struct {
	Op   Op
	N    int           // OpStep: records, >= 1
	At   time.Duration // OpSeek: log time from the window's start
	Rate float64       // OpRate: factor > 0
}

// check validates r against what this player can do.
func (p *Player) check(r Request) error {
	switch r.Op {
	case OpStatus, OpPause, OpResume, OpStop:
	case OpStep:
		if r.N < 1 {
			return fmt.Errorf("%w: step %d: want N >= 1", ErrBadRequest, r.N)
		}
	case OpSeek:
		if _, ok := p.src.(Seeker); !ok {
			return fmt.Errorf("%w: this source cannot seek", ErrBadRequest)
		}
		if r.At < 0 || (p.o.Length > 0 && r.At > p.o.Length) {
			return fmt.Errorf("%w: seek %v: outside the window [0, %v]", ErrBadRequest, r.At, p.o.Length)
		}
	case OpRate:
		if p.o.RateMax {
			return fmt.Errorf("%w: the replay runs at rate max, without a rate to change", ErrBadRequest)
		}
		if !(r.Rate > 0) || math.IsInf(r.Rate, 0) || r.Rate > 1e9 {
			return fmt.Errorf("%w: rate %v: want a factor > 0", ErrBadRequest, r.Rate)
		}
	default:
		return fmt.Errorf("%w: unknown operation %d", ErrBadRequest, r.Op)
	}
	return nil
}

// Do carries out r and returns the status once it took effect: a step
// after its N records were published (or the replay ended first), the
// others once applied. Requests made before Run starts take effect when it
// does. Do returns ErrFinished once Run has returned, and ctx's error when
// ctx ends first (the request may still take effect).
func (p *Player) Do(ctx context.Context, r Request) (Status, error) {
	if err := p.check(r); err != nil {
		return p.Status(), err
	}
	if r.Op == OpStatus {
		return p.Status(), nil
	}
	c := command{done: make(chan Status, 1), n: r.N, at: int64(r.At), rate: r.Rate, pause: true}
	c.kind = map[Op]cmdKind{OpPause: cmdPause, OpResume: cmdResume, OpStep: cmdStep, OpSeek: cmdSeek, OpRate: cmdRate, OpStop: cmdStop}[r.Op]
	select {
	case p.ctl <- c:
	case <-p.end:
		return p.Status(), ErrFinished
	case <-ctx.Done():
		return p.Status(), ctx.Err()
	}
	select {
	case st := <-c.done:
		return st, nil
	case <-p.end:
		select {
		case st := <-c.done:
			return st, nil
		default:
			return p.Status(), ErrFinished
		}
	case <-ctx.Done():
		return p.Status(), ctx.Err()
	}
}

// Done is closed when Run has returned.
func (p *Player) Done() <-chan struct{} { return p.end }

// step queues c.n records to step; a control request pauses a playing
// replay first, a key while playing does nothing.
func (r *run) step(c command) bool {
	if !r.paused {
		if !c.pause {
			return false
		}
		r.paused = true
		r.setStatus(func(s *Status) { s.Paused = true })
	}
	r.stepsLeft += max(c.n, 1)
	if c.done != nil {
		r.stepWaiters = append(r.stepWaiters, c.done)
	}
	return true
}

// stepped books one stepped record of channel ch; the last of a step
// answers its Do.
func (r *run) stepped(ch int) {
	r.stats[ch].Steps++
	r.stepsLeft = max(r.stepsLeft-1, 0)
	r.setStatus(func(s *Status) { s.Steps++ })
	if r.stepsLeft == 0 {
		r.answerSteps()
	}
}

func (r *run) answerSteps() {
	st := r.Status()
	for _, w := range r.stepWaiters {
		w <- st
	}
	r.stepWaiters = r.stepWaiters[:0]
}

// finish marks the end of Run: the status says so, pending steps are
// answered, and Do returns ErrFinished from now on.
func (r *run) finish() {
	r.stepsLeft = 0
	r.setStatus(func(s *Status) { s.Finished, s.Waiting = true, false })
	r.answerSteps()
	r.finished.Store(true)
	close(r.end)
}

// waitReady waits for Options.Ready, applying commands meanwhile; Stop
// cancels the wait.
func (r *run) waitReady() error {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.o.Ready(ctx) }()
	for {
		select {
		case err := <-done:
			r.setStatus(func(s *Status) { s.Starting = false })
			if r.stopped || r.ctx.Err() != nil {
				return nil
			}
			return err
		case c := <-r.ctl:
			r.apply(c)
			if r.stopped {
				cancel()
			}
		}
	}
}
