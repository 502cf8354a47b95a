package player

import (
	"fmt"
	"time"
)

// Lockstep makes the replay wait for a controller: each record of a
// trigger channel is released, then nothing more is published until the
// controller answers (a value on Answers) or Timeout passes (a missed
// step). Records of other channels keep their place in the stream, so
// they stay in their recorded order relative to the triggers.
//
// The wait is on the schedule, not beside it: when the answer comes after
// the next record was due, the schedule moves so that the next record is
// due at the answer and the ones after keep their recorded gaps; an answer
// that comes in time changes nothing. So a controller that keeps up sees
// the original pacing, and one that does not is never run over: the log's
// clock waits for it. At rate max the next record goes out at the answer.
type Lockstep struct {
	// Trigger tells, by channel index (Options.Channels), which channels'
	// records wait for an answer.
	Trigger []bool
	// Answers delivers one value per answer the controller published
	// (senders should not block: a full channel loses nothing that
	// matters, one pending value is an answer). Values that arrived before
	// a trigger is released are discarded when it is.
	Answers <-chan struct{}
	// Timeout bounds each wait.
	Timeout time.Duration
}

func (l *Lockstep) validate(channels int) error {
	if l == nil {
		return nil
	}
	if len(l.Trigger) != channels || l.Answers == nil || l.Timeout <= 0 {
		return fmt.Errorf("player: lockstep needs a trigger flag per channel (%d, have %d), an answer channel and a timeout > 0", channels, len(l.Trigger))
	}
	return nil
}

func (r *run) trigger(ch int) bool {
	return r.o.Lockstep != nil && r.o.Lockstep.Trigger[ch]
}

// drainAnswers discards the answers that came before a record of channel
// ch is released, when ch is a trigger: they answer earlier records.
func (r *run) drainAnswers(ch int) {
	if !r.trigger(ch) {
		return
	}
	for {
		select {
		case <-r.o.Lockstep.Answers:
		default:
			return
		}
	}
}

// await holds the replay after a published record of a trigger channel ch
// until the answer or the timeout; commands are applied meanwhile (stop
// and seek end the wait).
func (r *run) await(ch int) {
	if !r.trigger(ch) {
		return
	}
	ls := r.o.Lockstep
	st := &r.stats[ch]
	r.waiting = true
	r.setStatus(func(s *Status) { s.Waiting = true })
	t := time.NewTimer(ls.Timeout)
	defer t.Stop()
	seeks := r.seeks
	answered, missed := false, false
wait:
	for {
		select {
		case <-ls.Answers:
			answered = true
			st.Answered++
			break wait
		case <-t.C:
			missed = true
			st.Missed++
			break wait
		case <-r.ctx.Done():
			break wait
		case c := <-r.ctl:
			r.apply(c)
			if r.stopped || r.seeks != seeks {
				break wait
			}
		}
	}
	r.waiting = false
	if answered || missed {
		r.held, r.holdAt = true, r.o.Now()
	}
	r.setStatus(func(s *Status) {
		s.Waiting = false
		if answered {
			s.Answered++
		}
		if missed {
			s.Missed++
		}
	})
}

// hold moves a deadline that falls before the last answer (or timeout)
// to it, re-anchoring the schedule there (see Lockstep).
func (r *run) hold(m *msg, deadline int64) int64 {
	if !r.held {
		return deadline
	}
	r.held = false
	if deadline >= r.holdAt {
		return deadline
	}
	r.anchorKey, r.anchorMono = m.e, r.holdAt
	r.sync()
	return r.holdAt
}
