package recorder

// framePoolSize is how many spare frame buffers a subscription keeps:
// enough to cover the frames between the transport's queue and the log
// writer's chunks in flight, few enough that 1080p frames (6 MB) do not
// pin much memory.
const framePoolSize = 8

// bufPool recycles the buffers iceoryx2 samples are copied into, so a
// recording of camera frames does not allocate (and garbage-collect) a
// fresh multi-megabyte buffer per frame. get runs on the receiving
// goroutine, put on the log writer's once a frame is on disk.
type bufPool struct{ free chan []byte }

func newBufPool(n int) *bufPool { return &bufPool{free: make(chan []byte, n)} }

// get returns a buffer of length n, recycled when a spare one is large
// enough (frames of one service are usually all the same size).
func (p *bufPool) get(n int) []byte {
	select {
	case b := <-p.free:
		if cap(b) >= n {
			return b[:n]
		}
	default:
	}
	return make([]byte, n)
}

// put offers b for reuse; it is dropped when the pool is full.
func (p *bufPool) put(b []byte) {
	select {
	case p.free <- b:
	default:
	}
}
