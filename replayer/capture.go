package replayer

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/recorder"
	"github.com/vrlog/vrlog/transport/clock"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// capture records the controller's response (--capture) with the
// recorder, in this process, on the replay's zenoh session and the same
// monotonic clock as the replay's schedule; the released trigger records
// are fed into the same log with their release stamps (logfmt.MetaTrigger).
type capture struct {
	patterns []string
	trigger  []bool
	meta     []map[string]string // the trigger channels' meta, by output
	outs     []output
	fed      chan recorder.Fed
	drained  chan struct{} // the feed handed everything to the recorder
	cancel   context.CancelFunc
	done     chan struct{}
	sum      *recorder.Summary
	err      error
}

// startCapture starts recording patterns (zenoh keys and iceoryx2
// services alike) into output and returns once the subscriptions are
// declared.
func startCapture(sess *zenoh.Session, outs []output, trigger []bool, patterns []string, output string, force bool, inputs []string,
	onSample func(*zenoh.Sample)) (*capture, error) {
	c := &capture{patterns: patterns, trigger: trigger, outs: outs, meta: make([]map[string]string, len(outs)),
		fed: make(chan recorder.Fed, 1024), drained: make(chan struct{}), done: make(chan struct{})}
	for i, o := range outs {
		if trigger[i] {
			m := maps.Clone(o.Meta)
			if m == nil {
				m = map[string]string{}
			}
			m[logfmt.MetaTrigger] = "1"
			c.meta[i] = m
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	started := make(chan struct{})
	cfg := recorder.Config{Output: output, Force: force, ZenohKeys: patterns, IceoryxServices: patterns, Session: sess,
		ProbeInterval: -1, Metadata: map[string]string{"tool": "vrlog replay --capture", "vrlog.replay.inputs": strings.Join(inputs, ", ")},
		OnStart: func() { close(started) }, Feed: c.feed, OnZenohSample: onSample}
	go func() {
		defer close(c.done)
		c.sum, c.err = recorder.Run(ctx, cfg)
	}()
	select {
	case <-started:
		return c, nil
	case <-c.done:
		cancel()
		if errors.Is(c.err, logfmt.ErrExists) || errors.Is(c.err, outfile.ErrLocked) {
			return nil, kinded(ErrOutput, c.err)
		}
		return nil, kindf(ErrOutput, "capture: %w", c.err)
	}
}

// feed hands the released records to the recorder until finish.
func (c *capture) feed(ctx context.Context, add func(recorder.Fed) bool) {
	defer close(c.drained)
	for {
		select {
		case f, ok := <-c.fed:
			if !ok || !add(f) {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// release books r, a record of output r.Channel released at mono (the
// schedule's clock, CLOCK_MONOTONIC) and wall: triggers only.
func (c *capture) release(r *player.Rec, mono, wall int64) {
	if !c.trigger[r.Channel] {
		return
	}
	o := c.outs[r.Channel]
	rec := logfmt.Record{RecvWallNs: wall, RecvMonoNs: mono, Header: slices.Clone(r.Header), Payload: slices.Clone(r.Payload),
		PublisherID: slices.Clone(r.SourceID), PublisherSN: r.SourceSN, HasPubSN: r.HasSourceSN}
	c.fed <- recorder.Fed{Name: o.Topic, Topic: o.Topic, Transport: o.Transport, Schema: o.Schema, Meta: c.meta[r.Channel], Record: rec}
}

// outcome writes the replay's outcome as the response log's last record.
func (c *capture) outcome(o *Outcome) {
	b, err := json.Marshal(o)
	if err != nil {
		return
	}
	c.fed <- recorder.Fed{Name: logfmt.OutcomeChannel, Topic: logfmt.OutcomeChannel, Transport: logfmt.TransportInternal,
		Schema: logfmt.OutcomeSchema, Record: logfmt.Record{RecvWallNs: clock.WallNow(), RecvMonoNs: clock.MonoNow(), Payload: b}}
}

// finish writes what was fed, stops recording and finishes the log.
func (c *capture) finish() (*recorder.Summary, error) {
	close(c.fed)
	<-c.drained
	c.cancel()
	<-c.done
	return c.sum, c.err
}

// missed lists the --capture patterns that captured nothing.
func (c *capture) missed() []string {
	var out []string
	for _, src := range c.patterns {
		p, err := keyexpr.Parse(src)
		if err != nil {
			continue
		}
		got := false
		for _, ch := range c.sum.Channels {
			got = got || (ch.Msgs > 0 && !c.isTrigger(ch.Name) && ch.Name != logfmt.OutcomeChannel && p.Match(ch.Name))
		}
		if !got {
			out = append(out, src)
		}
	}
	return out
}

func (c *capture) isTrigger(name string) bool {
	for i, o := range c.outs {
		if c.trigger[i] && o.Topic == name {
			return true
		}
	}
	return false
}

// CaptureReport is the capture's part of the report.
type CaptureReport struct {
	Output   string          `json:"output"`
	Patterns []string        `json:"patterns"`
	Channels []CapturedCount `json:"channels"`
	Missed   []string        `json:"missed"` // patterns that captured nothing
}

type CapturedCount struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Role      string `json:"role"` // "trigger" (released by the replay) or "response"
	Records   uint64 `json:"records"`
	Error     string `json:"error,omitempty"`
}

func (c *capture) report(output string) *CaptureReport {
	r := &CaptureReport{Output: output, Patterns: c.patterns, Channels: []CapturedCount{}, Missed: c.missed()}
	if r.Missed == nil {
		r.Missed = []string{}
	}
	for _, ch := range c.sum.Channels {
		if ch.Name == logfmt.OutcomeChannel {
			continue // the replay's own record of how it ended
		}
		role := "response"
		if c.isTrigger(ch.Name) {
			role = "trigger"
		}
		r.Channels = append(r.Channels, CapturedCount{Name: ch.Name, Transport: ch.Transport, Role: role, Records: ch.Msgs, Error: ch.Error})
	}
	return r
}
