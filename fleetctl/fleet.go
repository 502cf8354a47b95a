// Package fleetctl drives several hosts' recorders as one recording
// (vrlog fleet): it finds them and checks that each is idle, starts them
// with one request each, all sent at once, follows their status, stops
// them the same way (asking again those a partition keeps from
// answering), answers a stop query of its own (vrlog/fleet/NAME/stop)
// so that a recording can be ended from anywhere, and says how far
// apart their recordings began on the simulator's clock once their logs
// are merged (StartSkew). The recorders' control plane is recctl's;
// fetching their logs is filexfer's; who may do any of it is decided
// by zenoh's access control (docs/deployment.md).
package fleetctl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/vrlog/vrlog/recctl"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Role is what a recorder is to the fleet's recording.
type Role string

const (
	// Ready: idle and answering; the start goes to it.
	Ready Role = "ready"
	// LeftOut: not part of the recording (it did not answer before the
	// start, was not idle, refused the start, or never recorded).
	LeftOut Role = "left-out"
	// Recording: it started (its answer said so, or its status since).
	Recording Role = "recording"
	// Unanswered: its start went unanswered; it may be recording. Its
	// status decides, or the stop.
	Unanswered Role = "unanswered"
	// Stopped: it finished its recording's file.
	Stopped Role = "stopped"
	// NotStopped: it did not answer the stop within the patience: as far
	// as the fleet knows it still records.
	NotStopped Role = "not-stopped"
)

// Member is one recorder as the fleet knows it.
type Member struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Why says why a recorder is left out or not stopped, or what its
	// start or stop met on the way (an answer that came late).
	Why string `json:"why,omitempty"`
	// Silent: the recorder did not answer (as opposed to refusing); a
	// partition, a recorder gone, or access control.
	Silent bool `json:"silent,omitempty"`
	// Left says in a few words why a LeftOut recorder is: "not found"
	// (no liveliness token of its name), "no answer", "busy: recording",
	// "snapshot mode", "refused its start", "did not record".
	Left string `json:"left,omitempty"`
	// File is a file of its recording, absolute on its host: the one
	// the start opened, or the one its status showed first.
	File string `json:"file,omitempty"`
	// Finished is the last file of the recording, as the stop finished it.
	Finished *recctl.FileReport `json:"finished,omitempty"`
	// Status is its last status; LastAnswer when it last answered
	// anything.
	Status     *recctl.StatusReport `json:"status,omitempty"`
	LastAnswer time.Time            `json:"last_answer"`
}

// Recorded reports whether m holds files of the recording to collect.
func (m *Member) Recorded() bool { return m.Role == Stopped && m.File != "" }

// ErrNone: there is no recorder to start.
var ErrNone = errors.New("fleetctl: no recorder")

// Fleet is the recorders of one recording.
type Fleet struct {
	sess    *zenoh.Session
	timeout time.Duration

	mu      sync.Mutex
	members []*Member
}

