package recorder

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder/files"
	"github.com/vrlog/vrlog/recorder/output"
	"github.com/vrlog/vrlog/recorder/snapshot"
	"github.com/vrlog/vrlog/transport/clock"
)

// writer is the pipeline's ordering stage and its one goroutine past the
// lanes: it takes the sources' batches from both lanes (small records
// first, see lanes), decides what becomes of each sample (written,
// withheld while paused or idle, or cut off at the end), has the books
// account for it and hands the output what they decided, in order. It is
// the only caller of the books and the output; control requests
// (control.go) reach it as commands and act between two records. Once
// the recording is over it writes what the sources had received, for at
// most DrainTimeout (cutOff).
type writer struct {
	cfg   *Config
	lanes *lanes
	books *books
	out   output.Output
	files *files.Output    // out, in file mode
	snap  *snapshot.Output // out, in snapshot mode
	cmds  chan command
	ended *atomic.Int64 // when the recording ended (unix ns; 0: not yet)
	start time.Time
	pause *pause // the open pause, nil when not paused
	// lastPause is the latest pause's span of receive time: a sample
	// received in it, still in the lanes at the resume, is withheld too
	lastPause [2]int64

	pending  []sample       // small records waiting, in arrival order
	since    time.Time      // when the first of them arrived
	names    map[string]int // pending records per channel
	wrote    bool           // lastMono and lastBulk are set
	lastMono int64
	lastBulk bool
	failed   error // the first write error: the rest is handed back
	cut      bool  // the drain was cut off: the rest is dropped and counted
	cancel   context.CancelFunc
	status   func() // publishes the status (Recorder.publish)
}

// run serves the lanes and the commands until every source is done.
func (w *writer) run(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	silence := newAlarm() // a live max-outage check's deadline (books.deadline)
	defer silence.stop()
	w.names = map[string]int{}
	small, bulk := w.lanes.small, w.lanes.bulk
	for small != nil || bulk != nil {
		if len(w.pending) > 0 && len(bulk) == 0 {
			w.writeSmall() // no backlog: small records go at once
		}
		silence.set(w.books.deadline())
		select {
		case <-silence.c:
			if len(small) == 0 && len(bulk) == 0 && len(w.pending) == 0 { // every record received until now is taken
				w.fire(w.books.silentAt(clock.MonoNow(), clock.WallNow()))
			}
		case c := <-w.cmds:
			w.do(c)
		case b, ok := <-small:
			if !ok {
				small = nil
				continue
			}
			w.lanes.took(b)
			w.queueSmall(b)
		case b, ok := <-bulk:
			if !ok {
				bulk = nil
				continue
			}
			w.lanes.took(b)
			w.bulk(small, b)
		case <-tick.C:
			w.fire(w.books.tick())
			w.check(w.out.Tick(w.books.undecided()))
			w.status()
		}
	}
	w.writeSmall()
	w.apply(w.books.close())
	if w.pause != nil {
		w.endPause() // the pause ends with the recording: said in the file
	}
	return w.failed
}

// bulk writes a batch of the bulk lane, each record after the small
// records of its channel waiting and those that waited long enough.
func (w *writer) bulk(small <-chan batch, b batch) {
	if b.end != nil {
		w.apply(w.books.end(b.end.sub, b.end.drains))
		return
	}
	for i := range b.samples {
		w.waitRoom(small)
		w.takeSmall(small)
		if len(w.pending) > 0 && (w.names[b.samples[i].name] > 0 || time.Since(w.since) >= w.lanes.wait) {
			w.writeSmall() // the channel's earlier records, or states that waited long enough
		}
		w.put(&b.samples[i], true)
	}
}

// queueSmall adds a batch of the small lane to the records waiting; its
// events are accounted at once (a failure has no record; a stream's end
// in the small lane follows its channel's records, all small).
func (w *writer) queueSmall(b batch) {
	switch {
	case b.failed != nil:
		w.apply(w.books.fail(b.failed))
		return
	case b.end != nil:
		w.writeSmall()
		w.apply(w.books.end(b.end.sub, b.end.drains))
		return
	}
	if len(w.pending) == 0 {
		w.since = time.Now()
	}
	for i := range b.samples {
		w.names[b.samples[i].name]++
	}
	w.pending = append(w.pending, b.samples...)
}

// takeSmall queues what waits in the small lane now, without blocking.
func (w *writer) takeSmall(small <-chan batch) {
	for {
		select {
		case b, ok := <-small:
			if !ok {
				return
			}
			w.lanes.took(b)
			w.queueSmall(b)
		default:
			return
		}
	}
}

// waitRoom waits while a bulk record would wait inside the output for
// earlier chunks' compression (seconds, at a slow zstd level), writing the
// small records that arrive meanwhile and sealing them ahead: they never
// wait for the frames.
func (w *writer) waitRoom(small <-chan batch) {
	for w.failed == nil && !w.cutOff() && w.out.Busy() {
		select {
		case b, ok := <-small:
			if ok {
				w.lanes.took(b)
				w.queueSmall(b)
			}
		case <-time.After(time.Millisecond):
		}
		if len(w.pending) > 0 && time.Since(w.since) >= w.lanes.wait {
			w.writeSmall()
			w.check(w.out.Seal(true))
		}
	}
}

// writeSmall writes the small records waiting.
func (w *writer) writeSmall() {
	for i := range w.pending {
		w.put(&w.pending[i], false)
	}
	clear(w.pending) // their payloads are not kept alive by the slice
	w.pending = w.pending[:0]
	clear(w.names)
}

