package filexfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
)

// MetaRecovered, in a recovered copy's header, says why it was recovered
// (logfmt.MetaRecoveredFrom names the original).
const MetaRecovered = "vrlog.recovered"

// recoveredSuffix names the copy recovered from NAME.vrlog:
// NAME.recovered.vrlog.
const recoveredSuffix = ".recovered.vrlog"

// catalog is what a recorder's output directory holds: its finished logs
// with their checksums, the logs still being written, and the verified
// copies of logs a crash left unfinished. Every file is opened through an
// os.Root of the directory, so nothing outside it is ever opened.
type catalog struct {
	dir  string
	root *os.Root

	scanning sync.Mutex // one scan at a time (it may hash or recover for long)
	mu       sync.Mutex // guards sums, briefly: range requests read it during scans
	sums     map[string]sum
	// failed (under scanning) are unfinished logs whose recovery failed: not tried again
	// while the file stays the same.
	failed map[string]failure
}

// sum is a finished file as it was when it was hashed: a file whose
// identity, size or modification time differs is hashed again.
type sum struct {
	ident fileIdent
	file  File
}

type failure struct {
	ident fileIdent
	why   string
}

// fileIdent tells one version of a file from another.
type fileIdent struct {
	dev, ino uint64
	size     int64
	mtimeNs  int64
}

func identOf(fi os.FileInfo) fileIdent {
	id := fileIdent{size: fi.Size(), mtimeNs: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(st.Dev), st.Ino
	}
	return id
}

func openCatalog(dir string) (*catalog, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("filexfer: output directory: %w", err)
	}
	return &catalog{dir: abs, root: root, sums: map[string]sum{}, failed: map[string]failure{}}, nil
}

func (c *catalog) close() error { return c.root.Close() }

// scan lists the directory: each regular *.vrlog file that no writer
// holds and that has its footer is finished (hashed once per version);
// one a writer holds is pending; one without a footer that no one writes
// (its recorder crashed) is recovered into NAME.recovered.vrlog next to
// it, once, and the copy is served in its place. Symbolic links, hidden
// files and other names are never listed.
func (c *catalog) scan(ctx context.Context) (files []File, pending []Pending, err error) {
	c.scanning.Lock()
	defer c.scanning.Unlock()
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("filexfer: list %s: %w", c.dir, err)
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name()] = true
	}
	seen := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		if CheckFileName(name) != nil || !strings.HasSuffix(name, ".vrlog") || !e.Type().IsRegular() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		f, p, err := c.examine(ctx, name, names)
		switch {
		case err != nil:
			return nil, nil, err
		case f != nil:
			files = append(files, *f)
			seen[name] = true
		case p != nil:
			pending = append(pending, *p)
		}
	}
	c.mu.Lock()
	for name := range c.sums {
		if !seen[name] {
			delete(c.sums, name)
		}
	}
	c.mu.Unlock()
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, pending, nil
}

// examine says what one file is: finished (hashed), pending, or neither
// (a torn log whose recovered copy exists: the copy is listed instead).
func (c *catalog) examine(ctx context.Context, name string, names map[string]bool) (*File, *Pending, error) {
	fh, err := c.root.Open(name)
	if err != nil {
		return nil, nil, nil // gone since the listing, or replaced by something unreadable
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil, nil
	}
	if lfi, err := c.root.Lstat(name); err != nil || !os.SameFile(fi, lfi) {
		return nil, nil, nil // swapped for a link meanwhile: never served
	}
	if held, pid, comm := outfile.Holder(fh); held {
		why := "being written"
		if pid != 0 {
			why = fmt.Sprintf("being written by PID %d (%s)", pid, comm)
		}
		return nil, &Pending{Name: name, Size: fi.Size(), Why: why}, nil
	}
	id := identOf(fi)
	c.mu.Lock()
	s, ok := c.sums[name]
	c.mu.Unlock()
	if ok && s.ident == id {
		return &s.file, nil, nil
	}
	r, err := logfmt.NewReader(fh, fi.Size(), logfmt.ReaderOptions{Name: name, Tolerant: true})
	if err != nil {
		return nil, &Pending{Name: name, Size: fi.Size(), Why: "not a readable vrlog log: " + err.Error()}, nil
	}
	h := r.Header()
	indexed := r.Indexed()
	r.Close()
	if !indexed {
		dst, p := c.recoverTorn(ctx, name, id, names)
		if p != nil {
			return nil, p, nil
		}
		if dst == "" {
			return nil, nil, nil // its copy is listed by its own name
		}
		return c.examine(ctx, dst, names) // the copy just made: listed in its place
	}
	sha, err := hashFile(ctx, fh)
	if err != nil {
		return nil, nil, fmt.Errorf("filexfer: checksum %s: %w", name, err)
	}
	f := File{Name: name, Size: fi.Size(), SHA256: sha, ModifiedNs: id.mtimeNs,
		Recording: h.Metadata[hostclock.MetaRecording], RecoveredFrom: h.Metadata[logfmt.MetaRecoveredFrom]}
	f.Recovered = f.RecoveredFrom != ""
	c.mu.Lock()
	c.sums[name] = sum{ident: id, file: f}
	c.mu.Unlock()
	return &f, nil, nil
}

