// Package analyzer is vrlog's offline timing audit: it reads one or more
// logs, feeds every channel's samples through sampler, pairs camera frames
// with robot states by capture time, estimates the recorder/simulator clock
// offset from the stored clock-sync probes, and produces a Report that the
// analyze command prints as text, JSON, CSV, JUnit or HTML and checks
// against thresholds.
//
// By default it reads only record metadata (the capture stamps the recorder
// decoded at record time), so a frame-heavy log is audited without
// decompressing a pixel; Options.FullDecode instead decodes every payload
// with epoch 0, and the two paths must agree. Either way the session epoch is
// the first state sample's t_ns, and elapsed is (t_ns - epoch) / 1e9, as the
// SDK reports it.
//
// analyzer builds without cgo: it never touches a transport.
package analyzer
