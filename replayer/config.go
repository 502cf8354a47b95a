package replayer

import (
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/replayctl"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Clock is the clock a replay paces by.
type Clock int

const (
	// ClockReceive paces by the recorder's monotonic receive stamps: what
	// the controller saw, jitter and outages included.
	ClockReceive Clock = iota
	// ClockCapture paces by the simulator's capture stamps (t_ns).
	ClockCapture
)

func (c Clock) String() string {
	if c == ClockCapture {
		return "capture"
	}
	return "receive"
}

// Config says what to replay, how, and what makes the replay a test
// fixture for a controller under test (docs/replay.md). The zero value of
// every field but Files is a plain replay at the original pacing.
type Config struct {
	Files    []string // logs, merged by receive time
	Tolerant bool     // replay what is intact of a truncated or corrupt log
	Clock    Clock
	Rate     float64 // speed factor (0: 1)
	RateMax  bool    // as fast as the transports take it
	// Loops is the number of passes (0: one); Forever loops until stopped.
	Loops   int
	Forever bool
	Window  logfmt.Window // start, end or duration of the played window
	Delay   time.Duration // after creating the publishers, before the first record
	// StartPaused starts paused: Player().Resume or the control channel
	// (Control) resumes.
	StartPaused bool
	Faults      player.Faults
	Inject      []string // the fault specifications Faults was parsed from, for the report
	Seed        uint64   // for drop and jitter faults
	Restamp     bool     // shift decodable payloads' stamps so the first record's t_ns is now
	// Channels selects the data channels by name or topic (nil or empty:
	// all); Remaps rename them (the first whose FROM matches), then Prefix
	// ("P" or "P/") is prepended to every published key and service.
	Channels *keyexpr.Set
	Remaps   []*keyexpr.Remap
	Prefix   string
	// Read-ahead bounds (player.Options; defaults 64 MiB, 2 s), the
	// capture clock's reorder window (default 100 ms), and a fixed
	// sleep-then-spin margin (0: adaptive).
	ReadAheadBytes int
	ReadAhead      time.Duration
	ReorderWindow  time.Duration
	Spin           time.Duration
	// BlockIceoryx publishes iceoryx2 channels without overwriting a slow
	// subscriber's samples: the service is created without safe overflow
	// and each send waits until every subscriber has room (a service that
	// exists with safe overflow is published into as it is, with a
	// warning: there iceoryx2 overwrites and tells the publisher nothing).
	BlockIceoryx bool
	// Linger keeps the publishers open this long after the last record,
	// so subscribers drain (0: none; the verb's default is 500 ms).
	Linger time.Duration

	// Zenoh configures the session Open opens when Session is nil.
	Zenoh   zenoh.Config
	Session *zenoh.Session // not closed by Close

	// WaitSubscribers > 0 starts only when every zenoh key has a matching
	// subscriber and every iceoryx2 service that many; WaitTimeout (0: no
	// limit) ends the wait with ErrNoSubscribers.
	WaitSubscribers int
	WaitTimeout     time.Duration
	// WaitController (with Lockstep) also waits for the controller itself:
	// a zenoh liveliness token on a key of Lockstep, which the controller
	// declares on its answer key (the bundled ones do). Any zenoh
	// subscriber matches a trigger key, a recorder of the same keys too,
	// so the matching status alone can start a replay before its
	// controller. WaitTimeout bounds this wait too (ErrNoController, an
	// ErrNoSubscribers).
	WaitController bool
	// Control takes commands on vrlog/replay/NAME/control and publishes
	// the status on vrlog/replay/NAME/status (package replayctl).
	Control string
	// ClockKey publishes the log's time (codec.ReplayClock) on a zenoh key,
	// ClockRate times a second and, with ClockPerRecord, before every record.
	ClockKey       string
	ClockRate      float64
	ClockPerRecord bool
	// Lockstep holds each trigger record until the controller answered on
	// this key expression or LockstepTimeout (default 1 s) passed: a missed
	// step. MaxMissed > 0 ends the run after that many missed steps;
	// MaxMissedInARow > 0 after that many in a row (0: no limit, for both,
	// as their flags; vrlog replay's default is DefaultMaxMissedInARow).
	// Both end it with ErrMissedSteps, or with ErrNoAnswer when no step was
	// ever answered.
	Lockstep        string
	LockstepTimeout time.Duration
	MaxMissed       int
	MaxMissedInARow int
	// Triggers selects the channels lockstep holds and capture measures the
	// reaction from (default: the state channels).
	Triggers *keyexpr.Set
	// Capture records the controller's outputs (zenoh keys and iceoryx2
	// services the patterns match) with the released triggers into the
	// response log Output (Force replaces an existing one).
	Capture []string
	Output  string
	Force   bool

	// Warn receives warnings and the fixture's progress messages, a line
	// each ("replay: ..."); nil writes them to os.Stderr (io.Discard drops
	// them).
	Warn io.Writer

	internal bool // OpenLogs: the recorder's own channels too
}

// DefaultMaxMissedInARow is vrlog replay's bound on missed steps in a
// row (Config.MaxMissedInARow): a controller that stopped answering fails
// in a few timeouts, not in one per remaining record.
const DefaultMaxMissedInARow = 3

// DefaultControl is the control channel's name when StartPaused asks for
// one without Control and no keyboard is there to resume: unique to the
// process, so two replays on one network never steer each other.
func DefaultControl(pid int) string {
	return "replay-" + strconv.Itoa(pid)
}

// fixtureConfig is the parsed fixture part of a Config.
type fixtureConfig struct {
	*Config
	lockstepPattern keyexpr.Pattern
	capturePatterns []keyexpr.Pattern
}

// check validates cfg and fills the defaults into c (a copy).
func check(cfg Config) (Config, *fixtureConfig, error) {
	c := cfg
	switch {
	case len(c.Files) == 0:
		return c, nil, configErr("Files", "no input: give one or more .vrlog files")
	case c.Rate < 0 || c.Rate > 1e9:
		return c, nil, configErr("Rate", "%v: want a factor > 0", c.Rate)
	case c.Loops < 0:
		return c, nil, configErr("Loops", "%d: want N >= 0", c.Loops)
	case c.Delay < 0, c.WaitTimeout < 0, c.LockstepTimeout < 0, c.Linger < 0, c.ReorderWindow < 0, c.ReadAhead < 0, c.Spin < 0:
		return c, nil, configErr(negativeField(&c), "want a duration >= 0")
	case c.ReadAheadBytes < 0:
		return c, nil, configErr("ReadAheadBytes", "%d: want N >= 0", c.ReadAheadBytes)
	case c.WaitSubscribers < 0:
		return c, nil, configErr("WaitSubscribers", "%d: want N >= 1 (iceoryx2 subscribers per service; zenoh keys need one match)", c.WaitSubscribers)
	case c.WaitTimeout > 0 && c.WaitSubscribers == 0 && !c.WaitController:
		return c, nil, &ConfigError{Field: "WaitTimeout", Err: errString("a wait timeout needs a subscriber count to wait for"), Needs: "WaitSubscribers"}
	case c.WaitController && c.Lockstep == "":
		return c, nil, &ConfigError{Field: "WaitController", Err: errString("waiting for the controller needs its answer key"), Needs: "Lockstep"}
	}
	if c.Rate == 0 {
		c.Rate = 1
	}
	if c.Warn == nil {
		c.Warn = os.Stderr
	}
	if c.ReorderWindow == 0 {
		c.ReorderWindow = 100 * time.Millisecond
	}
	if p := strings.TrimSuffix(c.Prefix, "/"); p != "" {
		if pat, err := keyexpr.Parse(p); err != nil || !pat.Literal() {
			return c, nil, configErr("Prefix", "%q: want levels of a name, without wildcards", c.Prefix)
		}
		c.Prefix = p + "/"
	}
	if c.Control != "" {
		if err := replayctl.CheckName(c.Control); err != nil {
			return c, nil, &ConfigError{Field: "Control", Err: err}
		}
	}
	if c.ClockKey != "" {
		if p, err := keyexpr.Parse(c.ClockKey); err != nil || !p.Literal() {
			return c, nil, configErr("ClockKey", "%q: want a zenoh key without wildcards", c.ClockKey)
		}
		if !(c.ClockRate >= 0) || c.ClockRate > 10000 || (c.ClockRate == 0 && !c.ClockPerRecord) {
			return c, nil, configErr("ClockRate", "%v: want ticks per second in (0, 10000], or 0 with a clock per record", c.ClockRate)
		}
	} else if c.ClockRate != 0 || c.ClockPerRecord {
		return c, nil, &ConfigError{Field: "ClockRate", Err: errString("a clock rate or a clock per record needs a clock key"), Needs: "ClockKey"}
	}
	f := &fixtureConfig{Config: &c}
	var err error
	if c.Lockstep != "" {
		if f.lockstepPattern, err = keyexpr.Parse(c.Lockstep); err != nil {
			return c, nil, &ConfigError{Field: "Lockstep", Err: err}
		}
		if c.LockstepTimeout == 0 {
			c.LockstepTimeout = time.Second
		}
		if c.MaxMissed < 0 {
			return c, nil, configErr("MaxMissed", "%d: want N >= 0 (0: no limit)", c.MaxMissed)
		}
		if c.MaxMissedInARow < 0 {
			return c, nil, configErr("MaxMissedInARow", "%d: want N >= 0 (0: no limit)", c.MaxMissedInARow)
		}
	} else if c.MaxMissed != 0 || c.MaxMissedInARow != 0 {
		return c, nil, &ConfigError{Field: "MaxMissed", Err: errString("a bound on missed steps needs lockstep"), Needs: "Lockstep"}
	}
	for _, s := range c.Capture {
		p, err := keyexpr.Parse(s)
		if err != nil {
			return c, nil, &ConfigError{Field: "Capture", Err: err}
		}
		f.capturePatterns = append(f.capturePatterns, p)
	}
	switch {
	case len(c.Capture) > 0 && c.Output == "":
		return c, nil, &ConfigError{Field: "Capture", Err: errString("capturing needs the response log's path"), Needs: "Output"}
	case len(c.Capture) == 0 && c.Output != "":
		return c, nil, &ConfigError{Field: "Output", Err: errString(c.Output + ": only a capture writes a file; give the patterns to capture"), Needs: "Capture"}
	case c.Triggers.Len() > 0 && c.Lockstep == "" && len(c.Capture) == 0:
		return c, nil, &ConfigError{Field: "Triggers", Err: errString("trigger channels are those of lockstep and capture; ask for one of them"), Needs: "Lockstep"}
	}
	return c, f, nil
}

// negativeField names the first negative duration of c.
func negativeField(c *Config) string {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"Delay", c.Delay}, {"WaitTimeout", c.WaitTimeout}, {"LockstepTimeout", c.LockstepTimeout}, {"Linger", c.Linger},
		{"ReorderWindow", c.ReorderWindow}, {"ReadAhead", c.ReadAhead}, {"Spin", c.Spin}} {
		if f.d < 0 {
			return f.name
		}
	}
	return ""
}

type errString string

func (e errString) Error() string { return string(e) }

// needsSession reports whether the fixture talks over zenoh.
func (f *fixtureConfig) needsSession() bool {
	return f.Control != "" || f.ClockKey != "" || f.Lockstep != "" || len(f.Capture) > 0
}
