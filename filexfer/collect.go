package filexfer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TokenKey is the liveliness token a file server declares, so that a
// collector finds every recorder that serves files (Discover).
func TokenKey(name string) string { return FilesKey(name) }

// settle is how long Discover keeps looking once it sees a recorder: a
// new session meets the network's peers, and learns their tokens, in its
// first moments, one after another.
const settle = 300 * time.Millisecond

// Discover returns the names of the recorders serving files, from their
// liveliness tokens: it waits up to timeout for the first, then as long
// as new ones keep arriving (zenoh.Session.FindTokens).
func (c *Client) Discover(ctx context.Context, timeout time.Duration) ([]string, error) {
	keys, err := c.Sess.FindTokens(ctx, FilesKey("*"), timeout, settle)
	if err != nil {
		return nil, fmt.Errorf("filexfer: list recorders: %w", err)
	}
	return namesOf(keys), nil
}

// Await waits up to timeout for each of names to serve files, and
// returns as soon as all do (no settling: the names are known); else the
// names still absent at the timeout and the recorders that do serve.
func (c *Client) Await(ctx context.Context, names []string, timeout time.Duration) (absent, serving []string, err error) {
	deadline := time.Now().Add(timeout)
	for {
		keys, err := c.Sess.LiveTokens(FilesKey("*"), min(settle, max(time.Until(deadline), time.Millisecond)))
		if err != nil {
			return nil, nil, fmt.Errorf("filexfer: list recorders: %w", err)
		}
		serving, absent = namesOf(keys), absent[:0]
		for _, n := range names {
			if !slices.Contains(serving, n) {
				absent = append(absent, n)
			}
		}
		if len(absent) == 0 || !time.Now().Before(deadline) {
			return absent, serving, nil
		}
		select { // soon again: a new session's first queries come back empty for a few ms, and every ms is a collect's
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// namesOf is the recorder names of file servers' token keys.
func namesOf(keys []string) []string {
	var names []string
	for _, k := range keys {
		name := strings.TrimSuffix(strings.TrimPrefix(k, "vrlog/record/"), "/files")
		if CheckName(name) == nil && FilesKey(name) == k {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// ErrNotAllowed: a recorder that is there does not answer this
// collector: most likely zenoh's access control keeps its requests from it.
var ErrNotAllowed = errors.New("filexfer: not answered")

// notAnsweredFor is how long a recorder whose token is there may leave a
// collector's listings unanswered before the collector concludes it is not
// allowed to ask: longer than zenoh's default lease (10 s), after which a
// partitioned recorder's token is gone.
const notAnsweredFor = 12 * time.Second

// alive says whether the recorder name's liveliness token is there.
func (c *Client) alive(name string) bool {
	keys, err := c.Sess.LiveTokens(TokenKey(name), time.Second)
	return err == nil && len(keys) > 0
}

// Collection says where one recorder's files went.
type Collection struct {
	Name    string      `json:"name"`
	Host    string      `json:"host"`
	Dir     string      `json:"dir"` // OUT/NAME
	Files   []Collected `json:"files"`
	Pending []Pending   `json:"pending,omitempty"` // not served: still written, or unrecoverable
	Err     string      `json:"error,omitempty"`
	err     error
}

// Error is the collection's failure, nil when every file arrived.
func (c *Collection) Error() error { return c.err }

// Collected is one file in a collection.
type Collected struct {
	File
	Path    string `json:"path"`
	How     string `json:"how"` // fetched, resumed, already (there from before), shared (a link to the shared copy)
	Fetched int64  `json:"fetched_bytes"`
}

// How a file was collected.
const (
	HowFetched = "fetched"
	HowResumed = "resumed"
	HowAlready = "already"
	HowShared  = "shared"
)

// Progress is one recorder's collection as it goes; read it from any
// goroutine.
type Progress struct {
	Name    string
	total   atomic.Int64
	done    atomic.Int64
	files   atomic.Int64
	ofFiles atomic.Int64
	state   atomic.Value // string
}

// Total and Done are bytes: of the files to collect, and collected.
func (p *Progress) Total() int64 { return p.total.Load() }
func (p *Progress) Done() int64  { return p.done.Load() }

// Files is how many files are collected, of how many.
func (p *Progress) Files() (done, of int64) { return p.files.Load(), p.ofFiles.Load() }

// State is what the collection does now, in words ("listing", "fetching
// run.vrlog", "waiting: …", "done", "failed: …").
func (p *Progress) State() string {
	s, _ := p.state.Load().(string)
	return s
}

func (p *Progress) set(format string, args ...any) { p.state.Store(fmt.Sprintf(format, args...)) }

// CollectOptions say where the files go.
type CollectOptions struct {
	Out string // OUT: each recorder's files go to OUT/NAME/ under their own names
	// Shared are directories where recorders' files are reachable already
	// (a network file system): a file found as SHARED/NAME/FILE or
	// SHARED/FILE with the listed size and SHA-256 is not copied; OUT/NAME/FILE
	// links to it.
	Shared []string
	Force  bool // replace a different file already in OUT/NAME
	// Recording, when it has an entry for a recorder, collects only one
	// of its recordings: the files that share the recording id of the
	// file named there (OfRecording). Without an entry, every finished
	// file is collected.
	Recording map[string]string
}

// ErrNoRecording: the recording asked for is not among a recorder's
// finished files.
var ErrNoRecording = errors.New("filexfer: recording not found")

// OfRecording returns the files of the recording whose file first is
// one of: every file that shares its recording id (the files its splits
// went on in; the recovered copy of one its recorder never finished),
// or first alone when it has no id. first names the file in the
// recorder's directory, or its recovered copy's original.
func OfRecording(files []File, first string) ([]File, error) {
	var id string
	found := false
	for _, f := range files {
		if f.Name == first || (f.Recovered && f.RecoveredFrom == first) {
			id, found = f.Recording, true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: %s is not among the recorder's finished files", ErrNoRecording, first)
	}
	var out []File
	for _, f := range files {
		if (id != "" && f.Recording == id) || f.Name == first || (f.Recovered && f.RecoveredFrom == first) {
			out = append(out, f)
		}
	}
	return out, nil
}

// Collect fetches the finished files of the recorders names into
// OUT/NAME/, all recorders at once and one file at a time each. p, one per
// name, report how it goes. It returns every recorder's collection; the
// error is the first recorder's failure (each Collection says its own).
func (c *Client) Collect(ctx context.Context, names []string, o CollectOptions, p []*Progress) ([]Collection, error) {
	out := make([]Collection, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = c.collectOne(ctx, name, o, p[i])
		}()
	}
	wg.Wait()
	for _, col := range out {
		if col.err != nil {
			return out, col.err
		}
	}
	return out, nil
}

func (c *Client) collectOne(ctx context.Context, name string, o CollectOptions, p *Progress) (col Collection) {
	col = Collection{Name: name, Dir: filepath.Join(o.Out, name)}
	defer func() {
		if col.err != nil {
			col.Err = col.err.Error()
			p.set("failed: %v", col.err)
		} else {
			p.set("done")
		}
	}()
	p.set("listing")
	var l Listing
	var ignoredSince time.Time // unanswered listings while the recorder's token was there
	ignored := 0
	for start := time.Now(); ; {
		var err error
		if l, err = c.List(ctx, name); err == nil {
			first, ok := o.Recording[name]
			if !ok || !slices.ContainsFunc(l.Pending, func(p Pending) bool { return p.Name == first }) {
				break
			}
			// The recording was just stopped: its recorder finishes the
			// file (the index, the sync) after it says it stopped.
			if time.Since(start) > c.patience() || ctx.Err() != nil {
				break // OfRecording says it is not finished
			}
			p.set("waiting: %s is being finished on its host", first)
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		switch {
		case !errors.Is(err, ErrNoAnswer) || !c.alive(name):
			ignored = 0
		case ignored == 0:
			ignored, ignoredSince = 1, time.Now()
		default:
			// Beyond a zenoh lease (a partitioned recorder's token is gone
			// by then) and a few requests, a recorder that is there and
			// never answers does not answer this identity.
			if ignored++; ignored >= 3 && time.Since(ignoredSince) > notAnsweredFor {
				col.err = fmt.Errorf("%s: %w: %s is on the network (its liveliness token %s is there) but answered none of this identity's requests for %v: a router's access control lets only the controller's identity ask recorders (docs/deployment.md, \"Access control\"), or the recorder is stalled",
					name, ErrNotAllowed, name, TokenKey(name), time.Since(ignoredSince).Round(time.Second))
				return col
			}
		}
		if !transient(err) || time.Since(start) > c.patience() || ctx.Err() != nil {
			col.err = fmt.Errorf("%s: %w", name, err)
			return col
		}
		p.set("waiting: %v", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	col.Host, col.Pending = l.Host, l.Pending
	if first, ok := o.Recording[name]; ok {
		var err error
		if l.Files, err = OfRecording(l.Files, first); err != nil {
			col.err = fmt.Errorf("%s: %w", name, err)
			return col
		}
	}
	var total int64
	for _, f := range l.Files {
		total += f.Size
	}
	p.total.Store(total)
	p.ofFiles.Store(int64(len(l.Files)))
	if err := os.MkdirAll(col.Dir, 0o777); err != nil {
		col.err = fmt.Errorf("%s: %w", name, err)
		return col
	}
	cl := *c
	cl.OnWait = func(err error) {
		if err != nil {
			p.set("waiting: %v", err)
		} else {
			p.set("fetching")
		}
	}
	for _, f := range l.Files {
		dst := filepath.Join(col.Dir, f.Name)
		if src := findShared(ctx, o.Shared, name, f); src != "" {
			if err := link(src, dst, o.Force); err != nil {
				col.err = fmt.Errorf("%s: %w", name, err)
				return col
			}
			col.Files = append(col.Files, Collected{File: f, Path: dst, How: HowShared})
			p.done.Add(f.Size)
			p.files.Add(1)
			continue
		}
		p.set("fetching %s", f.Name)
		res, err := cl.Fetch(ctx, name, f, dst, o.Force, func(n int64) { p.done.Add(n) })
		if err != nil {
			col.err = fmt.Errorf("%s: %w", name, err)
			return col
		}
		how := HowFetched
		switch {
		case res.Already:
			how = HowAlready
			p.done.Add(f.Size)
		case res.Resumed > 0:
			how = HowResumed
		}
		col.Files = append(col.Files, Collected{File: f, Path: dst, How: how, Fetched: res.Bytes})
		p.files.Add(1)
	}
	return col
}

// findShared returns a copy of f reachable in one of the shared
// directories (same size and SHA-256), or "".
func findShared(ctx context.Context, shared []string, name string, f File) string {
	for _, dir := range shared {
		for _, cand := range []string{filepath.Join(dir, name, f.Name), filepath.Join(dir, f.Name)} {
			if same, err := holds(ctx, cand, f); err == nil && same {
				if abs, err := filepath.Abs(cand); err == nil {
					return abs
				}
			}
		}
	}
	return ""
}

// link makes dst a symbolic link to src, atomically (a link under a
// temporary name renamed over dst); an existing dst that is something
// else is ErrExists unless force.
func link(src, dst string, force bool) error {
	if cur, err := os.Readlink(dst); err == nil && cur == src {
		return nil
	}
	if _, err := os.Lstat(dst); err == nil && !force {
		return fmt.Errorf("%w: %s (the shared copy is %s)", ErrExists, dst, src)
	}
	tmp := filepath.Join(filepath.Dir(dst), fmt.Sprintf(".%s.link-%d", filepath.Base(dst), os.Getpid()))
	os.Remove(tmp)
	if err := os.Symlink(src, tmp); err != nil {
		return fmt.Errorf("filexfer: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("filexfer: %w", err)
	}
	return nil
}
