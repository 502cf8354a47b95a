package recorder

import (
	"fmt"

	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
)

// Missed lists what a recording failed to capture, so that a recording of
// nothing is never a success: "nothing" when no data record arrived at
// all, else each zenoh key expression (-k) and iceoryx2 service or pattern
// (-s) that no recorded data channel matches. The log is complete and
// readable either way.
func Missed(cfg Config, sum *Summary) []string {
	var data uint64
	for _, c := range sum.Channels {
		if c.Transport != logfmt.TransportInternal.String() {
			data += c.Msgs
		}
	}
	if data == 0 {
		return []string{"nothing"}
	}
	var missed []string
	for _, f := range []struct {
		flag, transport string
		pats            []string
	}{{"-k", logfmt.TransportZenoh.String(), cfg.ZenohKeys}, {"-s", logfmt.TransportIceoryx2.String(), cfg.IceoryxServices}} {
		for _, src := range f.pats {
			p, err := keyexpr.Parse(src)
			if err == nil && !captured(sum, p, f.transport) {
				missed = append(missed, fmt.Sprintf("%s %s", f.flag, src))
			}
		}
	}
	return missed
}

// UnusedCompression lists the --compression patterns that no recorded
// channel matched (the setting changed nothing).
func UnusedCompression(cfg Config, sum *Summary) []string {
	var unused []string
	for _, cc := range cfg.Compression {
		p, err := keyexpr.Parse(cc.Pattern)
		if cc.Pattern != "" && err == nil && !captured(sum, p, "") {
			unused = append(unused, cc.Pattern)
		}
	}
	return unused
}

// captured reports whether a recorded channel (of transport, "" any) with
// records matches p.
func captured(sum *Summary, p keyexpr.Pattern, transport string) bool {
	for _, c := range sum.Channels {
		if c.Msgs > 0 && (transport == "" || c.Transport == transport) && p.Match(c.Name) {
			return true
		}
	}
	return false
}

// Recorded lists the data channels a recording captured, for messages.
func Recorded(sum *Summary) []string {
	var names []string
	for _, c := range sum.Channels {
		if c.Msgs > 0 && c.Transport != logfmt.TransportInternal.String() {
			names = append(names, c.Name)
		}
	}
	return names
}
