package codec

import (
	"strconv"
	"strings"
)

// AnswerTag is what a controller puts in the zenoh attachment of its
// answer to name the trigger it answers: the trigger record's seq (a
// vrsdk state's seq, as the replay published it) in decimal after this
// prefix, e.g. "vrlog.seq=42" (docs/wire-format.md; docs/replay.md,
// "Pairing answers to triggers"). An attachment that is not exactly that
// names no trigger.
const AnswerTag = "vrlog.seq="

// AppendAnswerTag appends the attachment that names the trigger of seq.
func AppendAnswerTag(dst []byte, seq uint64) []byte {
	return strconv.AppendUint(append(dst, AnswerTag...), seq, 10)
}

// ParseAnswerTag reads the trigger seq an answer's attachment names; ok is
// false for an attachment that names none.
func ParseAnswerTag(attachment []byte) (seq uint64, ok bool) {
	s, found := strings.CutPrefix(string(attachment), AnswerTag)
	if !found {
		return 0, false
	}
	seq, err := strconv.ParseUint(s, 10, 64)
	return seq, err == nil
}
