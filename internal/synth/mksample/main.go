// Command mksample writes the bundled sample log, testdata/sample.vrlog: a
// synthetic 30 s session with known faults (synth.Default), reproducible
// byte for byte. Regenerate with:
//
//	go run ./internal/synth/mksample -o testdata/sample.vrlog
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
	out := flag.String("o", "testdata/sample.vrlog", "output file")
	flag.Parse()
	cfg := synth.Default()
	none := logfmt.Compression{Kind: logfmt.CompressionNone}
	tr, err := synth.WriteFile(*out, cfg, logfmt.WriterOptions{
		Overwrite: true, CreatedAt: cfg.Start.Add(cfg.Duration + time.Second), Concurrency: 1,
		MetaCompression: &none, FlushInterval: -1, ChunkSize: 16 << 10,
		Metadata: map[string]string{"note": "synthetic sample session: state seq gaps, one frame gap, a simulator restart (elapsed froze at 5.84 s, resumed at 21.77 s), stray payloads", "tool": "vrlog mksample"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mksample:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %+v\n", *out, tr)
}
