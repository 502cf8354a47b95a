package player

import (
	"fmt"
	"slices"
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
//
// Pairing: an answer that names the trigger it answers (Answer.Tagged, the
// trigger record's Seq echoed by the controller) answers only that
// trigger: one naming another (an earlier trigger, answered after its
// timeout) is a late answer, reported to OnLate and never taken for the
// answer of the current one, so a single slow answer cannot shift the
// pairing of the rest; one naming a trigger already answered is a
// duplicate (reported to OnLate as one, never as late). An untagged
// answer answers whatever trigger waits: after a missed step, the late
// answer of the missed trigger may be taken for the next one's, and
// every later pairing be one step off (Step.Tagged tells them apart).
// Answers that arrived before a trigger is released are discarded when it
// is (tagged ones are reported late, or duplicate).
type Lockstep struct {
	// Trigger tells, by channel index (Options.Channels), which channels'
	// records wait for an answer.
	Trigger []bool
	// Answers delivers the controller's answers (senders should not block:
	// an untagged answer pending is an answer, so a full channel loses
	// nothing that matters for those).
	Answers <-chan Answer
	// Timeout bounds each wait.
	Timeout time.Duration
	// OnStep, if set, is told how each trigger's wait ended, from the
	// publishing goroutine, before the next record goes out.
	OnStep func(Step)
	// OnLate, if set, is told of each late or duplicate answer, from the
	// publishing goroutine.
	OnLate func(Late)
}

// Answer is one answer of the controller.
type Answer struct {
	Tag    uint64 // the Seq of the trigger record it answers, when Tagged
	Tagged bool
	At     int64 // when it was received, on Options.Now's clock
}

// Step is how one trigger's wait ended.
type Step struct {
	Channel  int
	Seq      uint64 // the trigger record's Seq (its payload's, 0 when unstamped)
	Released int64  // when it was published, on Options.Now's clock
	Answered bool   // false: the timeout passed (a missed step), or the wait was ended (Ended)
	Tagged   bool   // the answer named this trigger (an untagged one may be another's)
	Ended    bool   // stop, seek or cancellation ended the wait
}

// Late is an answer that named another trigger than the one waiting (or
// came for an unanswered trigger after the next was released), or, with
// Duplicate, one that named a trigger already answered.
type Late struct {
	Tag       uint64 // the trigger it names
	Current   uint64 // the trigger waiting, or the one just released
	At        int64  // when it was received
	Duplicate bool   // the trigger it names was answered already
}

// answeredRing is how many answered triggers are remembered to tell a
// duplicate answer from a late one.
const answeredRing = 64

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

// drainAnswers discards the answers that came before record m of channel
// ch is released, when ch is a trigger: they answer earlier records.
// Tagged ones for a trigger that went unanswered are late answers.
func (r *run) drainAnswers(ch int, seq uint64) {
	if !r.trigger(ch) {
		return
	}
	for {
		select {
		case a := <-r.o.Lockstep.Answers:
			if a.Tagged {
				r.late(a, seq)
			}
		default:
			return
		}
	}
}

// late reports a tagged answer that did not end a wait: late, or a
// duplicate of one that did.
func (r *run) late(a Answer, current uint64) {
	dup := slices.Contains(r.answeredTags, a.Tag)
	if dup {
		r.dupN++
	} else {
		r.lateN++
	}
	if f := r.o.Lockstep.OnLate; f != nil {
		f(Late{Tag: a.Tag, Current: current, At: a.At, Duplicate: dup})
	}
}

// noteAnswered remembers that the trigger seq was answered.
func (r *run) noteAnswered(seq uint64) {
	if len(r.answeredTags) < answeredRing {
		r.answeredTags = append(r.answeredTags, seq)
		return
	}
	r.answeredTags[r.answeredNext] = seq
	r.answeredNext = (r.answeredNext + 1) % answeredRing
}

// await holds the replay after a published record of a trigger channel ch
// (seq its Seq) until its answer or the timeout; commands are applied
// meanwhile (stop and seek end the wait).
func (r *run) await(ch int, seq uint64, released int64) {
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
	answered, missed, tagged := false, false, false
wait:
	for {
		select {
		case a := <-ls.Answers:
			if a.Tagged && a.Tag != seq {
				r.late(a, seq)
				continue
			}
			answered, tagged = true, a.Tagged
			st.Answered++
			r.noteAnswered(seq)
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
	r.cutWait = !answered && !missed && (r.stopped || r.ctx.Err() != nil)
	if answered || missed {
		r.held, r.holdAt = true, r.o.Now()
	}
	late := r.lateN
	r.setStatus(func(s *Status) {
		s.Waiting = false
		s.Late = late
		if answered {
			s.Answered++
		}
		if missed {
			s.Missed++
		}
	})
	if ls.OnStep != nil {
		ls.OnStep(Step{Channel: ch, Seq: seq, Released: released, Answered: answered, Tagged: tagged, Ended: !answered && !missed})
	}
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
