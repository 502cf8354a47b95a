//go:build linux

package logfmt

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// directAlign is the alignment of O_DIRECT offsets, lengths and memory:
// the largest logical block size in use (4096 covers 512 too).
const directAlign = 4096

// directBufSize is the size of a direct file's aligned buffers, and
// directBufs how many it has: one is filled while the others are written
// (up to three writes in flight: this virtio disk writes 30–40 % faster
// with a queue than one write at a time).
const (
	directBufSize = 4 << 20
	directBufs    = 4
)

// tailEvery is how often a flush writes the incomplete last block (through
// the page cache) when nothing forces it: what makes a live recording
// readable to its end without a small write per chunk.
const tailEvery = 100 * time.Millisecond

// directFile writes a file through a second descriptor opened with
// O_DIRECT: data goes from aligned, reused buffers to the disk, with no
// copy into the page cache. Recording hundreds of MB/s through the page
// cache costs a kernel copy into page-cache pages that are fresh memory
// (on a VM with free page reporting each is a hypervisor fault: measured
// 5–10× the CPU of a direct write) and fills RAM with pages nobody reads
// back soon. A full buffer is written by a background goroutine while the
// next one fills. Only whole aligned blocks are written directly; the
// incomplete last block is kept in the buffer and, at a flush, also
// written through the ordinary descriptor (the next direct write of that
// block replaces it), so the file always ends where the data ends.
type directFile struct {
	f        *os.File // the file as created: tails, sync, close
	dfd      int      // the O_DIRECT descriptor
	mem      []byte   // mmap'ed (page aligned): directBufs buffers
	cur      []byte   // the buffer being filled
	n        int      // bytes in cur
	base     int64    // file offset of cur[0] (aligned)
	tailAt   time.Time
	tailDone int // bytes of cur already written as a tail

	free    chan []byte   // buffers not being written
	writes  chan directIO // to the writing goroutine
	stopped chan struct{} // the writing goroutine ended
	mu      sync.Mutex
	err     error // the first failed write
	errAt   int64 // where the file stops being complete: the lowest failed offset
}

// directIO is one aligned write.
type directIO struct {
	buf []byte
	off int64
}

// openFlags opens a path with flags, and pwriteFd writes at an offset; the
// tests replace them to play a filesystem that refuses O_DIRECT or fills up.
var (
	openFlags = func(path string, flags int) (int, error) { return unix.Open(path, flags, 0) }
	pwriteFd  = unix.Pwrite
)

// openDirect returns a direct writer for f (just created at path, empty),
// or nil when the filesystem refuses O_DIRECT (older tmpfs, some FUSE and
// network filesystems).
func openDirect(f *os.File, path string) *directFile {
	dfd, err := openFlags(path, unix.O_WRONLY|unix.O_DIRECT|unix.O_CLOEXEC)
	if err != nil {
		return nil
	}
	mem, err := unix.Mmap(-1, 0, directBufs*directBufSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		unix.Close(dfd)
		return nil
	}
	// Some filesystems accept the flag at open and refuse the write: try
	// one block (zeros at offset 0, truncated away again).
	if _, err := unix.Pwrite(dfd, mem[:directAlign], 0); err != nil || f.Truncate(0) != nil {
		unix.Close(dfd)
		unix.Munmap(mem)
		return nil
	}
	d := &directFile{f: f, dfd: dfd, mem: mem, free: make(chan []byte, directBufs),
		writes: make(chan directIO, directBufs), stopped: make(chan struct{})}
	for i := 1; i < directBufs; i++ {
		d.free <- mem[i*directBufSize : (i+1)*directBufSize]
	}
	d.cur = mem[:directBufSize]
	go d.writeLoop()
	return d
}

