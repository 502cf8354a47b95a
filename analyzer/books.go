package analyzer

import "github.com/vrlog/vrlog/sampler"

// books keeps the channels' timing books (sampler.Stream, frame-to-state
// lag pairing, the plot series) while a log is read. With a core to
// spare they are kept on a goroutine of their own, fed in batches, while
// the reading goroutine decodes and counts: the samples reach the books
// in arrival order across all channels, as they do inline, so the
// figures are those of one core.
type books struct {
	span  [2]int64 // the plot bins' capture range
	batch []booked // samples filled in place (next, push); batch[:n] are booked
	n     int
	todo  chan []booked // full batches to keep, in order; nil: kept inline
	free  chan []booked
	done  chan struct{}
}

// booked is one sample waiting for its channel's books (64 bytes).
type booked struct {
	ch   *channel
	s    sampler.Sample
	recv int64 // the record's receive stamp, for lag pairing (s may leave it out)
}

const (
	bookBatch   = 1024 // samples per batch: 64 KiB, in cache on either core
	bookBatches = 4    // batches in flight
)

// newBooks returns the books of one read; background keeps them on a
// goroutine of their own (finish waits for it).
func newBooks(span [2]int64, background bool) *books {
	b := &books{span: span, batch: make([]booked, 1)}
	if !background {
		return b
	}
	b.todo, b.free, b.done = make(chan []booked, bookBatches), make(chan []booked, bookBatches), make(chan struct{})
	for range bookBatches - 1 {
		b.free <- make([]booked, bookBatch)
	}
	b.batch = make([]booked, bookBatch)
	go func() {
		defer close(b.done)
		for batch := range b.todo {
			for i := range batch {
				b.keep(&batch[i])
			}
			b.free <- batch[:bookBatch]
		}
	}()
	return b
}

// next returns the place of ch's next sample, for the caller to fill
// and then book (push) or drop (not push).
func (b *books) next(ch *channel) *sampler.Sample {
	bk := &b.batch[b.n]
	bk.ch = ch
	return &bk.s
}

// push books the sample next returned, of a record received at recv.
func (b *books) push(recv int64) {
	b.batch[b.n].recv = recv
	if b.todo == nil {
		b.keep(&b.batch[0])
		return
	}
	if b.n++; b.n == bookBatch {
		b.todo <- b.batch
		b.batch, b.n = <-b.free, 0
	}
}

// finish books the samples still batched and waits until every one is
// kept: the streams are complete.
func (b *books) finish() {
	if b.todo == nil {
		return
	}
	if b.n > 0 {
		b.todo <- b.batch[:b.n]
	}
	close(b.todo)
	<-b.done
	b.todo = nil
}

func (b *books) keep(bk *booked) { b.keepSample(bk.ch, bk.s, bk.recv) }

// keepSample books sample s of ch, of a record received at recv.
func (b *books) keepSample(ch *channel, s sampler.Sample, recv int64) {
	ev := ch.stream.Add(s)
	if ch.lag != nil {
		ch.lag.Frame(sampler.Stamped{TNs: s.TNs, RecvNs: recv})
	}
	for _, l := range ch.feeds {
		l.State(sampler.Stamped{TNs: s.TNs, RecvNs: recv})
	}
	if ch.series != nil {
		ch.series.add(b.span, s, ev)
	}
}
