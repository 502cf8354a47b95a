package logfmt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const childEnv = "VRLOG_LOGFMT_CHILD_WRITER"

// childWriter writes records forever, flushing every 50 records and
// reporting on stdout how many records are flushed, until it is killed.
func childWriter(path string) {
	w, err := Create(path, WriterOptions{ChunkSize: 8 << 10, FlushInterval: 20 * time.Millisecond, CreatedAt: fixedTime})
	if err != nil {
		fmt.Println("error", err)
		return
	}
	id, _ := w.AddChannel(Channel{Name: "state", Transport: TransportZenoh, Compression: zstd1})
	cam, _ := w.AddChannel(Channel{Name: "cam", Transport: TransportIceoryx2})
	buf := make([]byte, 0, 200)
	frame := frameLike(512<<10, 1)
	for i := 0; ; i++ {
		r := Record{Channel: id, RecvMonoNs: int64(i) * 1000, RecvWallNs: 1.7e18 + int64(i)*1000, HasStamp: true, Seq: uint64(i), Payload: stateLike(buf, uint64(i), int64(i))}
		if i%100 == 0 {
			r.Channel, r.Payload = cam, frame // big uncompressed writes widen the window for a torn chunk
		}
		if err := w.Write(&r); err != nil {
			fmt.Println("error", err)
			return
		}
		if i%50 == 49 {
			if err := w.Flush(); err != nil {
				fmt.Println("error", err)
				return
			}
			fmt.Println("flushed", i+1)
		}
	}
}

// TestKill9 runs a writer in a child process, kills it with SIGKILL in
// the middle of writing, and checks that the file opens, recovers, and
// holds every flushed record in order.
func TestKill9(t *testing.T) {
	path := tempPath(t, "killed.vrlog")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	flushed := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "flushed" {
			flushed, _ = strconv.Atoi(f[1])
			if flushed >= 5000 {
				break
			}
			continue
		}
		t.Fatalf("child: %s", sc.Text())
	}
	time.Sleep(time.Duration(time.Now().UnixNano()%3000) * time.Microsecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, out)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child exit: %v", err)
	}
	r, err := Open(path, ReaderOptions{})
	if err != nil {
		t.Fatalf("open killed log: %v", err)
	}
	if r.Indexed() {
		t.Fatalf("killed log has a footer")
	}
	n := checkSeq(t, r)
	r.Close()
	if n < flushed {
		t.Fatalf("read %d records, %d were flushed", n, flushed)
	}
	dst := path + ".recovered"
	rep, err := Recover(context.Background(), path, dst, RecoverOptions{})
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	if len(rep.Dropped) != 0 {
		t.Fatalf("recover dropped %v", rep.Dropped)
	}
	r, err = Open(dst, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Indexed() || checkSeq(t, r) != n {
		t.Fatalf("recovered copy differs")
	}
	t.Logf("killed after %d flushed records; %d readable; torn tail: %v", flushed, n, rep.TornTail)
}

func checkSeq(t *testing.T, r *Reader) int {
	t.Helper()
	it := r.Records(Filter{MetaOnly: true})
	n := 0
	for it.Next() {
		if it.Record().Seq != uint64(n) {
			t.Fatalf("record %d has seq %d", n, it.Record().Seq)
		}
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
