package recorder

import (
	"context"
	"errors"
	"fmt"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder/files"
	"github.com/vrlog/vrlog/recorder/snapshot"
	"github.com/vrlog/vrlog/transport/clock"
)

// Control: a running recorder is driven through one small API (Start,
// Stop, Pause, Resume, Split, Snapshot, Status on Recorder) that the CLI,
// the zenoh control plane (recctl) and Go callers share. Each request
// reaches the writer stage as a command and acts between two records, so
// requests racing from several controllers are done one after the other:
// the state is always one of them, and each is told its outcome. A
// request that does not apply in the state (stop while idle) or in the
// mode (split in snapshot mode) is refused and changes nothing.

// State is what a recorder is doing.
type State string

const (
	StateIdle      State = "idle"      // armed: transports open, nothing written
	StateRecording State = "recording" // writing (in snapshot mode: keeping the last moments)
	StatePaused    State = "paused"    // the file is open, nothing written until resume
	StateStopping  State = "stopping"  // the recorder is finishing and going away
)

// Errors of control requests. Each leaves the recorder as it was.
var (
	// ErrState: the request does not apply in the recorder's state.
	ErrState = files.ErrState
	// ErrMode: the request does not apply in the recorder's mode (start,
	// stop, pause, resume, split in snapshot mode; snapshot in file mode).
	ErrMode = errors.New("recorder: not in this mode")
	// ErrClosed: the recorder is shutting down.
	ErrClosed = errors.New("recorder: the recording is over")
)

// PauseChannel is the internal channel of a recording's pauses
// (codec.SchemaPause): one record when the recording goes on, so that a
// paused recording reads as one, with the pause not captured.
const PauseChannel = "vrlog/pause"

// Outcome is what a control request did.
type Outcome struct {
	State State // after the request
	// File is the file now written (start), or written next (split).
	File string
	// Finished is the file the request finished (stop, split); its Path
	// is empty when none was open (nothing written since a split).
	Finished *files.Finished
	// Snapshot is the snapshot a snapshot request took, once written.
	Snapshot *snapshot.Result
}

type verb uint8

const (
	verbStart verb = iota
	verbStop
	verbPause
	verbResume
	verbSplit
	verbSnapshot
)

// command is a control request on its way to the writer stage.
type command struct {
	verb       verb
	file, note string
	trigger    snapshot.Trigger
	reply      chan reply // buffered: the writer never waits for the caller
}

type reply struct {
	o   Outcome
	err error
}

// pause is an open pause: when it started, and the books' counts of
// withheld records then.
type pause struct {
	fromWall, fromMono int64
	mark               map[string]uint64
}

