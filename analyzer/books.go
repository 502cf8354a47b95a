package analyzer

import "github.com/vrlog/vrlog/sampler"

// books keeps the channels' timing books (sampler.Stream and the plot
// series) while a log is read. With a core to spare they are kept on a
// goroutine of their own, fed in batches, while the reading goroutine
// counts, finds the epoch and pairs frames with states (what depends on
// the order across channels): each channel's samples still reach its
// stream in arrival order, so the figures are those of one core.
type books struct {
	span  [2]int64 // the plot bins' capture range
	batch []booked // samples filled in place (next, push); batch[:n] are booked
	n     int
	todo  chan []booked // full batches to keep, in order; nil: kept inline
	free  chan []booked
	done  chan struct{}
}

// booked is one sample waiting for its channel's books.
type booked struct {
	ch *channel
	s  sampler.Sample
}

const (
	bookBatch   = 1024 // samples per batch: 56 KiB, in cache on either core
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
				b.keep(batch[i].ch, batch[i].s)
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

// push books the sample next returned.
func (b *books) push() {
	if b.todo == nil {
		b.keep(b.batch[0].ch, b.batch[0].s)
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

func (b *books) keep(ch *channel, s sampler.Sample) {
	ev := ch.stream.Add(s)
	if ch.series != nil {
		ch.series.add(b.span, s, ev)
	}
}
