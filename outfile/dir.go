package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is an output directory of several files (export --format csv -o
// DIR): each file is an output of its own, committed together; a
// directory Dir created is removed again when nothing is committed.
type Dir struct {
	path    string
	force   bool
	created bool
	files   []*File
}

// CreateDir starts writing files into path, creating it if missing (its
// parent must exist, as for every output: ErrNoDir). A file path is
// refused.
func CreateDir(path string, o Options) (*Dir, error) {
	if path == "" || path == "-" {
		return nil, errors.New("output: give a directory path")
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.IsDir():
		return nil, fmt.Errorf("%s: %w (not a directory)", path, fs.ErrExist)
	case err == nil:
		return &Dir{path: path, force: o.Force}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	if err := ParentExists(path); err != nil {
		return nil, err
	}
	live.mu.Lock() // created and registered at once, as Create's files
	defer live.mu.Unlock()
	if live.discarded {
		return nil, fmt.Errorf("create %s: interrupted", path)
	}
	if err := os.Mkdir(path, 0o777); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	live.dirs[path] = true
	return &Dir{path: path, force: o.Force, created: true}, nil
}

// ErrNoDir means an output's directory does not exist: the one rule for
// every output (a file, a CSV directory) is that its parent directory
// exists, as for a shell's redirection; nothing creates it.
var ErrNoDir = errors.New("outfile: no such directory")

// ParentExists is ErrNoDir, naming it, when the directory path goes in
// does not exist.
func ParentExists(path string) error {
	dir := filepath.Dir(filepath.Clean(path)) // timing/'s is .
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("create %s: %w: %s (create it first)", path, ErrNoDir, dir)
	}
	return nil
}

// Path is the directory.
func (d *Dir) Path() string { return d.path }

// Create starts writing the file name inside the directory.
func (d *Dir) Create(name string) (*File, error) {
	f, err := Create(filepath.Join(d.path, name), Options{Force: d.force})
	if err != nil {
		return nil, err
	}
	d.files = append(d.files, f)
	return f, nil
}

// Commit commits every file: all are finished first (flushed, fsynced,
// closed: where a full disk shows), so one that fails leaves none under
// its name and a directory Dir created is removed again; only then are
// they renamed. On the first failure the rest are aborted.
func (d *Dir) Commit() error {
	for _, f := range d.files {
		if err := f.Finish(); err != nil {
			d.Abort()
			return err
		}
	}
	for i, f := range d.files {
		if err := f.Commit(); err != nil {
			for _, g := range d.files[i+1:] {
				g.Abort()
			}
			d.release(false)
			return err
		}
	}
	d.release(true)
	return nil
}

// Abort aborts every file and removes the directory if Dir created it.
// It does nothing after Commit.
func (d *Dir) Abort() {
	for _, f := range d.files {
		f.Abort()
	}
	d.release(false)
}

// release forgets the created directory, removing it unless kept.
func (d *Dir) release(keep bool) {
	if !d.created {
		return
	}
	live.mu.Lock()
	delete(live.dirs, d.path)
	live.mu.Unlock()
	if !keep {
		os.Remove(d.path) // only if empty
	}
	d.created = false
}