// recoverTorn writes the verified copy of an unfinished log that no one
// writes any more (logfmt.Recover, as `vrlog recover` does) next to it,
// NAME.recovered.vrlog, marked as recovered; the original stays as it
// was. It returns the copy's name when it made it now, "" when the copy
// was there already, or why the log cannot be served.
func (c *catalog) recoverTorn(ctx context.Context, name string, id fileIdent, names map[string]bool) (string, *Pending) {
	if strings.HasSuffix(name, recoveredSuffix) {
		return "", &Pending{Name: name, Size: id.size, Why: "a recovered copy without its footer: not served"}
	}
	dst := strings.TrimSuffix(name, ".vrlog") + recoveredSuffix
	if names[dst] {
		return "", nil
	}
	if f, ok := c.failed[name]; ok && f.ident == id {
		return "", &Pending{Name: name, Size: id.size, Why: f.why}
	}
	rep, err := logfmt.Recover(ctx, filepath.Join(c.dir, name), filepath.Join(c.dir, dst), logfmt.RecoverOptions{
		Metadata: map[string]string{logfmt.MetaRecoveredFrom: name, MetaRecovered: "unfinished: its recorder stopped without closing it (crash, kill -9, power loss)"}})
	if err == nil && rep.Verified == nil {
		err = errors.New("the copy was not read back")
	}
	if err != nil {
		why := "unfinished, and its recovery failed: " + err.Error()
		c.failed[name] = failure{ident: id, why: why}
		return "", &Pending{Name: name, Size: id.size, Why: why}
	}
	names[dst] = true
	return dst, nil
}

// hashFile is the hex SHA-256 of all of f.
func hashFile(ctx context.Context, f *os.File) (string, error) {
	h := sha256.New()
	buf := make([]byte, 1<<20)
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := f.ReadAt(buf, off)
		h.Write(buf[:n])
		off += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// open opens the finished file name for reading if it is still the
// version whose checksum is sha: the only way the server reaches a file's
// bytes.
func (c *catalog) open(name, sha string) (*os.File, int64, error) {
	if err := CheckFileName(name); err != nil {
		return nil, 0, &RemoteError{Schema: ErrorSchema, Code: CodeBadRequest, Message: err.Error()}
	}
	c.mu.Lock()
	s, ok := c.sums[name]
	c.mu.Unlock()
	if !ok {
		return nil, 0, &RemoteError{Schema: ErrorSchema, Code: CodeNotFound, Message: fmt.Sprintf("%s is not a finished log of this recorder (ask for its list of files)", name)}
	}
	if s.file.SHA256 != sha {
		return nil, 0, &RemoteError{Schema: ErrorSchema, Code: CodeChanged, Message: fmt.Sprintf("%s has sha256 %s, not %s", name, s.file.SHA256, sha)}
	}
	f, err := c.root.Open(name)
	if err != nil {
		return nil, 0, &RemoteError{Schema: ErrorSchema, Code: CodeNotFound, Message: fmt.Sprintf("%s: %v", name, err)}
	}
	fi, err := f.Stat()
	lfi, lerr := c.root.Lstat(name)
	if err != nil || lerr != nil || !fi.Mode().IsRegular() || !os.SameFile(fi, lfi) || identOf(fi) != s.ident {
		f.Close()
		return nil, 0, &RemoteError{Schema: ErrorSchema, Code: CodeChanged, Message: fmt.Sprintf("%s changed since it was listed: list the files again", name)}
	}
	return f, fi.Size(), nil
}
