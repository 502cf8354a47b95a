package keyexpr

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoMatch is wrapped by NoMatchError: a pattern matched nothing.
var ErrNoMatch = errors.New("keyexpr: pattern matches nothing")

// NoMatchError says which pattern matched nothing and what it could have
// matched, so the user sees the names there are.
type NoMatchError struct {
	Pattern string   // as written
	What    string   // what was searched, e.g. "channel" or "state channel"
	Have    []string // the names there are
}

// maxListed bounds the names an error lists.
const maxListed = 20

func (e *NoMatchError) Error() string {
	what := e.What
	if what == "" {
		what = "channel"
	}
	if len(e.Have) == 0 {
		return fmt.Sprintf("%q matches no %s (there is none)", e.Pattern, what)
	}
	have := e.Have
	more := ""
	if len(have) > maxListed {
		have, more = have[:maxListed], fmt.Sprintf(" and %d more", len(e.Have)-maxListed)
	}
	return fmt.Sprintf("%q matches no %s (there are: %s%s)", e.Pattern, what, strings.Join(have, ", "), more)
}

// Unwrap returns ErrNoMatch.
func (e *NoMatchError) Unwrap() error { return ErrNoMatch }

// Set is the patterns of one repeatable flag; it remembers which of them
// matched something, so that one matching nothing is reported.
type Set struct {
	pats []Pattern
	hit  []bool
}

// ParseSet parses every pattern; the first bad one is the error.
func ParseSet(ss []string) (*Set, error) {
	s := &Set{hit: make([]bool, len(ss))}
	for _, src := range ss {
		p, err := Parse(src)
		if err != nil {
			return nil, err
		}
		s.pats = append(s.pats, p)
	}
	return s, nil
}

// Len is the number of patterns; a nil Set has none.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.pats)
}

// Patterns returns the patterns in order.
func (s *Set) Patterns() []Pattern {
	if s == nil {
		return nil
	}
	return s.pats
}

// Match reports whether some pattern matches one of the subjects (e.g. a
// channel's name and its topic), and marks every pattern that does.
func (s *Set) Match(subjects ...string) bool {
	any := false
	for i, p := range s.Patterns() {
		for _, sub := range subjects {
			if p.Match(sub) {
				s.hit[i], any = true, true
				break
			}
		}
	}
	return any
}

// MarkUsed marks pattern i as having matched (a caller that matched it by
// other means, e.g. as a channel id).
func (s *Set) MarkUsed(i int) { s.hit[i] = true }

// Unmatched returns a NoMatchError for the first pattern that has matched
// nothing so far, listing have; nil when every pattern matched.
func (s *Set) Unmatched(what string, have []string) error {
	for i, p := range s.Patterns() {
		if !s.hit[i] {
			return &NoMatchError{Pattern: p.String(), What: what, Have: have}
		}
	}
	return nil
}
