package outfile

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"
)

// live is every output not yet committed or aborted, process-wide because
// a signal is: Discard removes them on the way out.
var live = &registry{files: map[*File]bool{}, dirs: map[string]bool{}}

type registry struct {
	mu        sync.Mutex
	files     map[*File]bool
	dirs      map[string]bool // directories Dir created and would remove
	discarded bool            // Discard ran: no more commits
}

// commit moves f to its name under the lock, so that Discard sees it
// either before (and removes the temporary file) or after (and leaves the
// output).
func (r *registry) commit(f *File) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.discarded || !r.files[f] {
		return fmt.Errorf("write %s: interrupted", f.path)
	}
	delete(r.files, f)
	f.done = true
	if err := commitTemp(f.tmp, f.target, f.force); err != nil {
		os.Remove(f.tmp)
		if err == fs.ErrExist {
			err = &fs.PathError{Op: "create", Path: f.path, Err: fs.ErrExist}
		} else {
			err = fmt.Errorf("write %s: %w", f.path, err)
		}
		f.err = err
		return f.err
	}
	return nil
}

func (r *registry) remove(f *File) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.files, f)
	f.done = true
	os.Remove(f.tmp)
}

// Discard removes every output not yet committed and the directories
// their Dirs created, and makes any later Commit fail: for the process's
// way out when it is interrupted. It returns how many files it removed.
// Outputs written in place and live logs keep what they got.
func Discard() int {
	live.mu.Lock()
	defer live.mu.Unlock()
	live.discarded = true
	n := 0
	for f := range live.files {
		os.Remove(f.tmp)
		delete(live.files, f)
		n++
	}
	dirs := slices.Collect(maps.Keys(live.dirs))
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) }) // a directory made inside another first
	for _, d := range dirs {
		os.Remove(d) // only if empty: what Dir created and filled with nothing else
		delete(live.dirs, d)
	}
	return n
}
