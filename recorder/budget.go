package recorder

import "sync"

// budget bounds the bytes a subscription has on their way to the log
// writer: the receiving goroutine takes room before it hands a batch on,
// the writer gives it back once a record is written. A batch larger than
// the whole budget is let through when nothing else is held, so one huge
// sample cannot stall a subscription forever.
type budget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	free  int
	total int
}

func newBudget(total int) *budget {
	b := &budget{free: total, total: total}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// take waits for n bytes of room (the writer always gives some back: it
// writes, or after a failure hands memory back, until receivers are done).
func (b *budget) take(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.free < n && b.free < b.total {
		b.cond.Wait()
	}
	b.free -= n
}

// put gives n bytes back.
func (b *budget) put(n int) {
	b.mu.Lock()
	b.free += n
	b.mu.Unlock()
	b.cond.Broadcast()
}
