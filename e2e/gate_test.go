package e2e

import (
	"encoding/json"
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
		{name: "against itself: every metric is a passed check", script: good + "vrlog analyze run.vrlog --baseline good.json --junit bj.xml --baseline-tolerance dt_ms.p99=0.1",
			want: []string{"PASS  baseline vr/r1/state dt_ms.p99: "}, made: []string{"bj.xml"},
			check: junitHas("bj.xml", `failures="0"`, `name="baseline vr/r1/state rate_hz"`)},
		{name: "a metric that is none", script: good + "vrlog analyze run.vrlog --baseline good.json --baseline-tolerance latency=1", code: 2,
			want: []string{`--baseline-tolerance latency=1: no metric "latency" (the metrics: skipped, `}},
		{name: "a channel lost", script: good + "vrlog cut run.vrlog -o s.vrlog --channel vr/r1/state && vrlog analyze s.vrlog --baseline good.json --junit bj.xml", code: 1,
			want:  []string{"FAIL  baseline vr/r1/camera/front: the channel is in the baseline but not in this log"},
			check: junitHas("bj.xml", `name="baseline vr/r1/camera/front"`)},
		{name: "an empty log", script: good + "vrlog record -o empty.vrlog -k 'vr/x/**' --connect tcp/127.0.0.1:" + port +
			" --no-multicast --duration 1s --probe-interval 0 -q; vrlog analyze empty.vrlog --baseline good.json --junit bj.xml", code: 1,
			want: []string{"FAIL  baseline vr/r1/state: the channel is in the baseline but not in this log"}, check: junitHas("bj.xml", `failures="`)},
	})
}

// Two clean runs of one log, back to back (the sample's first 5 s
// replayed, restamped, into a recorder, twice): the second passes a
// baseline of the first with the default tolerances (the camera's latency
// p99 differed by 45 %, and one tolerance for every metric failed it).
func TestBaselineOfTwoCleanRuns(t *testing.T) {
	port := strconv.Itoa(freePort(t))
	ep := " --no-multicast --listen tcp/127.0.0.1:" + port
	run := func(i string) string {
		return "vrlog record -q -k 'ROBOT/**' -s 'ROBOT/**' -o run" + i + ".vrlog --duration 60s" + ep + " & rec=$!; " +
			"vrlog replay run.vrlog -q --duration 5 --restamp --prefix ROBOT --wait-for-subscribers 1 --wait-timeout 20s --linger 1s" +
			" --no-multicast --connect tcp/127.0.0.1:" + port + " > /dev/null || exit 9; kill -INT $rec; wait $rec || exit 8; "
	}
	runContract(t, []contractCase{{name: "two clean runs", script: run("1") + run("2") +
		"vrlog analyze run1.vrlog --json > base.json && vrlog analyze run2.vrlog --baseline base.json --junit bj.xml",
		want:  []string{"/vr/r1/camera/front rate_hz", "not compared: timing percentiles vary", "result: PASS"},
		check: junitHas("bj.xml", `failures="0"`)}})
}

