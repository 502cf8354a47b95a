// Package keyexpr is vrlog's one channel-pattern grammar: zenoh's key
// expressions, matched against channel names, zenoh keys and iceoryx2
// service names. Every selector of every verb uses it (record -k, -s and
// --compression; replay, cat, cut and export --channel; replay --remap;
// analyze's CHANNEL= thresholds), so a pattern means the same thing
// everywhere, and what record passes to zenoh as a subscription matches
// exactly what it matches here.
//
// A pattern is '/'-separated levels (zenoh calls them chunks):
//
//   - one whole level, whatever it holds:     vr/*/state
//     **     any number of levels, none included:    vr/**, vr/**/state
//     $*     any text inside one level:              vr/r1/camera/fr$*
//     other  itself, byte for byte
//
// As in zenoh, '*' and '**' stand alone in their level ("cam*" is an
// error: write cam$*), a level is never empty (no leading, trailing or
// doubled '/'), and '?' and '#' are not allowed. A subject (a name being
// matched) is split on '/' the same way; it may hold any bytes.
package keyexpr

import (
	"errors"
	"fmt"
	"strings"
)

// ErrSyntax is wrapped by every error of Parse.
var ErrSyntax = errors.New("keyexpr: bad pattern")

// Pattern is a parsed key expression. The zero value matches nothing.
type Pattern struct {
	src    string
	levels []level
}

// level is one '/'-separated part of a pattern.
type level struct {
	kind  levelKind
	parts []string // kindText: literal pieces between $* (len 1: no $*)
}

type levelKind uint8

const (
	kindText levelKind = iota // literal, possibly with $*
	kindOne                   // *
	kindAny                   // **
)

// Parse parses a pattern; errors wrap ErrSyntax and say how to fix it.
func Parse(s string) (Pattern, error) {
	bad := func(why string) (Pattern, error) {
		return Pattern{}, fmt.Errorf("%w %q: %s", ErrSyntax, s, why)
	}
	if s == "" {
		return bad("empty")
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		return bad(fmt.Sprintf("%q is not allowed (wildcards are * for one level, ** for any levels, $* inside a level)", s[i]))
	}
	p := Pattern{src: s}
	for _, l := range strings.Split(s, "/") {
		switch {
		case l == "":
			return bad("empty level (leading, trailing or doubled '/')")
		case l == "*" || l == "$*":
			p.levels = append(p.levels, level{kind: kindOne})
		case l == "**":
			if n := len(p.levels); n > 0 && p.levels[n-1].kind == kindAny {
				continue // **/** is **
			}
			p.levels = append(p.levels, level{kind: kindAny})
		default:
			parts := strings.Split(l, "$*")
			for _, t := range parts {
				if strings.ContainsAny(t, "*$") {
					return bad(fmt.Sprintf("level %q: * and ** stand for a whole level, and $ appears only in $*, which matches text inside a level (did you mean %s?)", l, suggest(l)))
				}
			}
			p.levels = append(p.levels, level{kind: kindText, parts: parts})
		}
	}
	return p, nil
}

// suggest rewrites a level's stray '*' runs as $* and drops stray '$'.
func suggest(l string) string {
	var b strings.Builder
	for i := 0; i < len(l); i++ {
		switch {
		case strings.HasPrefix(l[i:], "$*"):
			b.WriteString("$*")
			i++
		case l[i] == '*':
			for i+1 < len(l) && l[i+1] == '*' {
				i++
			}
			b.WriteString("$*")
		case l[i] != '$':
			b.WriteByte(l[i])
		}
	}
	return b.String()
}

// MustParse is Parse for patterns written in code.
func MustParse(s string) Pattern {
	p, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return p
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.src }

// Literal reports whether p has no wildcard: it matches one name only.
func (p Pattern) Literal() bool {
	for _, l := range p.levels {
		if l.kind != kindText || len(l.parts) > 1 {
			return false
		}
	}
	return len(p.levels) > 0
}

// IsName reports whether s names one thing at one key level: a level
// without wildcards or '/' (a recorder's, replay's or fleet's name, which
// the control keys put between fixed levels).
func IsName(s string) bool {
	p, err := Parse(s)
	return err == nil && p.Literal() && !strings.Contains(s, "/")
}

// Match reports whether subject is in the set p denotes.
func (p Pattern) Match(subject string) bool {
	if len(p.levels) == 0 {
		return false
	}
	return matchLevels(p.levels, strings.Split(subject, "/"))
}

// matchLevels matches levels against the subject's parts: the classic
// greedy wildcard walk, with ** as the star and * as a one-part joker.
func matchLevels(ls []level, parts []string) bool {
	li, pi := 0, 0
	star, mark := -1, 0 // last ** seen, and the part it was tried up to
	for pi < len(parts) {
		switch {
		case li < len(ls) && ls[li].kind == kindAny:
			star, mark = li, pi
			li++
		case li < len(ls) && (ls[li].kind == kindOne || ls[li].match(parts[pi])):
			li++
			pi++
		case star >= 0:
			mark++
			li, pi = star+1, mark
		default:
			return false
		}
	}
	for li < len(ls) && ls[li].kind == kindAny {
		li++
	}
	return li == len(ls)
}

// match matches a literal level, with $* as "any text".
func (l level) match(s string) bool {
	if len(l.parts) == 1 {
		return s == l.parts[0]
	}
	first, last := l.parts[0], l.parts[len(l.parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	s = s[len(first) : len(s)-len(last)]
	for _, mid := range l.parts[1 : len(l.parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return true
}
