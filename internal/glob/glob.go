// Package glob matches channel names, zenoh keys and iceoryx2 service names
// against the patterns vrlog's commands take: ** matches anything, * anything
// but '/', ? one character (as in zenoh key expressions, plus ?).
package glob

import (
	"regexp"
	"strings"
)

// Compile turns a pattern into an anchored regular expression.
func Compile(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(p); i++ {
		switch {
		case strings.HasPrefix(p[i:], "**"):
			b.WriteString(".*")
			i++
		case p[i] == '*':
			b.WriteString("[^/]*")
		case p[i] == '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String()) // every rune is quoted or a fixed class
}

// MatchAny reports whether s matches one of res.
func MatchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
