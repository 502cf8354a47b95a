package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/vrlog/vrlog/transport/iceoryx2"
)

// cleanupDeadNodes removes what the iceoryx2 nodes of killed processes
// left (their shared memory in /dev/shm, their files under /tmp/iceoryx2):
// a process killed with SIGKILL cleans up nothing, and iceoryx2 removes a
// dead node's resources only when a live node opens one of its services,
// which for a test's own service names never happens again. Only dead
// nodes are touched, so tests running beside these lose nothing. logf
// says what could not be cleaned.
func cleanupDeadNodes(logf func(format string, args ...any)) {
	n, err := iceoryx2.NewNode("")
	if err != nil {
		logf("iceoryx2 cleanup: %v", err)
		return
	}
	defer n.Close()
	if _, failed, err := n.CleanupDeadNodes(); err != nil || failed > 0 {
		logf("iceoryx2 cleanup: %d dead nodes not cleaned: %v", failed, err)
	}
}

// removeIceoryxPrefix removes every iceoryx2 file of prefix (a
// configuration of a test's own, whose processes have all ended): its
// shared memory in /dev/shm, its service and node files under
// /tmp/iceoryx2, and the node directories that held only its files.
func removeIceoryxPrefix(prefix string) {
	for _, pat := range []string{"/dev/shm/" + prefix + "*", "/tmp/iceoryx2/*/" + prefix + "*"} {
		fs, _ := filepath.Glob(pat)
		for _, f := range fs {
			os.Remove(f)
		}
	}
	dirs, _ := filepath.Glob("/tmp/iceoryx2/nodes/*")
	for _, d := range dirs {
		es, err := os.ReadDir(d) // an error for a file: only directories are looked into
		if err != nil || len(es) == 0 {
			continue
		}
		mine := true
		for _, e := range es {
			mine = mine && strings.HasPrefix(e.Name(), prefix)
		}
		if mine {
			os.RemoveAll(d)
		}
	}
}

// removeStaleReadmePrefixes removes the files of README test runs whose
// test process is gone (killed before its cleanups ran: a -timeout panic,
// a Ctrl-C of go test). Each run has a prefix of its own,
// vrlogreadmePID_, so a run still going is left alone.
func removeStaleReadmePrefixes() {
	var found []string
	for _, pat := range []string{"/dev/shm/vrlogreadme*_*", "/tmp/iceoryx2/*/vrlogreadme*_*", "/tmp/iceoryx2/nodes/*/vrlogreadme*_*"} {
		fs, _ := filepath.Glob(pat)
		found = append(found, fs...)
	}
	done := map[string]bool{}
	for _, f := range found {
		name := strings.TrimPrefix(filepath.Base(f), "vrlogreadme")
		pid, _, ok := strings.Cut(name, "_")
		if !ok || done[pid] {
			continue
		}
		done[pid] = true
		if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() && syscall.Kill(n, 0) == syscall.ESRCH {
			removeIceoryxPrefix("vrlogreadme" + pid + "_")
		}
	}
}
