package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrLocked means the output is a live file another writer holds: no
// option replaces it. A *LockedError carries who.
var ErrLocked = errors.New("outfile: being written by another process")

// LockedError is a refusal to write a file that another writer holds
// locked (a recorder writing it). errors.Is(err, ErrLocked) is true.
type LockedError struct {
	Path string
	PID  int    // the holder's process id, 0 when it cannot be told
	Name string // the holder's command name, when known
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s: %s; refused whatever the options (a live log is never replaced)", e.Path, e.Holder())
}

// Holder says who writes the file: "being written by PID 123 (record)".
func (e *LockedError) Holder() string {
	return describeHolder(e.PID, e.Name)
}

func describeHolder(pid int, name string) string {
	switch {
	case pid == 0:
		return "being written by another process"
	case name == "":
		return fmt.Sprintf("being written by PID %d", pid)
	}
	return fmt.Sprintf("being written by PID %d (%s)", pid, name)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// lockFile takes f's exclusive lock (a file just created, that no one
// else has open yet).
func lockFile(f *os.File) error {
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	return nil
}

// lockRetries bound how long lockOld waits out another process's brief
// shared lock (a reader asking Holder) before it calls the file held:
// up to lockRetries polls lockPoll apart.
const (
	lockRetries = 200
	lockPoll    = time.Millisecond
)

// lockOld takes the exclusive lock of an existing file, or says who holds
// it. A reader's probe (Holder) holds a shared lock for a moment: only an
// exclusive lock, a writer's, refuses at once.
func lockOld(f *os.File, path string) error {
	for i := 0; ; i++ {
		err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			if errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EINVAL) {
				return nil // a filesystem without locks: nothing to respect
			}
			return fmt.Errorf("lock: %w", err)
		}
		pid, write := lockHolder(f)
		if write || i == lockRetries {
			return &LockedError{Path: path, PID: pid, Name: commName(pid)}
		}
		time.Sleep(lockPoll)
	}
}

// Holder reports whether the open file f is a live file that a writer
// holds locked (a recorder's log being written), and the writer's PID when
// it can be told (0 otherwise). It takes f's shared lock for a moment.
func Holder(f *os.File) (held bool, pid int, name string) {
	err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		flock(f, syscall.LOCK_UN)
		return false, 0, ""
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return false, 0, ""
	}
	pid, _ = lockHolder(f)
	return true, pid, commName(pid)
}

// Describe is Holder as a phrase: "being written by PID 123 (record)", or
// "" for a file no writer holds.
func Describe(f *os.File) string {
	held, pid, name := Holder(f)
	if !held {
		return ""
	}
	return describeHolder(pid, name)
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// lockHolder finds f's flock in /proc/locks (Linux; the PIDs there are in
// the reader's PID namespace): the PID of an exclusive (WRITE) holder, or
// of a shared one, and whether it is exclusive. A file on a filesystem
// whose device numbers /proc/locks shows differently (overlayfs) is
// matched by inode alone.
func lockHolder(f *os.File) (pid int, write bool) {
	st, err := f.Stat()
	if err != nil {
		return 0, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false
	}
	defer locks.Close()
	ino := strconv.FormatUint(uint64(sys.Ino), 10)
	dev := fmt.Sprintf("%02x:%02x:%s", major(uint64(sys.Dev)), minor(uint64(sys.Dev)), ino)
	var byIno, byInoWrite int
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 00:2d:5678 0 EOF
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[2] == "->" {
			continue
		}
		p, _ := strconv.Atoi(fs[4])
		w := fs[3] == "WRITE"
		switch {
		case fs[5] == dev:
			if w || pid == 0 {
				pid, write = p, w
			}
		case strings.HasSuffix(fs[5], ":"+ino):
			if w {
				byInoWrite = p
			} else if byIno == 0 {
				byIno = p
			}
		}
	}
	switch {
	case pid != 0:
		return pid, write
	case byInoWrite != 0:
		return byInoWrite, true
	}
	return byIno, false
}

// major and minor split a Linux device number as /proc/locks prints it.
func major(dev uint64) uint64 { return (dev>>8)&0xfff | (dev>>32)&^0xfff }
func minor(dev uint64) uint64 { return dev&0xff | (dev>>12)&^0xff }

// commName is a process's command name, or "".
func commName(pid int) string {
	if pid <= 0 {
		return ""
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
