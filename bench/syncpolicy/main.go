//go:build linux

// Command syncpolicy measures what a logfmt sync policy costs, and what
// it loses when the power is cut, at a recorder's load: 1 kHz states (200
// bytes, zstd) and 1080p30 camera frames (6.2 MB, stored raw, written
// with WriteOwned from a pool of frame buffers, as the recorder does),
// paced in real time by one goroutine.
//
// Cost (one JSON line on stdout):
//
//	syncpolicy -policy interval -sync-interval 100ms -dir DIR -duration 20s
//
// Power cut: after -cut-after the filesystem holding DIR is shut down
// with EXT4_IOC_SHUTDOWN and no log flush (xfstests' "godown": dirty
// pages and the uncommitted journal are discarded, as at a power loss);
// the process then exits without closing the log. After the caller has
// unmounted and remounted the filesystem, -read says what survived:
//
//	syncpolicy -policy close -dir MNT -duration 40s -cut-after 20s -state /tmp/s.json
//	umount MNT; mount ... MNT
//	syncpolicy -read MNT/sync.vrlog -state /tmp/s.json
//
// bench/powerloss.sh runs both, interleaved over the policies.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vrlog/vrlog/logfmt"
)

const (
	stateRate  = 1000
	frameRate  = 30
	frameBytes = 1920 * 1080 * 3
	stateBytes = 200
	frameBufs  = 8 // frame buffers in the pool; a frame due while all are in the writer is dropped
	// ext4IocShutdown is EXT4_IOC_SHUTDOWN, _IOR('X', 125, __u32);
	// ext4GoingNoLogFlush shuts down without writing dirty data or the log.
	ext4IocShutdown     = 0x8004587d
	ext4GoingNoLogFlush = 2
)

// cost is one run's figures.
type cost struct {
	Policy        string  `json:"policy"`
	SyncInterval  string  `json:"sync_interval,omitempty"`
	DurationS     float64 `json:"duration_s"`
	States        int     `json:"states"`
	Frames        int     `json:"frames"`
	FramesDropped int     `json:"frames_dropped"` // due while every frame buffer was still in the writer
	BytesWritten  int64   `json:"bytes_written"`
	Syncs         uint64  `json:"syncs"`
	WriteP50us    float64 `json:"write_p50_us"` // time inside Write/WriteOwned
	WriteP99us    float64 `json:"write_p99_us"`
	WriteMaxMs    float64 `json:"write_max_ms"`
	LateMaxMs     float64 `json:"late_max_ms"` // worst lag of a record behind its schedule
	CPUs          float64 `json:"cpu_s"`       // user+system CPU of the process
	CloseMs       float64 `json:"close_ms"`    // Close: footer, final fdatasync
}

// cutState is what the writer had accepted when the power was cut.
type cutState struct {
	Policy       string `json:"policy"`
	SyncInterval string `json:"sync_interval,omitempty"`
	CutAtNs      int64  `json:"cut_at_ns"` // RecvMonoNs scale: ns since the start of writing
	States       int    `json:"states"`
	Frames       int    `json:"frames"`
	Syncs        uint64 `json:"syncs"`
}

// survived is what -read finds after the remount.
type survived struct {
	cutState
	Opened      bool    `json:"opened"`
	Error       string  `json:"error,omitempty"`
	FileBytes   int64   `json:"file_bytes"`
	StatesRead  int     `json:"states_read"`
	FramesRead  int     `json:"frames_read"`
	StatesLost  int     `json:"states_lost"`
	FramesLost  int     `json:"frames_lost"`
	LostSeconds float64 `json:"lost_s"` // cut time minus the last record that survived
	TornTail    bool    `json:"torn_tail"`
}

func main() {
	policy := flag.String("policy", "close", "sync policy: close, interval, flush or none")
	syncEvery := flag.Duration("sync-interval", time.Second, "with -policy interval: the fdatasync period")
	dir := flag.String("dir", ".", "directory of the log (sync.vrlog)")
	duration := flag.Duration("duration", 20*time.Second, "how long to write")
	cutAfter := flag.Duration("cut-after", 0, "shut the filesystem down (power cut) after this long; 0: no cut")
	statePath := flag.String("state", "", "with -cut-after: where to write what had been accepted (another filesystem)")
	read := flag.String("read", "", "read this log after a cut (with -state) and print what survived")
	flag.Parse()
	var err error
	if *read != "" {
		err = readBack(*read, *statePath)
	} else {
		err = write(*policy, *syncEvery, filepath.Join(*dir, "sync.vrlog"), *duration, *cutAfter, *statePath)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "syncpolicy:", err)
		os.Exit(1)
	}
}

func parsePolicy(s string) (logfmt.SyncPolicy, error) {
	switch s {
	case "close":
		return logfmt.SyncOnClose, nil
	case "interval":
		return logfmt.SyncInterval, nil
	case "flush":
		return logfmt.SyncOnFlush, nil
	case "none":
		return logfmt.SyncNone, nil
	}
	return 0, fmt.Errorf("unknown policy %q", s)
}

