package replayctl

import (
	"errors"
	"testing"
	"time"

	"github.com/vrlog/vrlog/player"
)

func TestParseCommand(t *testing.T) {
	for in, want := range map[string]player.Request{
		"status":      {Op: player.OpStatus},
		" pause ":     {Op: player.OpPause},
		"resume":      {Op: player.OpResume},
		"play":        {Op: player.OpResume},
		"stop":        {Op: player.OpStop},
		"step":        {Op: player.OpStep, N: 1},
		"step 25":     {Op: player.OpStep, N: 25},
		"seek 12.5":   {Op: player.OpSeek, At: 12500 * time.Millisecond},
		"seek 1m30s":  {Op: player.OpSeek, At: 90 * time.Second},
		"seek 0":      {Op: player.OpSeek},
		"rate 0.25":   {Op: player.OpRate, Rate: 0.25},
		"rate\t2":     {Op: player.OpRate, Rate: 2},
		"step\n3\n":   {Op: player.OpStep, N: 3},
		"seek 300ms ": {Op: player.OpSeek, At: 300 * time.Millisecond},
	} {
		got, err := ParseCommand(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "jump", "step 0", "step -2", "step x", "seek", "seek -1", "seek soon", "rate", "rate 0",
		"rate -1", "rate NaN", "pause now", "step 1 2", "status 1"} {
		if _, err := ParseCommand(in); !errors.Is(err, ErrCommand) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestParseParameters(t *testing.T) {
	for in, want := range map[string]player.Request{
		"pause": {Op: player.OpPause}, "step": {Op: player.OpStep, N: 1}, "step=4": {Op: player.OpStep, N: 4},
		"seek=2.5": {Op: player.OpSeek, At: 2500 * time.Millisecond}, "rate=3": {Op: player.OpRate, Rate: 3}, "status": {Op: player.OpStatus},
	} {
		if got, err := ParseParameters(in); err != nil || got != want {
			t.Errorf("%q: %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "step=1;rate=2", "seek", "pause=1", "rate=x"} {
		if _, err := ParseParameters(in); !errors.Is(err, ErrCommand) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"default", "ci-1", "r1_replay"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a/b", "*", "**", "x$*", "a?b"} {
		if err := CheckName(bad); !errors.Is(err, ErrCommand) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestStatusOf(t *testing.T) {
	st := player.Status{Position: 1500 * time.Millisecond, Pass: 1, Sent: 10, Steps: 2, Rate: 2, Paused: true, Answered: 3, Missed: 1}
	s := StatusOf("ci", st, 30*time.Second)
	if s.State != StatePaused || s.PositionS != 1.5 || s.PositionNs != 1.5e9 || s.SpanS != 30 || s.Schema != StatusSchema {
		t.Fatalf("%+v", s)
	}
	if want := "ci: paused at 1.500 s of 30.000 s, pass 1, rate 2×, 10 sent (2 by ctl step), lockstep 3 answered, 1 missed"; s.String() != want {
		t.Fatalf("%q", s.String())
	}
	for st, want := range map[player.Status]string{{Starting: true}: StateWaiting, {Waiting: true, Paused: true}: StatePaused, {Waiting: true}: StateHeld,
		{Finished: true, Paused: true}: StateFinished, {}: StatePlaying} {
		if got := StatusOf("x", st, 0).State; got != want {
			t.Errorf("%+v: %s, want %s", st, got, want)
		}
	}
}
