// Package replayctl is a replay's control channel over zenoh
// (docs/replay.md, "Remote control"): a queryable on
// vrlog/replay/NAME/control takes text commands (pause, resume, step [N],
// seek T, rate R, status, stop) from any zenoh client and answers each,
// once it took effect, with the replay's status as JSON; the same status
// is published on vrlog/replay/NAME/status whenever it changes. Server is
// the replay's side, Send the client's (`vrlog ctl`).
package replayctl

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/player"
)

// StatusSchema names the JSON layout of Status.
const StatusSchema = "vrlog.replay.status/1"

// ErrorEncoding marks a replay's error replies (a refused command), apart
// from the error replies zenoh itself sends (a query that timed out).
const ErrorEncoding = "text/plain;vrlog.replay.error"

// ErrCommand: a command that does not parse.
var ErrCommand = errors.New("replayctl: bad command")

// ControlKey and StatusKey are a replay's zenoh keys.
func ControlKey(name string) string { return "vrlog/replay/" + name + "/control" }
func StatusKey(name string) string  { return "vrlog/replay/" + name + "/status" }

// CheckName validates a replay's name: one level of a key, no wildcard.
func CheckName(name string) error {
	if !keyexpr.IsName(name) {
		return fmt.Errorf("%w: replay name %q: want one key level without wildcards (e.g. ci-1)", ErrCommand, name)
	}
	return nil
}

// Commands is the command grammar, for help texts.
const Commands = `pause | resume | step [N] | seek T | rate R | status | stop
   (T: seconds from the replay window's start, or a duration such as 1m30s)`

// ParseCommand parses one command: a word and at most one argument,
// separated by spaces ("step 5", "seek 12.5", "rate 2").
func ParseCommand(s string) (player.Request, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return player.Request{}, fmt.Errorf("%w: empty; want %s", ErrCommand, Commands)
	}
	arg := ""
	if len(f) == 2 {
		arg = f[1]
	}
	if len(f) > 2 {
		return player.Request{}, fmt.Errorf("%w %q: at most one argument", ErrCommand, s)
	}
	return request(f[0], arg, len(f) == 2)
}

// ParseParameters parses a command given as a selector's parameters, one
// key with an optional value ("step=5", "seek=12.5", "pause"), for zenoh
// clients that send a query without payload.
func ParseParameters(p string) (player.Request, error) {
	if p == "" || strings.ContainsAny(p, ";&") {
		return player.Request{}, fmt.Errorf("%w: parameters %q: want one command, e.g. step=5", ErrCommand, p)
	}
	word, arg, has := strings.Cut(p, "=")
	return request(word, arg, has)
}

func request(word, arg string, has bool) (player.Request, error) {
	bad := func(why string) (player.Request, error) {
		return player.Request{}, fmt.Errorf("%w %q: %s", ErrCommand, strings.TrimSpace(word+" "+arg), why)
	}
	r := player.Request{}
	switch word {
	case "status":
		r.Op = player.OpStatus
	case "pause":
		r.Op = player.OpPause
	case "resume", "play":
		r.Op = player.OpResume
	case "stop":
		r.Op = player.OpStop
	case "step":
		r.Op, r.N = player.OpStep, 1
		if has {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 {
				return bad("want a number of records >= 1")
			}
			r.N = n
		}
		return r, nil
	case "seek":
		if !has {
			return bad("want a time: seconds from the window's start, or a duration")
		}
		d, err := player.ParseDuration(arg)
		if err != nil || d < 0 {
			return bad("want a time >= 0: seconds from the window's start, or a duration")
		}
		r.Op, r.At = player.OpSeek, d
		return r, nil
	case "rate":
		f, err := strconv.ParseFloat(arg, 64)
		if !has || err != nil || !(f > 0) || f > 1e9 {
			return bad("want a factor > 0")
		}
		r.Op, r.Rate = player.OpRate, f
		return r, nil
	default:
		return bad("unknown; want " + Commands)
	}
	if has {
		return bad("takes no argument")
	}
	return r, nil
}

// Replay states, Status.State.
const (
	StateWaiting  = "waiting-for-subscribers" // --wait-for-subscribers has not seen them yet
	StatePaused   = "paused"
	StatePlaying  = "playing"
	StateHeld     = "lockstep-wait" // playing, and a lockstep record waits for the controller's answer
	StateFinished = "finished"
)

// Status is a replay's status as the control channel reports it.
type Status struct {
	Schema     string  `json:"schema"`
	Name       string  `json:"name"`
	State      string  `json:"state"`
	PositionS  float64 `json:"position_s"`  // log time of the last published record (or a seek's target) from the window's start
	PositionNs int64   `json:"position_ns"` // the same in ns
	SpanS      float64 `json:"span_s"`      // the window's length
	Pass       int     `json:"pass"`        // loop pass, from 0
	Rate       float64 `json:"rate"`
	RateMax    bool    `json:"rate_max"`
	Sent       uint64  `json:"sent"`    // records published
	Steps      uint64  `json:"steps"`   // of which by `vrlog ctl step` while paused (lockstep triggers are answered/missed)
	Skipped    uint64  `json:"skipped"` // records not published: drop and outage faults
	Answered   uint64  `json:"answered"`
	Missed     uint64  `json:"missed"` // lockstep: trigger records whose answer timed out
	// LockstepWait: a trigger record waits for the controller's answer,
	// whatever the state (a replay paused during a wait is paused, and
	// goes on once resumed and answered).
	LockstepWait bool `json:"lockstep_wait"`
}

// StatusOf renders a player's status.
func StatusOf(name string, st player.Status, span time.Duration) Status {
	s := Status{Schema: StatusSchema, Name: name, PositionS: st.Position.Seconds(), PositionNs: int64(st.Position),
		SpanS: span.Seconds(), Pass: st.Pass, Rate: st.Rate, RateMax: st.RateMax, Sent: st.Sent, Steps: st.Steps,
		Skipped: st.Skipped, Answered: st.Answered, Missed: st.Missed, LockstepWait: st.Waiting && !st.Finished}
	switch {
	case st.Finished:
		s.State = StateFinished
	case st.Starting:
		s.State = StateWaiting
	case st.Paused: // a pause asked for is what the replay is in, waiting or not
		s.State = StatePaused
	case st.Waiting:
		s.State = StateHeld
	default:
		s.State = StatePlaying
	}
	return s
}

// String is the status on one line, for people.
func (s Status) String() string {
	rate := strconv.FormatFloat(s.Rate, 'g', -1, 64) + "×"
	if s.RateMax {
		rate = "max"
	}
	state := s.State
	if s.LockstepWait && s.State != StateHeld {
		state += " (a lockstep record waits for its answer)"
	}
	line := fmt.Sprintf("%s: %s at %.3f s of %.3f s, pass %d, rate %s, %d sent (%d by ctl step)", s.Name, state, s.PositionS, s.SpanS,
		s.Pass, rate, s.Sent, s.Steps)
	if s.Answered+s.Missed > 0 {
		line += fmt.Sprintf(", lockstep %d answered, %d missed", s.Answered, s.Missed)
	}
	if s.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped by faults", s.Skipped)
	}
	return line
}
