package replayer

import (
	"errors"
	"fmt"
)

// The kinds of failure a replay can end with; a verb maps them to exit codes
// with errors.Is. The messages of the errors Open and Run return carry the
// detail (which file, which key, how many steps); these are their kinds.
var (
	// ErrInput: a log cannot be read (missing, foreign, corrupt, truncated
	// without Tolerant), or holds nothing to replay.
	ErrInput = errors.New("replayer: bad input")
	// ErrOutput: the response log (Config.Output) cannot be created or
	// written; one that exists without Force also wraps fs.ErrExist.
	ErrOutput = errors.New("replayer: response log not written")
	// ErrTransport: a zenoh session, publisher or subscriber, or an iceoryx2
	// node or service, could not be opened or used.
	ErrTransport = errors.New("replayer: transport failure")
	// ErrNoSubscribers: Config.WaitTimeout passed before every channel had
	// its subscribers.
	ErrNoSubscribers = errors.New("replayer: no subscribers")
	// ErrNoController: Config.WaitTimeout passed before the controller's
	// liveliness token came (Config.WaitController); an ErrNoSubscribers.
	ErrNoController = fmt.Errorf("%w: no controller", ErrNoSubscribers)
	// ErrNoAnswer: in lockstep, the controller answered no trigger record
	// (it is not running, or answers on another key).
	ErrNoAnswer = errors.New("replayer: no answer from the controller")
	// ErrControllerGone: in lockstep, the trigger channels lost the
	// subscriber they had (the controller died or left) while the replay ran.
	ErrControllerGone = errors.New("replayer: the controller is gone")
	// ErrMissedSteps: in lockstep, more steps went unanswered than
	// Config.MaxMissed or Config.MaxMissedInARow allow.
	ErrMissedSteps = errors.New("replayer: too many missed steps")
	// ErrCapturedNothing: a capture pattern captured no response.
	ErrCapturedNothing = errors.New("replayer: captured nothing")
	// ErrInterrupted: the context given to Run ended before the replay did.
	ErrInterrupted = errors.New("replayer: interrupted")
)

// kindError is an error of one of the kinds above whose message is its
// detail alone: errors.Is finds the kind, Unwrap the cause.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string        { return e.err.Error() }
func (e *kindError) Unwrap() error        { return e.err }
func (e *kindError) Is(target error) bool { return target == e.kind || errors.Is(e.kind, target) }

// kinded marks err as of kind (nil stays nil).
func kinded(kind, err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: kind, err: err}
}

// kindf is kinded(kind, fmt.Errorf(format, args...)).
func kindf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, err: fmt.Errorf(format, args...)}
}

// ConfigError is a Config that cannot be replayed: Field names the Config
// field at fault (a verb names its flag instead), Err says why.
type ConfigError struct {
	Field string
	Err   error
	// Needs, if set, is the field the setting needs and lacks.
	Needs string
}

func (e *ConfigError) Error() string {
	s := "replayer: " + e.Field + ": " + e.Err.Error()
	if e.Needs != "" {
		s += " (needs " + e.Needs + ")"
	}
	return s
}
func (e *ConfigError) Unwrap() error { return e.Err }

// configErr is a ConfigError on field.
func configErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Err: fmt.Errorf(format, args...)}
}
