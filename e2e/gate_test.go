package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A CI gate that passes when it should fail is the worst bug vrlog can
// have: each row is a way an unattended gate once passed (or said nothing)
// when it should have failed.

// junitHas checks the JUnit file name in dir holds want ("tests=\"9\"").
func junitHas(name string, want ...string) func(t *testing.T, dir string, _ result) {
	return func(t *testing.T, dir string, _ result) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q:\n%s", name, w, b)
			}
		}
		if strings.Contains(string(b), `tests="0"`) {
			t.Errorf("%s has no test case:\n%s", name, b)
		}
	}
}

func TestBaselineGate(t *testing.T) {
	port := strconv.Itoa(freePort(t))
	good := "vrlog analyze run.vrlog --json > good.json && "
	runContract(t, []contractCase{
		{name: "against itself: every metric is a passed check", script: good + "vrlog analyze run.vrlog --baseline good.json --junit bj.xml",
			want: []string{"PASS  baseline vr/r1/state dt_ms.p99: "}, made: []string{"bj.xml"},
			check: junitHas("bj.xml", `failures="0"`, `name="baseline vr/r1/state rate_hz"`)},
		{name: "a channel lost", script: good + "vrlog cut run.vrlog -o s.vrlog --channel vr/r1/state && vrlog analyze s.vrlog --baseline good.json --junit bj.xml", code: 1,
			want:  []string{"FAIL  baseline vr/r1/camera/front: the channel is in the baseline but not in this log"},
			check: junitHas("bj.xml", `name="baseline vr/r1/camera/front"`)},
		{name: "an empty log", script: good + "vrlog record -o empty.vrlog -k 'vr/x/**' --connect tcp/127.0.0.1:" + port +
			" --no-multicast --duration 1s --probe-interval 0 -q; vrlog analyze empty.vrlog --baseline good.json --junit bj.xml", code: 1,
			want: []string{"FAIL  baseline vr/r1/state: the channel is in the baseline but not in this log"}, check: junitHas("bj.xml", `failures="`)},
	})
}