// Find asks the recorders names (nil: every recorder on the network) for
// their status at once and returns them as a fleet: each idle one in
// file mode Ready, each other LeftOut and why. timeout bounds each
// request of the fleet (the recorders' answers).
func Find(ctx context.Context, sess *zenoh.Session, names []string, timeout time.Duration) (*Fleet, error) {
	if names == nil {
		var err error
		if names, err = recctl.List(ctx, sess, timeout); err != nil {
			return nil, err
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("%w on this zenoh network (none held a liveliness token %s within %v)", ErrNone, recctl.TokenKey("*"), timeout)
		}
	}
	f := &Fleet{sess: sess, timeout: timeout}
	for _, n := range names {
		f.members = append(f.members, &Member{Name: n, Role: Ready})
	}
	answers, err := recctl.Ask(ctx, sess, names, recctl.Status, recctl.Request{}, timeout)
	if err != nil {
		return nil, err
	}
	for i, a := range answers {
		m := f.members[i]
		switch {
		case a.Err != nil:
			m.Role, m.Silent, m.Why, m.Left = LeftOut, true, silence(a, recctl.Status, timeout), "not found"
			if errors.Is(a.Err, recctl.ErrIgnored) {
				m.Left = "no answer"
			}
		case a.Reply.Status == nil:
			m.Role, m.Left, m.Why = LeftOut, "no status", fmt.Sprintf("its status answer held no status (%s)", a.Reply.Error)
		default:
			st := a.Reply.Status
			m.Status, m.LastAnswer = st, time.Now()
			switch {
			case st.Mode != "files":
				m.Role, m.Left, m.Why = LeftOut, st.Mode+" mode", fmt.Sprintf("it runs in %s mode: it keeps the last moments and writes only snapshots", st.Mode)
			case st.State != "idle":
				m.Role, m.Left, m.Why = LeftOut, "busy: "+st.State, fmt.Sprintf("it is %s already (into %s): stop its recording first, or start it idle", st.State, st.File)
			}
		}
	}
	return f, nil
}

// silence says why a recorder answered nothing: it is there (its token)
// and this identity gets no answer (recctl.ErrIgnored says so), or it is
// not on the network.
func silence(a recctl.Answer, v recctl.Verb, timeout time.Duration) string {
	if errors.Is(a.Err, recctl.ErrIgnored) {
		return a.Err.Error()
	}
	return fmt.Sprintf("no recorder answered %s within %v, and none holds its liveliness token %s: none of that name runs, or zenoh does not reach it",
		recctl.Key(a.Name, v), timeout, recctl.TokenKey(a.Name))
}

// Members returns a copy of the fleet's members, in the order found.
func (f *Fleet) Members() []Member {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Member, len(f.members))
	for i, m := range f.members {
		out[i] = *m
	}
	return out
}

// having returns the names of the members in one of roles.
func (f *Fleet) having(roles ...Role) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for _, m := range f.members {
		if slices.Contains(roles, m.Role) {
			names = append(names, m.Name)
		}
	}
	return names
}

