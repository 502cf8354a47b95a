package analyzer

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
)

func limits(t *testing.T, dur bool, ss ...string) []Limit {
	t.Helper()
	var ls []Limit
	for _, s := range ss {
		l, err := ParseLimit(s, dur)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return ls
}

// A gate never passes by checking nothing.
func TestChecksNeverPassOnNothing(t *testing.T) {
	p, tr := writeSession(t, synth.Default())
	rep, err := AnalyzeFiles([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// ** crosses levels: every stamped channel is checked.
	if err := rep.ApplyChecks(Thresholds{MaxSkips: limits(t, false, "vr/**=0")}); err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != 2 || rep.Pass || tr.SkippedStates == 0 {
		t.Fatalf("vr/**=0: %d checks, pass %v", len(rep.Checks), rep.Pass)
	}
	for _, c := range []struct {
		th   Thresholds
		want string
	}{
		{Thresholds{MinRate: limits(t, false, "vr/r9/state=24")}, `min-rate: "vr/r9/state" matches no data channel (there are: vr/r1/state`},
		// The raw channel exists but has no seq to count skips in.
		{Thresholds{MaxSkips: limits(t, false, synth.RawKey("r1")+"=0")}, `matches no channel with seq stamps (there are: vr/r1/state, vr/r1/camera/front)`},
		{Thresholds{MaxLagMs: limits(t, true, "vr/r1/state=10ms")}, "matches no frame channel paired with a state channel (there are: vr/r1/camera/front)"},
	} {
		rep, _ := AnalyzeFiles([]string{p}, Options{})
		err := rep.ApplyChecks(c.th)
		var te *ThresholdError // the check, not a flag: the verb names --min-rate
		if !errors.Is(err, keyexpr.ErrNoMatch) || !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "--") {
			t.Errorf("%v, want %q", err, c.want)
		}
	}

	// A log with no data channel: a threshold without CHANNEL= fails.
	empty := filepath.Join(t.TempDir(), "empty.vrlog")
	w, _ := logfmt.Create(empty, logfmt.WriterOptions{})
	w.Close()
	rep, err = AnalyzeFiles([]string{empty}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.ApplyChecks(Thresholds{MaxSkips: limits(t, false, "0"), MinRate: limits(t, false, "1")}); err != nil {
		t.Fatal(err)
	}
	if rep.Pass || len(rep.Checks) != 2 || !strings.Contains(rep.Checks[0].Message, "nothing to check: the log has no channel with seq stamps") {
		t.Fatalf("%+v", rep.Checks)
	}
	var j strings.Builder
	rep.WriteJUnit(&j)
	if !strings.Contains(j.String(), `tests="2" failures="2"`) {
		t.Fatalf("junit:\n%s", j.String())
	}
}

func TestSessionEpochFromTheIndex(t *testing.T) {
	p, tr := writeSession(t, synth.Default())
	r, err := logfmt.Open(p, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ns, src := SessionEpoch(r)
	rep, _ := AnalyzeFiles([]string{p}, Options{})
	if ns != tr.EpochNs || ns != rep.EpochNs || !strings.Contains(src, "vr/r1/state") {
		t.Fatalf("epoch %d (%s), analysis %d, truth %d", ns, src, rep.EpochNs, tr.EpochNs)
	}
}

// --max-skips gates what the publisher skipped, as record's live max-skips
// does: the recorder's own drops (a seq gap too) are no publisher fault,
// and the message says both figures (it counted the recorder's drops, and
// a stranger read that as the simulator being blamed).
func TestMaxSkipsIsThePublishers(t *testing.T) {
	p, _ := writeSession(t, synth.Default()) // camera: 1 frame skipped by the publisher, 2 dropped by the recorder
	rep, err := AnalyzeFiles([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.ApplyChecks(Thresholds{MaxSkips: limits(t, false, "vr/r1/camera/front=1")}); err != nil {
		t.Fatal(err)
	}
	c := rep.Checks[0]
	if !c.Pass || c.Value != 1 || !strings.Contains(c.Message, "2 more missing by seq were dropped by the recorder") {
		t.Fatalf("%+v", c)
	}
}
