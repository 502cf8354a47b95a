package logfmt

// ReplayOutcome is how a replay ended. A response log (replay --capture)
// records it as its last record, on the internal channel OutcomeChannel
// (schema OutcomeSchema, this struct as JSON), so that a gate on the log
// (analyze) can tell a replay that finished from one that was stopped,
// interrupted, failed or played around damage, and count the triggers it
// should hold.
type ReplayOutcome struct {
	Schema string `json:"schema"` // OutcomeSchema
	// Finished: every record of the window was played, every pass, and no
	// chunk was skipped.
	Finished bool `json:"finished"`
	// Reason says why not: "stopped", "interrupted", "skipped damaged
	// chunks", or the error that ended the run.
	Reason string `json:"reason"`
	// Triggers is the number of trigger records the played window holds,
	// over every pass asked for (0 when looping forever); Released how many
	// were released to the controller, Answered, Missed and Late the
	// lockstep counts (0 without lockstep).
	Triggers uint64 `json:"triggers"`
	Released uint64 `json:"released"`
	Answered uint64 `json:"answered"`
	Missed   uint64 `json:"missed"`
	Late     uint64 `json:"late"`
	Lockstep bool   `json:"lockstep"`
}

// The response log's outcome record (ReplayOutcome).
const (
	OutcomeChannel = "vrlog/replay/outcome"
	OutcomeSchema  = "vrlog.ReplayOutcome/1"
)
