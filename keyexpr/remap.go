package keyexpr

import (
	"fmt"
	"strings"
)

// Remap renames what a pattern matches: FROM=TO. FROM is a pattern; TO is
// a name, or ends in /** to keep the levels FROM's trailing ** matched
// ("vr/r1/**=test/**" turns vr/r1/camera/front into test/camera/front).
type Remap struct {
	src   string
	from  Pattern
	to    string // without the trailing /** when keepTail
	fixed int    // levels of FROM before its trailing **
	keep  bool
}

// ParseRemap parses FROM=TO.
func ParseRemap(s string) (*Remap, error) {
	from, to, ok := strings.Cut(s, "=")
	if !ok || from == "" || to == "" {
		return nil, fmt.Errorf("%w %q: want FROM=TO", ErrSyntax, s)
	}
	p, err := Parse(from)
	if err != nil {
		return nil, err
	}
	m := &Remap{src: s, from: p, to: to}
	if t, ok := strings.CutSuffix(to, "/**"); ok {
		n := len(p.levels) - 1
		if n < 0 || p.levels[n].kind != kindAny {
			return nil, fmt.Errorf("%w %q: TO ends in /**, so FROM must end in /** too", ErrSyntax, s)
		}
		for _, l := range p.levels[:n] {
			if l.kind == kindAny {
				return nil, fmt.Errorf("%w %q: with TO/**, FROM may hold ** only at its end", ErrSyntax, s)
			}
		}
		m.to, m.fixed, m.keep = t, n, true
	}
	if tp, err := Parse(m.to); err != nil || !tp.Literal() {
		return nil, fmt.Errorf("%w %q: TO must be a name (optionally ending in /**)", ErrSyntax, s)
	}
	return m, nil
}

// String returns FROM=TO as written.
func (m *Remap) String() string { return m.src }

// Apply renames the first of the subjects that FROM matches; ok is false
// when none does.
func (m *Remap) Apply(subjects ...string) (string, bool) {
	for _, s := range subjects {
		if !m.from.Match(s) {
			continue
		}
		if !m.keep {
			return m.to, true
		}
		parts := strings.Split(s, "/")
		if tail := parts[m.fixed:]; len(tail) > 0 {
			return m.to + "/" + strings.Join(tail, "/"), true
		}
		return m.to, true
	}
	return "", false
}
