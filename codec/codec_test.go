package codec

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestStateRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 4, 300} {
		s := sampleState(n)
		b := AppendState(nil, &s)
		if len(b) != StateSize(n) {
			t.Fatalf("%d sensors: %d bytes, want %d", n, len(b), StateSize(n))
		}
		got, err := DecodeState(b, s.TNs-2_500_000_000)
		if err != nil {
			t.Fatal(err)
		}
		if got.Elapsed != 2.5 {
			t.Fatalf("elapsed %v, want 2.5", got.Elapsed)
		}
		if re := AppendState(nil, &got); !bytes.Equal(re, b) {
			t.Fatal("re-encoding differs")
		}
		seq, tns, err := StateStamp(b)
		if err != nil || seq != s.Seq || tns != s.TNs {
			t.Fatalf("StateStamp = %d, %d, %v", seq, tns, err)
		}
	}
}

// Every prefix of a valid message is an error naming a field at or before the
// cut, never a panic and never a success.
func TestEveryTruncation(t *testing.T) {
	st := AppendState(nil, ptr(sampleState(3)))
	fr := AppendFrameHeader(nil, ptr(NewFrameHeader(1, 2, 3, 4, 5, Mono8)))
	for _, c := range []struct {
		name string
		b    []byte
		dec  func([]byte) error
	}{
		{"state", st, func(b []byte) error { _, err := DecodeState(b, 0); return err }},
		{"state-stamp", st, func(b []byte) error { _, _, err := StateStamp(b); return err }},
		{"frame", fr, func(b []byte) error { _, err := DecodeFrameHeader(b, 0); return err }},
		{"probe", AppendClockProbe(nil, ClockProbe{1, 2, 3, 4}), func(b []byte) error { _, err := DecodeClockProbe(b); return err }},
		{"reply", AppendTimeReply(nil, TimeReply{1, 2}), func(b []byte) error { _, err := DecodeTimeReply(b); return err }},
	} {
		for n := range len(c.b) {
			err := c.dec(c.b[:n])
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, ErrTruncated) {
				t.Fatalf("%s cut at %d: %v, want a truncation DecodeError", c.name, n, err)
			}
			if de.Offset > n {
				t.Fatalf("%s cut at %d: offset %d past the cut", c.name, n, de.Offset)
			}
		}
		if err := c.dec(c.b); err != nil {
			t.Fatalf("%s whole: %v", c.name, err)
		}
	}
}

func TestForeignAndFutureBytes(t *testing.T) {
	st := AppendState(nil, ptr(sampleState(1)))
	future := bytes.Clone(st)
	future[4] = 2
	if _, err := DecodeState(future, 0); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("future version: %v", err)
	}
	zero := bytes.Clone(st)
	zero[4] = 0
	if _, err := DecodeState(zero, 0); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("version 0: %v", err)
	}
	if _, err := DecodeState([]byte("{\"json\": true, \"padding\": 1234567890}"), 0); !errors.Is(err, ErrBadMagic) {
		t.Fatalf("json: %v", err)
	}
	// A frame header is not a state and vice versa.
	fr := AppendFrameHeader(nil, ptr(NewFrameHeader(1, 2, 3, 4, 5, Mono8)))
	if _, err := DecodeState(fr, 0); !errors.Is(err, ErrBadMagic) {
		t.Fatalf("frame as state: %v", err)
	}
	if _, err := DecodeFrameHeader(st[:48], 0); !errors.Is(err, ErrBadMagic) {
		t.Fatalf("state as frame: %v", err)
	}
	if _, err := DecodeFrame(fr, make([]byte, 19), 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("short payload: %v", err)
	}
}

func TestFrameHeaderNoAlloc(t *testing.T) {
	b := AppendFrameHeader(nil, ptr(NewFrameHeader(1, 2, 3, 640, 480, RGB8)))
	if n := testing.AllocsPerRun(100, func() { DecodeFrameHeader(b, 0) }); n != 0 {
		t.Fatalf("DecodeFrameHeader allocates %v times", n)
	}
	st := AppendState(nil, ptr(sampleState(4)))
	var s State
	if n := testing.AllocsPerRun(100, func() { DecodeStateInto(&s, st, 0) }); n != 0 {
		t.Fatalf("DecodeStateInto allocates %v times", n)
	}
}

