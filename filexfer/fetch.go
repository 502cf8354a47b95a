package filexfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vrlog/vrlog/outfile"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Client fetches recorders' files over a zenoh session. Its zero fields
// take the defaults below.
type Client struct {
	Sess *zenoh.Session
	// Chunk is the bytes one request asks for (default 1 MiB, at most
	// MaxChunk); Window the requests in flight per file (default 64: a
	// 20 ms round trip at the speed of a plain TCP copy, BenchmarkCollect).
	// Memory per file fetched is Window × Chunk, whatever its size.
	Chunk  int64
	Window int
	// Timeout bounds one request (default 10 s); a request unanswered is
	// asked again, after a pause that grows from 250 ms to 2 s.
	Timeout time.Duration
	// Patience is how long a fetch goes on asking while nothing arrives
	// (a partition, a router restarting) before it gives up (default
	// 2 min): what it has stays in its partial file, and the next fetch
	// resumes from there.
	Patience time.Duration
	// OnWait, if set, is told when requests go unanswered (and keep being
	// asked) and when answers come again (err nil).
	OnWait func(err error)
}

// Defaults of Client.
const (
	DefaultChunk    = 1 << 20
	DefaultWindow   = 64
	DefaultTimeout  = 10 * time.Second
	DefaultPatience = 2 * time.Minute
)

func (c *Client) chunk() int64 {
	if c.Chunk <= 0 {
		return DefaultChunk
	}
	return min(c.Chunk, MaxChunk)
}

func (c *Client) window() int {
	if c.Window <= 0 {
		return DefaultWindow
	}
	return c.Window
}

func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

func (c *Client) patience() time.Duration {
	if c.Patience <= 0 {
		return DefaultPatience
	}
	return c.Patience
}

// List asks the recorder name for its finished files. No answer within
// the timeout is ErrNoAnswer; an answer it refused is a *RemoteError.
func (c *Client) List(ctx context.Context, name string) (Listing, error) {
	if err := CheckName(name); err != nil {
		return Listing{}, err
	}
	// A listing may hash a file just finished: give it longer than a range.
	b, err := c.ask(ctx, FilesKey(name), nil, 6*c.timeout())
	if err != nil {
		return Listing{}, err
	}
	var l Listing
	if err := json.Unmarshal(b, &l); err != nil || l.Schema != ListingSchema {
		return Listing{}, fmt.Errorf("filexfer: %s answered something that is not a %s: %.200q", FilesKey(name), ListingSchema, b)
	}
	for _, f := range l.Files {
		if CheckFileName(f.Name) != nil || !isSHA256(f.SHA256) || f.Size < 0 {
			return Listing{}, fmt.Errorf("filexfer: %s listed a file it cannot serve: %+v", FilesKey(name), f)
		}
	}
	return l, nil
}

// ask sends one query and returns the one answer's payload: a
// *RemoteError for an answer that is an error, ErrNoAnswer for none.
func (c *Client) ask(ctx context.Context, key string, payload []byte, timeout time.Duration) ([]byte, error) {
	start := time.Now()
	replies, err := c.Sess.Get(ctx, key, payload, timeout)
	if err != nil {
		return nil, fmt.Errorf("filexfer: query %s: %w", key, err)
	}
	zenohErr := ""
	for _, r := range replies {
		switch {
		case r.Err && r.Encoding == ErrorEncoding:
			re := &RemoteError{}
			if json.Unmarshal(r.Payload, re) != nil || re.Schema != ErrorSchema {
				return nil, fmt.Errorf("filexfer: %s answered an error that is not a %s: %.200q", key, ErrorSchema, r.Payload)
			}
			return nil, re
		case r.Err:
			zenohErr = string(r.Payload)
		default:
			return r.Payload, nil
		}
	}
	if zenohErr != "" {
		return nil, fmt.Errorf("%w on %s within %v (zenoh: %s)", ErrNoAnswer, key, timeout, zenohErr)
	}
	if time.Since(start) >= timeout*9/10 {
		return nil, fmt.Errorf("%w on %s within %v: the query went out and nothing answered", ErrNoAnswer, key, timeout)
	}
	return nil, fmt.Errorf("%w on %s: no recorder of that name is reachable now", ErrNoAnswer, key)
}

// transient says whether asking again may help: no answer, or a server
// that was busy.
func transient(err error) bool {
	var re *RemoteError
	if errors.As(err, &re) {
		return re.Code == CodeBusy
	}
	return errors.Is(err, ErrNoAnswer)
}

// Fetched says how a fetch went.
type Fetched struct {
	Path    string
	Already bool  // dst held the file already (same size and SHA-256): nothing fetched
	Resumed int64 // bytes a partial file held from an earlier fetch
	Bytes   int64 // bytes fetched now
}

// ErrExists: the destination holds a different file and Force is off.
var ErrExists = errors.New("filexfer: a different file is there")