// writeLoop writes full buffers in order of submission, up to
// directBufs-1 at a time, and hands each back once written.
func (d *directFile) writeLoop() {
	defer close(d.stopped)
	var wg sync.WaitGroup
	slots := make(chan struct{}, directBufs-1)
	for io := range d.writes {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if at, err := d.pwrite(io.buf, io.off); err != nil {
				d.mu.Lock()
				if d.err == nil || at < d.errAt {
					d.err, d.errAt = err, at
				}
				d.mu.Unlock()
			}
			d.free <- io.buf[:directBufSize]
			<-slots
		}()
	}
	wg.Wait()
}

// pwrite writes b at off; on failure it says where the written bytes end.
func (d *directFile) pwrite(b []byte, off int64) (int64, error) {
	for len(b) > 0 {
		w, err := pwriteFd(d.dfd, b, off)
		if err != nil {
			return off, fmt.Errorf("direct write at %d: %w", off, err)
		}
		if w <= 0 || w%directAlign != 0 {
			return off + int64(max(w, 0)), fmt.Errorf("direct write at %d: wrote %d of %d bytes", off, w, len(b))
		}
		b, off = b[w:], off+int64(w)
	}
	return off, nil
}

func (d *directFile) failed() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Write copies p into the buffers, handing each full one to the writer.
func (d *directFile) Write(p []byte) (int, error) {
	if err := d.failed(); err != nil {
		return 0, d.wait()
	}
	total := len(p)
	for len(p) > 0 {
		c := copy(d.cur[d.n:], p)
		d.n += c
		p = p[c:]
		if d.n == len(d.cur) {
			d.submit(d.n)
		}
	}
	return total, nil
}

// submit hands cur[:n] (n aligned) to the writer and carries the rest of
// cur over into the next buffer.
func (d *directFile) submit(n int) {
	next := <-d.free
	rest := copy(next, d.cur[n:d.n])
	d.writes <- directIO{buf: d.cur[:n], off: d.base}
	d.cur, d.base, d.n = next, d.base+int64(n), rest
	d.tailDone = max(d.tailDone-n, 0)
}

// wait blocks until every submitted buffer is written. After a failed
// write it cuts the file where the failure left it: writes in flight after
// the failed one may have succeeded, and a hole before them would read as
// damage in the middle of the file; cut, the file is a prefix of the log
// with a torn tail, as a full disk leaves a file written through the page
// cache.
func (d *directFile) wait() error {
	bufs := make([][]byte, 0, directBufs-1)
	for range directBufs - 1 {
		bufs = append(bufs, <-d.free)
	}
	for _, b := range bufs {
		d.free <- b
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil && d.errAt >= 0 {
		if terr := d.f.Truncate(d.errAt); terr != nil {
			d.err = fmt.Errorf("%w (and cutting the file at %d: %v)", d.err, d.errAt, pathless(terr))
		}
		d.errAt = -1 // cut once
	}
	return d.err
}

// flush, when forced or tailEvery has passed, submits every complete
// block, waits for the writes in flight and writes the incomplete last
// block through the page cache: the file then holds everything so far,
// with no hole a reader could take for the end.
func (d *directFile) flush(force bool) error {
	if d.failed() != nil {
		return d.wait() // nothing more goes out past a failed write
	}
	if !force && time.Since(d.tailAt) < tailEvery {
		return nil // full buffers go out as they fill
	}
	if a := d.n &^ (directAlign - 1); a > 0 {
		d.submit(a)
	}
	if err := d.wait(); err != nil || d.n == d.tailDone {
		return err
	}
	if _, err := d.f.WriteAt(d.cur[d.tailDone:d.n], d.base+int64(d.tailDone)); err != nil {
		return pathless(err)
	}
	d.tailDone, d.tailAt = d.n, time.Now()
	return d.failed()
}

// Sync writes everything and flushes the file's data to the device.
func (d *directFile) Sync() error {
	if err := d.flush(true); err != nil {
		return err
	}
	return fdatasync(d.f)
}

// Close writes everything and closes both descriptors.
func (d *directFile) Close() error {
	err := d.flush(true)
	close(d.writes)
	<-d.stopped
	unix.Close(d.dfd)
	unix.Munmap(d.mem)
	if cerr := d.f.Close(); err == nil {
		err = cerr
	}
	return err
}