func TestRestamp(t *testing.T) {
	s := sampleState(3)
	b := AppendState(nil, &s)
	c, _ := Lookup(SchemaState)
	if err := c.Restamp(nil, b, 1_000); err != nil {
		t.Fatal(err)
	}
	got, _ := DecodeState(b, 0)
	if got.Seq != s.Seq || got.TNs != s.TNs+1000 || got.EstimateTNs != s.EstimateTNs+1000 {
		t.Fatalf("restamp: %+v", got)
	}
	for i := range got.Sensors {
		if got.Sensors[i].TNs != s.Sensors[i].TNs+1000 || got.Sensors[i].ID != s.Sensors[i].ID {
			t.Fatalf("sensor %d: %+v", i, got.Sensors[i])
		}
	}
	h := NewFrameHeader(9, 100, 1, 2, 2, Mono8)
	hb := AppendFrameHeader(nil, &h)
	fc, _ := Lookup(SchemaFrame)
	if err := fc.Restamp(hb, nil, -100); err != nil {
		t.Fatal(err)
	}
	if seq, tns, _ := fc.Stamp(hb, nil); seq != 9 || tns != 0 {
		t.Fatalf("frame restamp: %d %d", seq, tns)
	}
	bad := []byte("garbage")
	if err := c.Restamp(nil, bad, 5); err == nil || string(bad) != "garbage" {
		t.Fatal("restamp of garbage must fail and change nothing")
	}
}

func TestClockProbeMath(t *testing.T) {
	// seeds/002's worked example.
	p := ClockProbe{T1Ns: 1_000_000_000, T2Ns: 1_000_050_000, T3Ns: 1_000_051_000, T4Ns: 1_000_105_000}
	if p.Offset() != -2000 || p.RTT() != 104_000 {
		t.Fatalf("offset %d rtt %d", p.Offset(), p.RTT())
	}
}

func TestSeqSteps(t *testing.T) {
	for _, c := range []struct {
		last, seq uint64
		step      SeqStep
		skipped   uint64
	}{
		{310, 311, SeqNext, 0}, {311, 313, SeqSkip, 1}, {5, 5, SeqDuplicate, 0}, {140, 0, SeqBack, 0},
		{0, math.MaxUint64, SeqSkip, math.MaxUint64 - 1}, {math.MaxUint64, 0, SeqBack, 0},
		{math.MaxUint64 - 1, math.MaxUint64, SeqNext, 0},
	} {
		step, sk := Step(c.last, c.seq)
		if step != c.step || sk != c.skipped || Skipped(c.last, c.seq) != c.skipped || Restarted(c.last, c.seq) != (c.step == SeqBack) {
			t.Errorf("Step(%d, %d) = %v %d, want %v %d", c.last, c.seq, step, sk, c.step, c.skipped)
		}
	}
}

