// Package netem builds small networks on one machine for tests: network
// namespaces (each a "host") joined by veth pairs, random packet loss in
// netfilter (nftables' numgen), and a TCP relay that delays and jitters what
// it forwards (Relay). It exists because the kernels vrlog is tested on may
// lack the netem qdisc (`tc qdisc add … netem` fails with "Specified qdisc
// kind is unknown"), while netfilter is there. Everything it creates is
// removed when the test ends; nothing leaves the namespaces it made.
package netem

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// Available says why namespaces cannot be used here, or returns nil: the
// tests skip with its message. They need root, `ip` (iproute2) and `nft`
// (nftables), and a kernel that lets them create a namespace.
func Available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("netem: network namespaces need root (running as uid %d)", os.Geteuid())
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("netem: %s not found (install iproute2 and nftables, e.g. apt-get install iproute2 nftables)", tool)
		}
	}
	name := fmt.Sprintf("vrlprobe%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return fmt.Errorf("netem: cannot create a network namespace: %v: %s", err, bytes.TrimSpace(out))
	}
	exec.Command("ip", "netns", "del", name).Run()
	return nil
}

// NS is a network namespace the test created.
type NS struct {
	Name string
	t    testing.TB
}

var nsSeq atomic.Int64

// New creates a namespace (named after the process and a counter, so
// parallel test runs never meet) with its loopback up; the test's cleanup
// deletes it, which also removes its veth ends and its netfilter rules.
func New(t testing.TB, label string) *NS {
	t.Helper()
	n := &NS{Name: fmt.Sprintf("vrl%d-%d-%s", os.Getpid(), nsSeq.Add(1), label), t: t}
	run(t, "ip", "netns", "add", n.Name)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", n.Name).Run() })
	n.IP("link", "set", "lo", "up")
	return n
}

// IP runs `ip -n NS args...` and fails the test on error.
func (n *NS) IP(args ...string) {
	n.t.Helper()
	run(n.t, "ip", append([]string{"-n", n.Name}, args...)...)
}

// Link joins a and b with a veth pair: interface aIf with address aAddr
// (CIDR, e.g. 198.51.100.1/30) in a, bIf with bAddr in b.
func Link(t testing.TB, a *NS, aIf, aAddr string, b *NS, bIf, bAddr string) {
	t.Helper()
	run(t, "ip", "link", "add", aIf, "netns", a.Name, "type", "veth", "peer", "name", bIf, "netns", b.Name)
	a.IP("addr", "add", aAddr, "dev", aIf)
	b.IP("addr", "add", bAddr, "dev", bIf)
	a.IP("link", "set", aIf, "up")
	b.IP("link", "set", bIf, "up")
}

// Command is a command run inside the namespace (`ip netns exec`, which
// execs it: the process's pid is the command's own).
func (n *NS) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// Do runs f on an OS thread that has entered the namespace: sockets f
// creates live in the namespace for good, whichever thread uses them
// later. The thread is discarded afterwards (a locked goroutine's thread
// ends with it), so no other goroutine ever runs in the namespace.
func (n *NS) Do(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		fd, err := unix.Open("/run/netns/"+n.Name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("netem: open namespace %s: %w", n.Name, err)
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			errc <- fmt.Errorf("netem: enter namespace %s: %w", n.Name, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// Listen opens a TCP listener inside the namespace.
func (n *NS) Listen(addr string) (l net.Listener, err error) {
	err = n.Do(func() error { l, err = net.Listen("tcp", addr); return err })
	return l, err
}

// Dial opens a TCP connection from inside the namespace.
func (n *NS) Dial(addr string) (c net.Conn, err error) {
	err = n.Do(func() error { c, err = net.Dial("tcp", addr); return err })
	return c, err
}

// DropRandom makes netfilter drop each packet entering or leaving iface
// with probability perMille/1000 (nftables numgen, counted).
func (n *NS) DropRandom(iface string, perMille int) {
	n.t.Helper()
	rules := fmt.Sprintf(`table inet vrlog_netem {
	chain in { type filter hook input priority 0; policy accept; iifname %[1]q numgen random mod 1000 < %[2]d counter drop; }
	chain out { type filter hook output priority 0; policy accept; oifname %[1]q numgen random mod 1000 < %[2]d counter drop; }
}
`, iface, perMille)
	cmd := n.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		n.t.Fatalf("nft in %s: %v: %s", n.Name, err, out)
	}
}

var counterRE = regexp.MustCompile(`counter packets (\d+) bytes \d+ drop`)

// Dropped is the number of packets DropRandom's rules dropped so far.
func (n *NS) Dropped() uint64 {
	n.t.Helper()
	out, err := n.Command("nft", "list", "table", "inet", "vrlog_netem").CombinedOutput()
	if err != nil {
		n.t.Fatalf("nft list in %s: %v: %s", n.Name, err, out)
	}
	var total uint64
	for _, m := range counterRE.FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseUint(string(m[1]), 10, 64)
		total += v
	}
	return total
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}