// Fetch copies f of the recorder name to dst. The bytes go to a partial
// file next to dst (.NAME.SHA.part, locked while written, so a second
// fetch of the same file waits and then finds it done), hashed as they
// are written; once all are there and their SHA-256 is f's, the partial
// file is synced and renamed to dst. A fetch that gives up (Patience) or
// is cancelled keeps its partial file, and the next resumes from its end.
// A local write error (a full disk) removes it: nothing half-written is
// left. progress, if set, is called with each run of bytes written (and
// once with what a partial file held). Without force an existing dst
// that differs is ErrExists.
func (c *Client) Fetch(ctx context.Context, name string, f File, dst string, force bool, progress func(n int64)) (Fetched, error) {
	if err := CheckName(name); err != nil {
		return Fetched{}, err
	}
	if err := CheckFileName(f.Name); err != nil || !isSHA256(f.SHA256) || f.Size < 0 {
		return Fetched{}, fmt.Errorf("%w: file %+v", ErrRequest, f)
	}
	if progress == nil {
		progress = func(int64) {}
	}
	for {
		res, retry, err := c.fetchLocked(ctx, name, f, dst, force, progress)
		if !retry {
			return res, err
		}
	}
}

// fetchLocked is one attempt: it takes the partial file's lock (waiting
// for another fetch that holds it) and fetches; retry when the partial
// file it locked was meanwhile committed or removed by that other fetch.
func (c *Client) fetchLocked(ctx context.Context, name string, f File, dst string, force bool, progress func(int64)) (res Fetched, retry bool, err error) {
	res.Path = dst
	if same, err := holdsOrFree(ctx, dst, f, force); err != nil || same {
		res.Already = same
		return res, false, err
	}
	part := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+"."+f.SHA256[:16]+".part")
	pf, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o666)
	if err != nil {
		return res, false, fmt.Errorf("filexfer: %w", err)
	}
	defer pf.Close()
	if err := lockWait(ctx, pf, part, c.OnWait); err != nil {
		return res, false, err
	}
	if !sameAsPath(pf, part) {
		return res, true, nil // the fetch that held it finished (or gave up) meanwhile: look again
	}
	if same, err := holdsOrFree(ctx, dst, f, force); err != nil || same {
		res.Already = same
		os.Remove(part) // dst is complete: this partial file is an empty one just made
		return res, false, err
	}
	keep := true // a partial file is kept for the next fetch, unless it cannot help
	defer func() {
		if !keep {
			os.Remove(part)
		}
	}()
	fi, err := pf.Stat()
	if err != nil {
		return res, false, fmt.Errorf("filexfer: %w", err)
	}
	have := fi.Size()
	if have > f.Size {
		have = 0
		if err := pf.Truncate(0); err != nil {
			keep = false
			return res, false, fmt.Errorf("filexfer: %s: %w", part, err)
		}
	}
	h := sha256.New()
	if have > 0 {
		if _, err := io.Copy(h, io.NewSectionReader(pf, 0, have)); err != nil {
			keep = false
			return res, false, fmt.Errorf("filexfer: read %s: %w", part, err)
		}
		res.Resumed = have
		progress(have)
	}
	n, err := c.pull(ctx, name, f, pf, have, h, progress)
	res.Bytes = n
	var werr *writeError
	if errors.As(err, &werr) {
		keep = false
		return res, false, err
	}
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) && !transient(err) {
			keep = false // the recorder will not serve this version again
		}
		return res, false, err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
		keep = false
		return res, false, fmt.Errorf("%w: %s of %s: the %d bytes fetched have sha256 %s, the recorder listed %s", ErrChanged, f.Name, name, f.Size, sum, f.SHA256)
	}
	if err := commit(pf, part, dst, force); err != nil {
		keep = !errors.Is(err, ErrExists)
		return res, false, err
	}
	return res, false, nil
}

// writeError is a failure of the local disk (a full disk, an I/O error).
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// chunkResult is one range's answer.
type chunkResult struct {
	off  int64
	data []byte
	err  error
}

