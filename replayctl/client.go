package replayctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vrlog/vrlog/transport/zenoh"
)

var (
	// ErrNoReplay: no replay of that name answered within the timeout.
	ErrNoReplay = errors.New("replayctl: no replay answered")
	// ErrRefused: the replay answered that it cannot carry the command out.
	ErrRefused = errors.New("replayctl: the replay refused the command")
	// ErrSeveralReplays: more than one replay answered on one control
	// channel: each needs a name of its own.
	ErrSeveralReplays = errors.New("replayctl: several replays answered on one control channel")
)

// Send sends command to the replay name over sess and returns its status
// once the command took effect (a step: once its records are out). A
// command that does not parse is refused here, before anything is sent.
func Send(ctx context.Context, sess *zenoh.Session, name, command string, timeout time.Duration) (Status, error) {
	if err := CheckName(name); err != nil {
		return Status{}, err
	}
	if _, err := ParseCommand(command); err != nil {
		return Status{}, err
	}
	key := ControlKey(name)
	replies, err := sess.Get(ctx, key, []byte(command), timeout)
	if err != nil {
		return Status{}, fmt.Errorf("replayctl: query %s: %w", key, err)
	}
	var st Status
	answered := 0
	zenohErr := ""
	for _, r := range replies {
		switch {
		case r.Err && r.Encoding == ErrorEncoding:
			return Status{}, fmt.Errorf("%w: %s", ErrRefused, r.Payload)
		case r.Err: // zenoh's own, e.g. the query timed out
			zenohErr = string(r.Payload)
			continue
		}
		if err := json.Unmarshal(r.Payload, &st); err != nil || st.Schema != StatusSchema {
			return Status{}, fmt.Errorf("replayctl: %s answered something that is not a %s: %q", key, StatusSchema, r.Payload)
		}
		answered++
	}
	switch {
	case answered == 0 && zenohErr != "":
		return Status{}, fmt.Errorf("%w on %s within %v (zenoh: %s)", ErrNoReplay, key, timeout, zenohErr)
	case answered == 0:
		return Status{}, fmt.Errorf("%w on %s within %v (is it running, with the control channel %s, and reachable over zenoh?)", ErrNoReplay, key, timeout, name)
	case answered > 1:
		return st, fmt.Errorf("%w: %d on %s: give each its own control channel name", ErrSeveralReplays, answered, key)
	}
	return st, nil
}

// Running lists the replays that answer a status query on any control
// channel (vrlog/replay/*/control) within timeout, by name.
func Running(ctx context.Context, sess *zenoh.Session, timeout time.Duration) ([]Status, error) {
	key := ControlKey("*")
	replies, err := sess.Get(ctx, key, []byte("status"), timeout)
	if err != nil {
		return nil, fmt.Errorf("replayctl: query %s: %w", key, err)
	}
	var out []Status
	for _, r := range replies {
		var st Status
		if !r.Err && json.Unmarshal(r.Payload, &st) == nil && st.Schema == StatusSchema {
			out = append(out, st)
		}
	}
	return out, nil
}