// member is the member name (the caller holds f.mu).
func (f *Fleet) member(name string) *Member {
	for _, m := range f.members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Start sends the start request req to every Ready member, all at once:
// each that starts is Recording, each that refuses LeftOut, each that
// does not answer Unanswered. It returns how many started.
func (f *Fleet) Start(ctx context.Context, req recctl.Request) (int, error) {
	names := f.having(Ready)
	if len(names) == 0 {
		return 0, fmt.Errorf("%w to start: none answered idle", ErrNone)
	}
	answers, err := recctl.Ask(ctx, f.sess, names, recctl.Start, req, f.timeout)
	if err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	started := 0
	for _, a := range answers {
		m := f.member(a.Name)
		switch {
		case a.Err != nil:
			m.Role, m.Silent, m.Why = Unanswered, true, fmt.Sprintf("did not answer its start within %v: it may be recording (its status will tell)", f.timeout)
		case !a.Reply.OK:
			m.Role, m.Left, m.Why = LeftOut, "refused its start", fmt.Sprintf("refused the start (%s): %s", a.Reply.Code, a.Reply.Error)
			m.LastAnswer = time.Now()
		default:
			m.Role, m.File, m.LastAnswer = Recording, a.Reply.File, time.Now()
			started++
		}
	}
	return started, nil
}

// Poll asks every member for its status at once, each answer awaited
// for up to timeout, and keeps the answers: a member whose start went
// unanswered is Recording once its status says it records, LeftOut once
// it says it is idle.
func (f *Fleet) Poll(ctx context.Context, timeout time.Duration) error {
	answers, err := f.askEach(ctx, f.having(Ready, LeftOut, Recording, Unanswered, Stopped, NotStopped), recctl.Status, timeout)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range answers {
		if a.Err != nil || a.Reply.Status == nil {
			continue
		}
		m := f.member(a.Name)
		st := a.Reply.Status
		m.Status, m.LastAnswer = st, time.Now()
		if m.Role != Unanswered {
			continue
		}
		switch st.State {
		case "recording", "paused":
			m.Role, m.File, m.Silent = Recording, st.File, false
			m.Why = "its start was answered late; its status says it records"
		case "idle":
			m.Role, m.Silent, m.Left = LeftOut, false, "did not record"
			m.Why = "its start went unanswered and it is idle: the start did not reach it"
		}
	}
	return nil
}

// Stop sends stop to every member that records (or may: its start went
// unanswered), all at once, and again to those that do not answer,
// every second, for up to patience: a partitioned recorder is stopped
// once its link returns. Each answer makes its member Stopped (a
// recorder already idle counts as stopped: an earlier stop reached it);
// a member still silent after patience is NotStopped. waiting, if set,
// is told of each round that left members unanswered.
func (f *Fleet) Stop(ctx context.Context, patience time.Duration, waiting func(unanswered []string, since time.Duration)) {
	names := f.having(Recording, Unanswered)
	begun := time.Now()
	for len(names) > 0 {
		answers, err := f.askEach(ctx, names, recctl.Stop, f.timeout)
		if err != nil {
			break
		}
		names = f.stopped(answers)
		if len(names) == 0 || time.Since(begun) >= patience || ctx.Err() != nil {
			break
		}
		if waiting != nil {
			waiting(names, time.Since(begun))
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range names {
		m := f.member(n)
		m.Role, m.Silent = NotStopped, true
		m.Why = fmt.Sprintf("did not answer its stop for %v: as far as the fleet knows it still records%s", time.Since(begun).Round(time.Second), m.holds())
	}
}

// askEach sends v to each of names with a request of its own, all at
// once: a recorder whose liveliness token is gone (recctl.Ask waits for
// it, up to the timeout) delays only its own request.
func (f *Fleet) askEach(ctx context.Context, names []string, v recctl.Verb, timeout time.Duration) ([]recctl.Answer, error) {
	out := make([]recctl.Answer, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var as []recctl.Answer
			if as, errs[i] = recctl.Ask(ctx, f.sess, []string{n}, v, recctl.Request{}, timeout); errs[i] == nil {
				out[i] = as[0]
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// stopped records the answers to a stop and returns the names of the
// members that did not answer.
func (f *Fleet) stopped(answers []recctl.Answer) (silent []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range answers {
		m := f.member(a.Name)
		switch {
		case a.Err != nil:
			silent = append(silent, a.Name)
			continue
		case a.Reply.OK:
			m.Role, m.Finished, m.Silent = Stopped, a.Reply.Finished, false
		case a.Reply.Code == recctl.CodeState && a.Reply.State == "idle":
			m.Role, m.Silent = Stopped, false
			if m.File == "" { // its start never reached it
				m.Role, m.Left, m.Why = LeftOut, "did not record", "its start went unanswered and it was idle at the stop: it did not record"
			} else {
				m.Why = "it was idle already at the stop (an earlier stop reached it, or someone else's)"
			}
		default:
			m.Role, m.Silent = NotStopped, false
			m.Why = fmt.Sprintf("refused the stop (%s): %s", a.Reply.Code, a.Reply.Error)
		}
		m.LastAnswer = time.Now()
		if m.File == "" && m.Finished != nil {
			m.File = m.Finished.Path
		}
	}
	return silent
}

// holds says what a member held when it last answered (the caller holds
// f.mu).
func (m *Member) holds() string {
	st := m.Status
	if st == nil {
		return ""
	}
	return fmt.Sprintf("; when it last answered (%s ago) it was %s, %d files, %d bytes written, into %s",
		time.Since(m.LastAnswer).Round(time.Second), st.State, st.Files, st.BytesWritten, st.File)
}