// pull fetches f's bytes from offset have to its end into pf, Window
// requests in flight, writing them in order (so the partial file is
// always a prefix of f) and hashing them into h. Requests go only up to
// Window chunks past what is written, so memory stays Window × Chunk while
// a range is asked again.
func (c *Client) pull(ctx context.Context, name string, f File, pf *os.File, have int64, h hash.Hash, progress func(int64)) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunk, window := c.chunk(), int64(c.window())
	results := make(chan chunkResult, window)
	inflight := 0
	ask := func(off int64, wait time.Duration) {
		inflight++
		go func() {
			if wait > 0 {
				select {
				case <-ctx.Done():
					results <- chunkResult{off: off, err: ctx.Err()}
					return
				case <-time.After(wait):
				}
			}
			data, err := c.getRange(ctx, name, f, off, min(chunk, f.Size-off))
			results <- chunkResult{off: off, data: data, err: err}
		}()
	}
	defer func() { // let the requests still out end before the caller closes pf
		for ; inflight > 0; inflight-- {
			<-results
		}
	}()
	written, next := have, have
	ready := map[int64][]byte{}
	backoff := map[int64]time.Duration{}
	lastProgress := time.Now()
	waiting := false
	for written < f.Size {
		if err := ctx.Err(); err != nil {
			return written - have, err
		}
		for next < f.Size && next < written+window*chunk {
			ask(next, 0)
			next += chunk
		}
		r := <-results
		inflight--
		switch {
		case r.err == nil:
			ready[r.off] = r.data
			delete(backoff, r.off)
		case ctx.Err() != nil:
			return written - have, ctx.Err()
		case !transient(r.err):
			return written - have, r.err
		case time.Since(lastProgress) > c.patience():
			return written - have, fmt.Errorf("filexfer: %s of %s: nothing arrived for %v, gave up at %d of %d bytes (kept for the next fetch): %w",
				f.Name, name, c.patience().Round(time.Second), written, f.Size, r.err)
		default:
			if !waiting && c.OnWait != nil {
				c.OnWait(r.err)
			}
			waiting = true
			b := min(max(2*backoff[r.off], 250*time.Millisecond), 2*time.Second)
			backoff[r.off] = b
			ask(r.off, b)
			continue
		}
		for data, ok := ready[written]; ok; data, ok = ready[written] {
			if _, err := pf.WriteAt(data, written); err != nil {
				return written - have, &writeError{fmt.Errorf("filexfer: write %s: %w", pf.Name(), err)}
			}
			h.Write(data)
			delete(ready, written)
			written += int64(len(data))
			progress(int64(len(data)))
			lastProgress = time.Now()
			if waiting && c.OnWait != nil {
				c.OnWait(nil)
			}
			waiting = false
		}
	}
	return written - have, nil
}

// getRange asks for n bytes of f at off and checks the answer's length.
func (c *Client) getRange(ctx context.Context, name string, f File, off, n int64) ([]byte, error) {
	req, _ := json.Marshal(RangeRequest{File: f.Name, SHA256: f.SHA256, Offset: off, Length: n})
	data, err := c.ask(ctx, RangeKey(name), req, c.timeout())
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != n {
		return nil, fmt.Errorf("%w: %s of %s: asked %d bytes at %d, got %d", ErrChanged, f.Name, name, n, off, len(data))
	}
	return data, nil
}

// holds says whether path is a regular file with f's size and SHA-256.
func holds(ctx context.Context, path string, f File) (bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("filexfer: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() != f.Size {
		return false, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("filexfer: %w", err)
	}
	defer fh.Close()
	sum, err := hashFile(ctx, fh)
	if err != nil {
		return false, fmt.Errorf("filexfer: checksum %s: %w", path, err)
	}
	return sum == f.SHA256, nil
}

// holdsOrFree says whether dst holds f already; a different file there is
// ErrExists unless force.
func holdsOrFree(ctx context.Context, dst string, f File, force bool) (bool, error) {
	same, err := holds(ctx, dst, f)
	if err != nil || same || force {
		return same, err
	}
	if _, err := os.Lstat(dst); err == nil {
		return false, fmt.Errorf("%w: %s (not the %d bytes with sha256 %.16s… listed)", ErrExists, dst, f.Size, f.SHA256)
	}
	return false, nil
}

// lockWait takes pf's exclusive lock, waiting (and saying so once) while
// another fetch holds it.
func lockWait(ctx context.Context, pf *os.File, path string, onWait func(error)) error {
	said := false
	for {
		err := syscall.Flock(int(pf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("filexfer: lock %s: %w", path, err)
		}
		if !said && onWait != nil {
			onWait(fmt.Errorf("%s: %s: waiting for it", path, outfile.Describe(pf)))
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sameAsPath says whether path still names the file open as f.
func sameAsPath(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// commit syncs the partial file and moves it to dst, as outfile commits a
// file: without force it links the name, so a file that appeared there
// meanwhile is never replaced; then the directory is synced.
func commit(pf *os.File, part, dst string, force bool) error {
	if err := pf.Sync(); err != nil {
		return &writeError{fmt.Errorf("filexfer: sync %s: %w", part, err)}
	}
	if force {
		if err := os.Rename(part, dst); err != nil {
			return fmt.Errorf("filexfer: %w", err)
		}
	} else {
		if err := os.Link(part, dst); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%w: %s", ErrExists, dst)
			}
			return fmt.Errorf("filexfer: %w", err)
		}
		os.Remove(part)
	}
	d, err := os.Open(filepath.Dir(dst))
	if err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