// put writes one sample of the bulk or the small lane: sealing the open
// chunk first where the lanes switch while bulk records wait or with a
// jump in time (lanes); after a write failure it only hands the sample's
// memory back, so sources can stop.
func (w *writer) put(s *sample, bulk bool) {
	if w.failed != nil {
		if s.release != nil {
			s.release()
		}
		return
	}
	how := w.fate(s.rec.RecvMonoNs)
	if how == written {
		behind := len(w.lanes.bulk) > 0
		if w.wrote && bulk != w.lastBulk && (behind || time.Duration(abs(s.rec.RecvMonoNs-w.lastMono)) > sealJump) {
			if !w.check(w.out.Seal(!w.lastBulk)) { // small records sealed ahead of the frames' chunks
				if s.release != nil {
					s.release()
				}
				return
			}
		}
		w.wrote, w.lastBulk, w.lastMono = true, bulk, s.rec.RecvMonoNs
	}
	w.apply(w.books.take(s, how))
}

// fate is what becomes of a sample received at recv: a pause withholds
// what was received during it (by receive stamp, so that a pause is one
// span of receive time, which analyze reads the log around), an idle
// recorder everything.
func (w *writer) fate(recv int64) fate {
	switch {
	case w.cutOff():
		return cutOff
	case w.pause != nil && recv >= w.pause.fromMono:
		return withheld
	case w.lastPause[1] > 0 && recv >= w.lastPause[0] && recv <= w.lastPause[1]:
		return withheld
	case w.idle():
		return withheld
	}
	return written
}

// idle reports whether the file output is stopped (or never started).
func (w *writer) idle() bool {
	if w.files == nil {
		return false
	}
	on, _ := w.files.Recording()
	return !on
}

// recording reports whether the output takes records now: not while
// paused or idle.
func (w *writer) recording() bool { return w.pause == nil && !w.idle() }

// apply hands the output what the books decided, in order; while the
// recording is paused or idle, only channel definitions reach it.
func (w *writer) apply(a *accounted) {
	if a.define != nil {
		w.check(w.out.Define(a.define))
		if w.cfg.View != nil {
			w.cfg.View.Channel(a.define)
		}
	}
	if a.seen != nil && w.cfg.View != nil {
		w.cfg.View.Record(a.seen) // before the output takes the record's memory
	}
	if a.problem != nil && w.cfg.OnProblem != nil {
		w.cfg.OnProblem(*a.problem)
	}
	quiet := !w.recording()
	if !quiet {
		for _, d := range a.before {
			w.out.Drops(d.ch, d.n, d.at)
		}
	}
	switch e := a.entry; {
	case e.Record != nil && w.failed == nil:
		w.check(w.out.Write(e))
	case e.Release != nil:
		e.Release()
	}
	if !quiet {
		for _, d := range a.after {
			w.out.Drops(d.ch, d.n, d.at)
		}
	}
	w.fire(a.fired)
}

// fire takes a snapshot for each live check that failed, at the receive
// stamps of the sample that showed it (or when a silence became one:
// livecheck.Fired.RecvMonoNs).
func (w *writer) fire(fired []firing) {
	if w.snap == nil {
		return
	}
	for _, f := range fired {
		mono, wall := f.mono, f.wall
		if f.f.RecvMonoNs != 0 {
			mono, wall = f.f.RecvMonoNs, f.f.RecvWallNs
		}
		w.snap.Trigger(snapshot.Trigger{SnapshotTrigger: logfmt.SnapshotTrigger{Cause: f.f.Message, WallNs: wall, MonoNs: mono,
			CaptureNs: f.f.CaptureNs}, Slug: f.f.Check + "_" + snapshot.Slug(f.f.Channel)})
	}
}

// check books an output error as the recording's failure (the sources
// are stopped; what they still send is handed back); it reports whether
// there was none.
func (w *writer) check(err error) bool {
	if err == nil {
		return true
	}
	if w.failed == nil {
		w.failed = err
		w.cancel()
	}
	return false
}

// cutOff reports whether the drain is over: the recording ended more than
// DrainTimeout ago (never with a negative DrainTimeout). From then on,
// what the sources hand over is dropped and counted, so that the
// recorder stops in bounded time and its accounting stays exact.
func (w *writer) cutOff() bool {
	if w.cut || w.cfg.DrainTimeout < 0 {
		return w.cut
	}
	end := w.ended.Load()
	if end != 0 && time.Since(time.Unix(0, end)) >= w.cfg.DrainTimeout {
		w.cut = true
	}
	return w.cut
}

// alarm is a timer set to a monotonic deadline, for the select of the
// writer's loop; c is nil while no deadline is set.
type alarm struct {
	t  *time.Timer
	c  <-chan time.Time
	at int64
}

func newAlarm() *alarm {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &alarm{t: t}
}

// set arms the alarm for mono (ok false: disarms it); the same deadline
// leaves it as it is.
func (a *alarm) set(mono int64, ok bool) {
	switch {
	case !ok && a.c == nil:
	case !ok:
		a.t.Stop()
		a.c, a.at = nil, 0
	case mono != a.at || a.c == nil:
		a.t.Reset(time.Duration(max(mono-clock.MonoNow(), 0)))
		a.c, a.at = a.t.C, mono
	}
}

func (a *alarm) stop() { a.t.Stop() }

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