// A numeric flag out of range, NaN or Inf is a usage error naming the flag
// and its range: the analyzer replaced values <= 0 by defaults, NaN passed
// that test, and a NaN --outage-factor passed a --max-outage gate on a log
// with a 16 s outage.
func TestNumbersInRange(t *testing.T) {
	port := strconv.Itoa(freePort(t))
	var cases []contractCase
	for _, c := range []struct{ args, want string }{
		{"--outage-factor=nan --max-outage 100ms", "--outage-factor NaN: want a factor > 1"},
		{"--outage-factor=inf", "--outage-factor +Inf: want a factor > 1"},
		{"--outage-factor=-1", "--outage-factor -1: want a factor > 1"},
		{"--outage-factor=nan --json", "--outage-factor NaN"},
		{"--lag-tolerance=-5ms", "--lag-tolerance -5ms: want a duration > 0"},
		{"--baseline-tolerance=nan --baseline good.json", "--baseline-tolerance NaN: want a relative worsening >= 0"},
		{"--baseline-tolerance=-1 --baseline good.json", "--baseline-tolerance -1"},
		{"--max-lag-reject 1.5", `--max-lag-reject "1.5": want a fraction from 0 to 1`},
		{"--max-lag-reject vr/**=1.5", `--max-lag-reject "vr/**=1.5"`},
	} {
		cases = append(cases, contractCase{name: "analyze " + c.args, script: "vrlog analyze run.vrlog --json > good.json; vrlog analyze run.vrlog --junit j.xml " + c.args,
			code: 2, want: []string{c.want}, absent: []string{"j.xml"}})
	}
	ep := " --connect tcp/127.0.0.1:" + port + " --no-multicast "
	for _, c := range []struct{ cmd, want string }{
		{"record -o x.vrlog -k 'vr/x/**' --duration -1s", "--duration -1s: want a duration >= 0"},
		{"record -o x.vrlog -k 'vr/x/**' --duration 1s --flush-interval -1s", "--flush-interval -1s"},
		{"record -o x.vrlog -k 'vr/x/**' --duration 1s --snapshot -1s", "--snapshot -1s"},
		{"sim --duration -1s", "--duration -1s: want a duration >= 0"},
		{"sim --duration 1s --state-hz nan", "--state-hz NaN: want a rate in (0, 1e6] Hz"},
		{"sim --duration 1s --frame-hz inf", "--frame-hz +Inf"},
		{"sim --duration 1s --drop-random 2", "--drop-random 2: want a probability from 0 to 1"},
		{"replay run.vrlog --linger -1s", "--linger -1s: want a duration >= 0"},
		{"controller --duration 1s --kp nan", "--kp NaN: want a finite gain"},
		{"controller --duration 1s --target 1,inf,0", `--target: "1,inf,0": want X,Y,Z, finite numbers`},
	} {
		// timeout: a negative --duration once ran forever.
		cases = append(cases, contractCase{name: c.cmd, script: "timeout 20 vrlog " + c.cmd + ep, code: 2, want: []string{c.want}, absent: []string{"x.vrlog"}})
	}
	runContract(t, cases)
}

// A torn tail is analyzed (a killed recorder leaves one) but always said on
// stderr, -q included; --require-intact fails the gate on it.
func TestTornTailIsLoud(t *testing.T) {
	trunc := "head -c $(( $(stat -c %s run.vrlog) / 2 )) run.vrlog > trunc.vrlog && "
	runContract(t, []contractCase{
		{name: "quiet still warns", script: trunc + "vrlog analyze trunc.vrlog --max-skips 1000 -q 2>err.txt; echo rc=$?; cat err.txt",
			want: []string{"rc=0", "analyze: warning: trunc.vrlog: torn tail at byte "}},
		{name: "json still warns", script: trunc + "vrlog analyze trunc.vrlog --json >/dev/null", want: []string{"analyze: warning: trunc.vrlog: torn tail at byte "}},
		{name: "--require-intact fails it", script: trunc + "vrlog analyze trunc.vrlog --require-intact --junit j.xml -q", code: 1,
			want: []string{"FAIL  intact trunc.vrlog: torn tail at byte "}, check: junitHas("j.xml", `name="intact trunc.vrlog"`, `failures="1"`)},
		{name: "--require-intact passes a whole log", script: "vrlog analyze run.vrlog --require-intact --junit j.xml -q",
			check: junitHas("j.xml", `name="intact run.vrlog"`, `failures="0"`)},
	})
}

