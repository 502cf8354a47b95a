package analyzer

import "fmt"

// A max-outage limit below the shortest gap the outage definition detects
// (--outage-factor × the channel's nominal period) cannot fail on a gap
// between the two: such a gap is no outage, and the check reported "0 ms"
// for a channel with longer gaps. The check says so and so does a note
// (analyze also prints it on stderr).

// outageBlindSpot is the shortest detectable outage in ms when c is a
// max-outage check whose limit is below it.
func (r *Report) outageBlindSpot(c Check) (*ChannelReport, float64, bool) {
	ch := r.Channel(c.Channel)
	if c.Name != "max-outage" || ch == nil || ch.NominalPeriodMs <= 0 {
		return nil, 0, false
	}
	shortest := round3(r.OutageFactor * ch.NominalPeriodMs)
	return ch, shortest, c.Limit < shortest
}

// OutageLimitWarnings lists the max-outage checks whose limit is below what
// the outage definition can detect.
func (r *Report) OutageLimitWarnings() []string {
	var w []string
	for _, c := range r.Checks {
		if ch, shortest, ok := r.outageBlindSpot(c); ok {
			w = append(w, fmt.Sprintf("max-outage %s: limit %s ms is below the shortest outage the log can show (%g × the nominal period %s ms = %s ms): a shorter gap never fails it; the longest gap is %s ms (a lower outage factor shows more)",
				c.Channel, fmtNum(c.Limit), r.OutageFactor, fmtNum(ch.NominalPeriodMs), fmtNum(shortest), fmtNum(round3(ch.MaxGapS*1000))))
		}
	}
	return w
}

// markOutageBlindSpots adds the longest gap to such checks' messages and
// the warnings to the notes.
func (r *Report) markOutageBlindSpots() {
	for i, c := range r.Checks {
		if ch, shortest, ok := r.outageBlindSpot(c); ok {
			r.Checks[i].Message += fmt.Sprintf("; the longest gap, %s ms, counts as an outage only above %s ms", fmtNum(round3(ch.MaxGapS*1000)), fmtNum(shortest))
		}
	}
	r.Notes = append(r.Notes, r.OutageLimitWarnings()...)
}
