// Command mkstates writes a state log for the Python reader benchmark
// (bench/pyread.sh): -n real states (synth's 1 kHz robot circling: 200-byte
// codec payloads with four sensor stamps, receive jitter, a publisher id),
// stored as the recorder stores states by default (lz4), chunks sealed
// every second as the recorder's flush timer does.
//
//	go run ./bench/mkstates -o /var/tmp/states.vrlog -n 1000000
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

func main() {
	out := flag.String("o", "", "output log (overwritten)")
	n := flag.Int("n", 1_000_000, "states to write (1 kHz)")
	states := flag.String("states", "lz4", "state chunk compression: none, lz4 or zstd (zstd-1)")
	flag.Parse()
	if *out == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "mkstates: -o is required, -n must be at least 1")
		os.Exit(2)
	}
	c, err := synth.ParseStore(*states)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkstates: -states", err)
		os.Exit(2)
	}
	cfg := synth.Config{Robot: "r1", Start: time.Unix(1_764_446_400, 0), Duration: time.Duration(*n-1) * time.Millisecond,
		StateHz: 1000, Latency: 300 * time.Microsecond, Jitter: 100 * time.Microsecond, Seed: 1,
		StateStore: &c, SealEvery: time.Second}
	tr, err := synth.WriteFile(*out, cfg, logfmt.WriterOptions{FlushInterval: -1, Sync: logfmt.SyncNone, Overwrite: true})
	if err == nil && tr.States != uint64(*n) {
		err = fmt.Errorf("%d states written, want %d", tr.States, *n)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkstates:", err)
		os.Exit(1)
	}
}
