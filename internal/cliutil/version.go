package cliutil

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is what --version prints (a recorder's status says it too).
func Version() string { return version() }

// version is what --version prints, from the build information Go embeds:
// the module version when built as a module (go install ...@v1.2.3), else
// the VCS revision, "-dirty" when the checkout had local changes, and the
// commit time.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information), " + runtime.Version()
	}
	return describe(bi)
}

func describe(bi *debug.BuildInfo) string {
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !pseudo(v, rev) {
		return v + ", " + bi.GoVersion
	}
	if rev == "" {
		return "devel (the build carries no VCS information: go run or go test, -buildvcs=false, a git worktree, or no checkout), " + bi.GoVersion
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	out := "devel " + rev + dirty
	if at != "" {
		out += " (" + at + ")"
	}
	return out + ", " + bi.GoVersion
}

// pseudo reports whether v is the pseudo-version Go (1.24 on) stamps on a
// build in a checkout (v0.0.0-20260102030405-0123456789ab[+dirty]): the
// revision and commit time say the same, readably.
func pseudo(v, rev string) bool {
	if rev == "" {
		return false
	}
	v = strings.TrimSuffix(v, "+dirty")
	return len(rev) >= 12 && strings.HasSuffix(v, "-"+rev[:12])
}