func write(policy string, syncEvery time.Duration, path string, duration, cutAfter time.Duration, statePath string) error {
	pol, err := parsePolicy(policy)
	if err != nil {
		return err
	}
	w, err := logfmt.Create(path, logfmt.WriterOptions{Sync: pol, SyncInterval: syncEvery, Overwrite: true})
	if err != nil {
		return err
	}
	st, err := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state",
		Schema: "vrsdk.State/1", Compression: logfmt.Compression{Kind: logfmt.CompressionZstd, Level: 1}})
	if err != nil {
		return err
	}
	cam, err := w.AddChannel(logfmt.Channel{Name: "vr/r1/cam0", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/cam0", Schema: "vrsdk.Frame/1"})
	if err != nil {
		return err
	}
	pool := make(chan []byte, frameBufs)
	rng := rand.New(rand.NewPCG(1, 2))
	for range frameBufs {
		b := make([]byte, frameBytes)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		pool <- b
	}
	state := make([]byte, stateBytes)
	c := cost{Policy: policy}
	if pol == logfmt.SyncInterval {
		c.SyncInterval = syncEvery.String()
	}
	lat := make([]time.Duration, 0, int(duration.Seconds()+1)*(stateRate+frameRate))
	var late time.Duration
	start := time.Now()
	cpu0 := cpuTime()
	lastFrame := -1
	for i := 0; ; i++ {
		due := time.Duration(i) * time.Second / stateRate
		if due >= duration {
			break
		}
		if cutAfter > 0 && due >= cutAfter {
			return cut(filepath.Dir(path), statePath, cutState{Policy: policy, SyncInterval: c.SyncInterval,
				CutAtNs: int64(time.Since(start)), States: c.States, Frames: c.Frames, Syncs: w.Stats().Syncs})
		}
		if d := time.Until(start.Add(due)); d > 0 {
			time.Sleep(d)
		}
		late = max(late, time.Since(start.Add(due)))
		now := time.Since(start)
		r := logfmt.Record{Channel: st, RecvMonoNs: int64(now), RecvWallNs: time.Now().UnixNano(), HasStamp: true,
			CaptureNs: time.Now().UnixNano(), Seq: uint64(i), Payload: state}
		state[0], state[1] = byte(i), byte(i>>8)
		t0 := time.Now()
		if err := w.Write(&r); err != nil {
			return err
		}
		lat = append(lat, time.Since(t0))
		c.States++
		if f := i * frameRate / stateRate; f != lastFrame {
			lastFrame = f
			select {
			case b := <-pool:
				fr := logfmt.Record{Channel: cam, RecvMonoNs: int64(time.Since(start)), RecvWallNs: time.Now().UnixNano(), HasStamp: true,
					CaptureNs: time.Now().UnixNano(), Seq: uint64(f), Payload: b}
				t0 := time.Now()
				if err := w.WriteOwned(&fr, func() { pool <- b }); err != nil {
					return err
				}
				lat = append(lat, time.Since(t0))
				c.Frames++
			default:
				c.FramesDropped++
			}
		}
	}
	t0 := time.Now()
	if err := w.Close(); err != nil {
		return err
	}
	c.CloseMs = ms(time.Since(t0))
	c.DurationS = duration.Seconds()
	c.CPUs = cpuTime() - cpu0
	s := w.Stats()
	c.BytesWritten, c.Syncs = s.BytesWritten, s.Syncs
	slices.Sort(lat)
	c.WriteP50us = float64(lat[len(lat)/2]) / 1e3
	c.WriteP99us = float64(lat[len(lat)*99/100]) / 1e3
	c.WriteMaxMs = ms(lat[len(lat)-1])
	c.LateMaxMs = ms(late)
	return json.NewEncoder(os.Stdout).Encode(&c)
}

// cut shuts down the filesystem holding dir as a power cut would, saves
// what the writer had accepted, and exits without closing the log.
func cut(dir, statePath string, s cutState) error {
	if statePath == "" {
		return fmt.Errorf("-cut-after needs -state")
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := unix.IoctlSetPointerInt(int(d.Fd()), ext4IocShutdown, ext4GoingNoLogFlush); err != nil {
		return fmt.Errorf("EXT4_IOC_SHUTDOWN on %s: %w", dir, err)
	}
	b, err := json.Marshal(&s)
	if err != nil {
		return err
	}
	if err := os.WriteFile(statePath, b, 0o644); err != nil {
		return err
	}
	os.Exit(0) // the power is off: no Close
	return nil
}

func readBack(path, statePath string) error {
	var out survived
	b, err := os.ReadFile(statePath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &out.cutState); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil {
		out.FileBytes = st.Size()
	}
	var last int64
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err == nil {
		out.Opened = true
		out.TornTail = r.TornTail() != nil
		it := r.Records(logfmt.Filter{MetaOnly: true})
		for it.Next() {
			rec := it.Record()
			if rec.Channel == 1 {
				out.StatesRead++
			} else {
				out.FramesRead++
			}
			last = max(last, rec.RecvMonoNs)
		}
		err = it.Err()
		r.Close()
	}
	if err != nil {
		out.Error = err.Error()
	}
	out.StatesLost, out.FramesLost = out.States-out.StatesRead, out.Frames-out.FramesRead
	out.LostSeconds = float64(out.CutAtNs-last) / 1e9
	return json.NewEncoder(os.Stdout).Encode(&out)
}

func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