// Default analyze reads record metadata only (a small part of a frame log),
// so a corrupt payload goes unnoticed: the report says payloads were not
// checked, --full-decode and verify find it.
func TestPayloadsNotCheckedIsSaid(t *testing.T) {
	flip := `off=$(( $(stat -c %s run.vrlog) / 2 )); cp run.vrlog flip.vrlog; printf '\xff' | dd of=flip.vrlog bs=1 seek=$off conv=notrunc status=none; `
	runContract(t, []contractCase{
		{name: "metadata only says so", script: flip + "vrlog analyze flip.vrlog; vrlog analyze flip.vrlog --json | grep payloads_checked",
			want: []string{"checked record metadata and its CRCs only: payload CRCs not checked (vrlog verify, or a full decode)", `"payloads_checked": false`}},
		{name: "--full-decode finds it", script: flip + "vrlog analyze flip.vrlog --full-decode", code: 2, want: []string{"CRC mismatch"}},
		{name: "--full-decode says it checked", script: "vrlog analyze run.vrlog --full-decode --json | grep payloads_checked", want: []string{`"payloads_checked": true`}},
		{name: "verify finds it", script: flip + "vrlog verify flip.vrlog", code: 1, want: []string{"CRC mismatch"}},
	})
}

// A --max-outage below --outage-factor × the nominal period cannot fail on
// a shorter gap: the check, a note and stderr say so, with the longest gap.
func TestOutageLimitBelowDetection(t *testing.T) {
	runContract(t, []contractCase{
		{name: "warned", script: "vrlog cut run.vrlog -o early.vrlog --start 1 --end 5 --channel vr/r1/state && vrlog analyze early.vrlog --max-outage 50ms --junit j.xml -q 2>err.txt; echo rc=$?; cat err.txt",
			want:  []string{"rc=0", "analyze: warning: max-outage vr/r1/state: limit 50 ms is below the shortest outage the log can show (3 × the nominal period 40 ms = 120 ms)", "the longest gap is "},
			check: junitHas("j.xml", "counts as an outage only above 120 ms")},
		{name: "a limit it can detect is not warned", script: "vrlog analyze run.vrlog --max-outage 500ms -q", code: 1,
			check: func(t *testing.T, _ string, r result) {
				if strings.Contains(r.stderr, "below the shortest outage") {
					t.Errorf("warned: %s", r)
				}
			}},
	})
}

// Two outputs never share stdout: --csv - takes it alone.
func TestOneOutputOnStdout(t *testing.T) {
	runContract(t, []contractCase{
		{name: "--csv - --json", script: "vrlog analyze run.vrlog --csv - --json --junit j.xml", code: 2,
			want: []string{"--csv - writes the CSV to stdout: add -q"}, absent: []string{"j.xml"}},
		{name: "--csv - with the text report", script: "vrlog analyze run.vrlog --csv -", code: 2, want: []string{"--csv - writes the CSV to stdout"}},
		{name: "--csv - -q: failed checks on stderr", script: "vrlog analyze run.vrlog --csv - -q --max-skips 0 2>err.txt > t.csv; echo rc=$?; cat err.txt",
			want: []string{"rc=1", "FAIL  max-skips vr/r1/state: 3"},
			check: func(t *testing.T, dir string, _ result) {
				b, _ := os.ReadFile(filepath.Join(dir, "t.csv"))
				if !strings.HasPrefix(string(b), "channel,seq,") || strings.Contains(string(b), "FAIL") {
					t.Errorf("stdout is not the CSV alone:\n%.300s", b)
				}
			}},
	})
}

// A fault outside the played window injects nothing: exit 2, as a window
// outside the log is.
func TestInjectOutsideWindow(t *testing.T) {
	replay := "vrlog replay run.vrlog --no-multicast --rate max --linger 0 -q "
	runContract(t, []contractCase{
		{name: "outage after the log", script: replay + "--inject outage=100:1", code: 2, want: []string{"--inject: ", "outage at 1m40s: the replayed window lasts 28.4"}},
		{name: "outage after the window", script: replay + "--start 10 --duration 5 --inject outage=6:1", code: 2, want: []string{"outage at 6s: the replayed window lasts 5s"}},
		{name: "restart after the log", script: replay + "--inject restart=29", code: 2, want: []string{"restart at 29s"}},
		{name: "drop=nan", script: replay + "--inject drop=nan", code: 2, want: []string{"drop wants a probability in [0, 1]"}},
		{name: "inside the window", script: replay + "--start 10 --duration 5 --inject outage=4:1"},
	})
}