func TestTimeConversions(t *testing.T) {
	// 1970-01-01 is UTS 621355968000000000; 0001-01-01 is UTS 0.
	if got := UnixNsToUTS(0); got != 621_355_968_000_000_000 {
		t.Fatalf("UTS(0) = %d", got)
	}
	if got := UnixNsToUTS(-1); got != 621_355_967_999_999_999 {
		t.Fatalf("UTS(-1) = %d (must round toward the past)", got)
	}
	for _, ns := range []int64{0, 100, -100, 1_700_000_000_123_456_700, math.MinInt64 / 100 * 100, math.MaxInt64 / 100 * 100} {
		back, err := UTSToUnixNs(UnixNsToUTS(ns))
		if err != nil || back != ns {
			t.Fatalf("UTS round trip %d → %d, %v", ns, back, err)
		}
	}
	if _, err := UTSToUnixNs(0); !errors.Is(err, ErrOverflow) {
		t.Fatalf("year 1 is outside int64 ns: %v", err)
	}
	if _, err := UTSToUnixNs(math.MinInt64); !errors.Is(err, ErrOverflow) {
		t.Fatalf("min ticks: %v", err)
	}
	// Cartographer: (sec + offset) * 1e7 + nsec / 100.
	sec, nsec := int64(1_700_000_000), int64(123_456_789)
	if UnixNsToUTS(sec*1e9+nsec) != (sec+UTSEpochOffsetSeconds)*10_000_000+nsec/100 {
		t.Fatal("disagrees with cartographer's RosTimeToUniversal")
	}
	for ns, want := range map[int64]string{
		1_700_000_000_123_456_789: "1700000000.123456789", -500_000_000: "-0.500000000", 0: "0.000000000",
		math.MinInt64: "-9223372036.854775808", math.MaxInt64: "9223372036.854775807",
	} {
		if got := FormatSeconds(ns); got != want {
			t.Errorf("FormatSeconds(%d) = %s, want %s", ns, got, want)
		}
		if back, err := ParseSeconds(want); err != nil || back != ns {
			t.Errorf("ParseSeconds(%s) = %d, %v", want, back, err)
		}
	}
	for _, bad := range []string{"", ".", "1.0000000001", "9223372036.854775808", "1e9", "--1", "abc"} {
		if _, err := ParseSeconds(bad); err == nil {
			t.Errorf("ParseSeconds(%q) accepted", bad)
		}
	}
	if got := FormatRFC3339(1_700_000_000_123_456_789); got != "2023-11-14T22:13:20.123456789Z" {
		t.Fatalf("rfc3339: %s", got)
	}
	if got := FormatRFC3339(-1); got != "1969-12-31T23:59:59.999999999Z" {
		t.Fatalf("rfc3339(-1): %s", got)
	}
	if ns, err := ParseRFC3339("2023-11-15T00:13:20.5+02:00"); err != nil || ns != 1_700_000_000_500_000_000 {
		t.Fatalf("parse rfc3339: %d %v", ns, err)
	}
	if _, err := ParseRFC3339("2300-01-01T00:00:00Z"); !errors.Is(err, ErrOverflow) {
		t.Fatalf("2300: %v", err)
	}
	if Elapsed(math.MaxInt64, math.MinInt64) <= 0 {
		t.Fatal("Elapsed must not wrap")
	}
	for i, f := range []TimeFormat{TimeUnix, TimeElapsed, TimeUTS, TimeRFC3339} {
		g, err := ParseTimeFormat(f.String())
		if err != nil || g != f {
			t.Fatalf("format %d", i)
		}
	}
	if TimeElapsed.Format(21_770_000_000+5, 5) != "21.770000000" {
		t.Fatal("elapsed format")
	}
}

func TestPixelEncodingNames(t *testing.T) {
	for e := RGB8; e <= Mono16; e++ {
		g, err := ParsePixelEncoding(e.String())
		if err != nil || g != e {
			t.Fatalf("%v", e)
		}
	}
	if _, err := ParsePixelEncoding("yuv422"); err == nil {
		t.Fatal("yuv422 accepted")
	}
	if PixelEncoding(0).Valid() || PixelEncoding(7).Valid() {
		t.Fatal("0 and 7 are not encodings")
	}
}

// An answer names its trigger by "vrlog.seq=N" and by nothing else.
func TestAnswerTag(t *testing.T) {
	b := AppendAnswerTag(nil, 18446744073709551615)
	if string(b) != "vrlog.seq=18446744073709551615" {
		t.Fatalf("%q", b)
	}
	if seq, ok := ParseAnswerTag(b); !ok || seq != 18446744073709551615 {
		t.Fatalf("%d %v", seq, ok)
	}
	for _, bad := range []string{"", "vrlog.seq=", "vrlog.seq=-1", "vrlog.seq=1 ", "seq=1", "vrlog.seq=18446744073709551616"} {
		if _, ok := ParseAnswerTag([]byte(bad)); ok {
			t.Errorf("%q names a trigger", bad)
		}
	}
}
