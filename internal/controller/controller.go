// Package controller is the bundled example controller under test (`vrlog
// controller`): a PD loop on a robot's state, over zenoh, that publishes
// one command for each state it processes, optionally after a processing
// delay, with the state's seq in the attachment ("vrlog.seq=N",
// codec.AnswerTag) so that a lockstep replay pairs each command with its
// state even when one comes late. It is what replay's test-fixture
// examples and tests drive.
//
// It is deterministic in the states it processes: each command depends
// only on the states processed before it (the PD law and a first-order
// smoothing of its output, which carries every processed state into the
// commands after it). Like a real-time controller, it processes the newest
// state it has: a state that arrived while it was still busy is superseded
// by a newer one and gets no command. So in an open-loop replay that
// outruns it, which states it answers depends on the machine's load; in a
// lockstep replay (replay --lockstep on its command key) it answers every
// state, and two runs give the same commands.
package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Config is the controller's setting.
type Config struct {
	StateKey   string // subscribed: vrsdk.State/1 samples
	CommandKey string // published: Command
	Target     codec.Vec3
	Kp, Kd     float64
	// Smooth is the output filter's weight of the previous command, in
	// [0, 1): force = Smooth·previous + (1-Smooth)·PD.
	Smooth float64
	// Delay is the processing time added before each command.
	Delay time.Duration
}

// Stats count what the controller did.
type Stats struct {
	States      uint64 // valid states received
	Superseded  uint64 // of which replaced by a newer one before processing
	Undecodable uint64 // samples on StateKey that are not states
	Commands    uint64
}

// Law is the control law: PD on position (the derivative from the
// state's velocity), then the output filter. prev is the previous command.
func (c *Config) Law(s *codec.State, prev codec.Vec3) codec.Vec3 {
	pd := func(target, pos, vel float64) float64 { return c.Kp*(target-pos) - c.Kd*vel }
	f := codec.Vec3{X: pd(c.Target.X, s.Position.X, s.LinearVelocity.X), Y: pd(c.Target.Y, s.Position.Y, s.LinearVelocity.Y),
		Z: pd(c.Target.Z, s.Position.Z, s.LinearVelocity.Z)}
	a := c.Smooth
	return codec.Vec3{X: a*prev.X + (1-a)*f.X, Y: a*prev.Y + (1-a)*f.Y, Z: a*prev.Z + (1-a)*f.Z}
}

// Run controls until ctx ends; st is valid either way.
func Run(ctx context.Context, sess *zenoh.Session, cfg Config) (st Stats, err error) {
	if !(cfg.Smooth >= 0 && cfg.Smooth < 1) || cfg.Delay < 0 {
		return st, fmt.Errorf("controller: smooth %v must be in [0, 1) and delay %v >= 0", cfg.Smooth, cfg.Delay)
	}
	pub, err := sess.Publisher(cfg.CommandKey, zenoh.PublisherOptions{Encoding: "application/octet-stream", Block: true, Express: true})
	if err != nil {
		return st, fmt.Errorf("controller: publisher %s: %w", cfg.CommandKey, err)
	}
	defer pub.Close()
	sub, err := sess.Subscribe(cfg.StateKey, zenoh.SubscriberOptions{})
	if err != nil {
		return st, fmt.Errorf("controller: subscribe %s: %w", cfg.StateKey, err)
	}
	defer sub.Close()
	// Last, once it is subscribed and ready: the liveliness token on the
	// answer key says the controller is there (replay --wait-for-controller;
	// a recorder of the states declares none).
	token, err := sess.DeclareToken(cfg.CommandKey)
	if err != nil {
		return st, fmt.Errorf("controller: liveliness token %s: %w", cfg.CommandKey, err)
	}
	defer token.Close()
	var buf []zenoh.Sample
	var state codec.State
	var force codec.Vec3
	var out, tag []byte
	for {
		if buf, err = sub.Receive(ctx, buf[:0]); err != nil {
			if errors.Is(err, ctx.Err()) {
				err = nil
			}
			return st, err
		}
		n := 0
		for i := len(buf) - 1; i >= 0; i-- { // the newest valid state wins
			if _, _, err := codec.StateStamp(buf[i].Payload); err != nil {
				st.Undecodable++
				continue
			}
			if n++; n == 1 {
				codec.DecodeStateInto(&state, buf[i].Payload, 0)
			}
		}
		if n == 0 {
			continue
		}
		st.States += uint64(n)
		st.Superseded += uint64(n - 1)
		if cfg.Delay > 0 {
			select {
			case <-time.After(cfg.Delay):
			case <-ctx.Done():
				return st, nil
			}
		}
		force = cfg.Law(&state, force)
		out = AppendCommand(out[:0], Command{Seq: st.Commands, StateSeq: state.Seq, StateTNs: state.TNs, Force: force})
		tag = codec.AppendAnswerTag(tag[:0], state.Seq) // names the state it answers (replay --lockstep pairs by it)
		if err := pub.Put(out, tag); err != nil {
			return st, fmt.Errorf("controller: put %s: %w", cfg.CommandKey, err)
		}
		st.Commands++
	}
}