// send hands c to the writer and waits for its outcome, ctx's end, or the
// recorder's.
func (r *Recorder) send(ctx context.Context, c command) (Outcome, error) {
	c.reply = make(chan reply, 1)
	select {
	case r.w.cmds <- c:
	case <-r.done:
		return Outcome{State: StateStopping}, ErrClosed
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
	select {
	case rep := <-c.reply:
		return rep.o, rep.err
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

// Start starts a recording into file, a name in the output's directory
// ({time} and {n} filled in; "" for the default: the -o file, then
// BASE-N.vrlog), with note as its files' note if given.
func (r *Recorder) Start(ctx context.Context, file, note string) (Outcome, error) {
	return r.send(ctx, command{verb: verbStart, file: file, note: note})
}

// Stop finishes the recording's file and stays up, idle; the outcome
// names the file finished, its size and records.
func (r *Recorder) Stop(ctx context.Context) (Outcome, error) {
	return r.send(ctx, command{verb: verbStop})
}

// Pause stops writing, the file left open: what is received meanwhile is
// counted per channel and stored in the file at Resume (PauseChannel).
func (r *Recorder) Pause(ctx context.Context) (Outcome, error) {
	return r.send(ctx, command{verb: verbPause})
}

// Resume ends a pause.
func (r *Recorder) Resume(ctx context.Context) (Outcome, error) {
	return r.send(ctx, command{verb: verbResume})
}

// Split finishes the current file and goes on in the next one: no record
// is left out or written twice across the seam.
func (r *Recorder) Split(ctx context.Context) (Outcome, error) {
	return r.send(ctx, command{verb: verbSplit})
}

// Snapshot takes a snapshot (snapshot mode) at t's stamps (TriggerNow)
// and waits until it is written; slug names its file.
func (r *Recorder) Snapshot(ctx context.Context, t logfmt.SnapshotTrigger, slug string) (Outcome, error) {
	return r.send(ctx, command{verb: verbSnapshot, trigger: snapshot.Trigger{SnapshotTrigger: t, Slug: slug}})
}

// do carries out a command on the writer goroutine. A request whose
// outcome comes later (a file finished, a snapshot written) is answered
// from a goroutine of its own, so the records go on meanwhile.
func (w *writer) do(c command) {
	answer := func(o Outcome, err error) {
		o.State = w.state()
		c.reply <- reply{o, err}
		w.status()
	}
	switch {
	case w.failed != nil:
		answer(Outcome{}, fmt.Errorf("%w: %v", ErrClosed, w.failed))
		return
	case w.ended.Load() != 0:
		answer(Outcome{}, ErrClosed)
		return
	}
	if c.verb == verbSnapshot {
		if w.snap == nil {
			answer(Outcome{}, fmt.Errorf("%w: snapshot needs a recorder in snapshot mode", ErrMode))
			return
		}
		t := c.trigger
		t.Done = func(res snapshot.Result) {
			c.reply <- reply{Outcome{State: StateRecording, Snapshot: &res}, res.Err}
		}
		w.snap.Trigger(t)
		return
	}
	if w.files == nil {
		answer(Outcome{}, fmt.Errorf("%w: a snapshot recorder records from its start and writes only snapshots", ErrMode))
		return
	}
	switch c.verb {
	case verbStart:
		path, err := w.files.Start(c.file, c.note)
		answer(Outcome{File: path}, err)
	case verbStop:
		if w.pause != nil {
			w.endPause()
		}
		w.writeSmall() // what was received before the stop is in the file
		done, err := w.files.Stop()
		if err != nil {
			answer(Outcome{}, err)
			return
		}
		state := w.state()
		go func() { f := <-done; c.reply <- reply{Outcome{State: state, Finished: &f}, f.Err} }()
		w.status()
	case verbPause:
		if on, _ := w.files.Recording(); !on || w.pause != nil {
			answer(Outcome{}, fmt.Errorf("%w: %s", ErrState, map[State]string{StatePaused: "paused already", StateIdle: "idle: no recording to pause"}[w.state()]))
			return
		}
		w.writeSmall()
		w.pause = &pause{fromWall: clock.WallNow() + w.books.clockOffset, fromMono: clock.MonoNow(), mark: w.books.unwrittenCounts()}
		answer(Outcome{}, nil)
	case verbResume:
		if w.pause == nil {
			answer(Outcome{}, fmt.Errorf("%w: not paused: %s", ErrState, w.state()))
			return
		}
		w.endPause()
		_, cur := w.files.Recording()
		answer(Outcome{File: cur}, nil)
	case verbSplit:
		if w.pause != nil {
			answer(Outcome{}, fmt.Errorf("%w: paused: resume first", ErrState))
			return
		}
		w.writeSmall() // the seam: what was received before it is in the finished file
		next, done, err := w.files.Split()
		if err != nil {
			answer(Outcome{}, err)
			return
		}
		state := w.state()
		go func() { f := <-done; c.reply <- reply{Outcome{State: state, File: next, Finished: &f}, f.Err} }()
		w.status()
	}
}

// endPause writes the open pause's record and goes on writing.
func (w *writer) endPause() {
	p := w.pause
	w.pause = nil
	now := clock.MonoNow()
	w.lastPause = [2]int64{p.fromMono, now}
	rec := codec.Pause{FromWallNs: p.fromWall, FromMonoNs: p.fromMono, ToWallNs: clock.WallNow() + w.books.clockOffset, ToMonoNs: now,
		Unwritten: map[string]uint64{}}
	for name, n := range w.books.unwrittenCounts() {
		if d := n - p.mark[name]; d > 0 {
			rec.Unwritten[name] = d
		}
	}
	s := sample{name: PauseChannel, topic: PauseChannel, transport: logfmt.TransportInternal, schema: codec.SchemaPause,
		rec: logfmt.Record{RecvWallNs: rec.ToWallNs, RecvMonoNs: now, Payload: codec.AppendPause(nil, &rec)}}
	w.apply(w.books.take(&s, written))
}

// state is the recorder's state, for the writer.
func (w *writer) state() State {
	switch {
	case w.failed != nil || w.ended.Load() != 0:
		return StateStopping
	case w.pause != nil:
		return StatePaused
	case w.files != nil:
		if on, _ := w.files.Recording(); !on {
			return StateIdle
		}
	}
	return StateRecording
}

// unwrittenCounts is every channel's withheld records so far.
func (b *books) unwrittenCounts() map[string]uint64 {
	m := make(map[string]uint64, len(b.order))
	for _, ch := range b.order {
		if ch.unwritten > 0 {
			m[ch.def.Name] = ch.unwritten
		}
	}
	return m
}