// A one-record log (a window of 0 s) replays its record, exit 0, with no
// word about faults nobody asked for; an empty log says it is empty
// (issue 24, 4).
func TestOneRecordAndEmptyLogs(t *testing.T) {
	cut := "vrlog cut run.vrlog --channel vr/r1/state --start 1 "
	replay := " && vrlog replay --no-multicast --rate max --linger 0 -q --json "
	runContract(t, []contractCase{
		{name: "one record", script: cut + "--end 1.05 -o one.vrlog > cut.txt" + replay + "one.vrlog",
			check: func(t *testing.T, _ string, r result) {
				var rep struct{ Total struct{ Sent int } }
				if json.Unmarshal([]byte(r.stdout), &rep) != nil || rep.Total.Sent != 1 || strings.Contains(r.stderr, "inject") {
					t.Fatalf("one record: %s", r)
				}
			}},
		{name: "empty", script: cut + "--end 1.001 -o empty.vrlog > cut.txt" + replay + "empty.vrlog", code: 2,
			want: []string{"nothing to replay: empty.vrlog holds no data record (an empty log)"}},
	})
}

// Under an address-space limit (ulimit -v, as CI containers set it) replay
// runs: glibc's per-thread malloc arenas of the native library's threads
// (64 MiB of address space each) reserved about 1.9 GB before any record
// was read, and the Go runtime died with "out of memory" at 30 MB resident
// under the 2,000,000 kB; bounded to one arena per core
// (transport/zenoh/arenas.go, TestMallocArenasBounded) it peaks near 1.4 GB.
func TestReplayUnderAnAddressSpaceLimit(t *testing.T) {
	runContract(t, []contractCase{
		{name: "ulimit -v 2000000", script: "ulimit -v 2000000 && vrlog replay run.vrlog --no-multicast --listen tcp/127.0.0.1:0 --rate max --end 2 --linger 0 -q --json",
			check: func(t *testing.T, _ string, r result) {
				if strings.Contains(r.stderr, "out of memory") || strings.Contains(r.stderr, "fatal error") {
					t.Fatalf("replay under ulimit -v: %s", r)
				}
			}},
	})
}

// A lockstep replay no controller answered is a failed check, not a pass.
func TestLockstepWithoutAnswer(t *testing.T) {
	runContract(t, []contractCase{
		{name: "no answer at all", script: "vrlog replay run.vrlog --no-multicast --prefix ROBOT --end 2 --lockstep ROBOT/cmd --lockstep-timeout 20ms --linger 0 -q", code: 1,
			want: []string{"/cmd: no answer at all: 3 trigger records in a row went out unanswered after the 20ms timeout", "--max-missed-in-a-row"}},
	})
}

// verify --json on a file it cannot check gives the error, not counts
// that read as an empty sound file.
func TestVerifyJSONUncheckable(t *testing.T) {
	runContract(t, []contractCase{
		{name: "missing file", script: "vrlog verify nope.vrlog run.vrlog --json", code: 2,
			check: func(t *testing.T, _ string, r result) {
				lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
				var bad, good map[string]any
				if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &bad) != nil || json.Unmarshal([]byte(lines[1]), &good) != nil {
					t.Fatalf("want two JSON lines; %s", r)
				}
				if len(bad) != 3 || bad["file"] != "nope.vrlog" || bad["ok"] != false || !strings.Contains(bad["error"].(string), "no such file") {
					t.Errorf("uncheckable file: %v", bad)
				}
				if _, ok := good["error"]; ok || good["ok"] != true || good["records"] == nil {
					t.Errorf("sound file: %v", good)
				}
			}},
	})
}
