package schema

import (
	"fmt"
	"math"
	"strings"

	"github.com/vrlog/vrlog/codec"
)

// Receive as a stamp source: the payload and the transport carry no
// capture stamp; timing uses the recorder's receive stamp (no latency).
const Receive = "receive"

// Where a stamp or a counter comes from.
const (
	srcPayload = iota // a field of the payload
	srcZenoh          // the zenoh timestamp / source sequence number
	srcReceive        // stamp: the receive stamp
	srcCount          // seq: the record count
	srcRMW            // the rmw_zenoh attachment (the record's header)
)

// Forms of a payload stamp.
const (
	formInt     = iota // an integer count of units
	formFloat          // a float count of units (seconds by default)
	formSecNsec        // whole seconds and nanoseconds, two integers
)

// epochs: seconds to subtract from a stamp to make it unix time. GPS
// time is ahead of UTC by the 18 leap seconds since 1980 (as of 2017; a
// stamp from before 2017 is off by what was fewer then); TAI by 37.
var epochs = map[string]int64{
	"": 0, "unix": 0, "none": 0,
	"gps": -315964800 + 18,
	"tai": 37,
	"uts": codec.UTSEpochOffsetSeconds,
}

var units = map[string]int64{"ns": 1, "100ns": 100, "us": 1e3, "ms": 1e6, "s": 1e9}

type stampSpec struct {
	src      int
	form     int
	refs     []ref
	kinds    []kind
	unitNs   int64
	epochSec int64 // the stamp's epoch in unix seconds (subtracted)
	latency  bool  // the stamp is on a clock of known epoch
}

type seqSpec struct {
	src  int
	ref  ref
	kind kind
}

var (
	secNames  = []string{"sec", "seconds", "secs", "tv_sec"}
	nsecNames = []string{"nanosec", "nanos", "nsec", "nanoseconds", "tv_nsec"}
)

func (c *Codec) compileStamp() error {
	d, s := &c.decl, &c.stamp
	epoch, ok := epochs[d.Epoch]
	if !ok {
		return fmt.Errorf("epoch=%s: want unix, gps, tai, uts or none", d.Epoch)
	}
	s.epochSec, s.latency = epoch, d.Epoch != "none"
	unit := d.Unit
	switch d.Stamp {
	case RMWSourceTime:
		if d.Unit != "" || d.Epoch != "" {
			return fmt.Errorf("unit and epoch describe a payload stamp, not %s (ns since the unix epoch)", d.Stamp)
		}
		s.src, s.latency = srcRMW, true
		return nil
	case ZenohTimestamp, Receive, "":
		s.src = srcZenoh
		if d.Stamp != ZenohTimestamp {
			s.src = srcReceive
		}
		if d.Unit != "" || d.Epoch != "" {
			return fmt.Errorf("unit and epoch describe a payload stamp, not %s", or(d.Stamp, "the receive stamp"))
		}
		s.latency = d.Stamp == ZenohTimestamp
		return nil
	}
	s.src = srcPayload
	if u, ok := units[unit]; ok && unit != "" {
		s.unitNs = u
	} else if unit != "" {
		return fmt.Errorf("unit=%s: want ns, 100ns, us, ms or s", unit)
	}
	add := func(path string, want ...kind) error {
		r, k, err := c.resolve(path)
		if err != nil {
			return err
		}
		for _, w := range want {
			if k == w {
				s.refs, s.kinds = append(s.refs, r), append(s.kinds, k)
				return nil
			}
		}
		return fmt.Errorf("field %s is a %s, not a stamp's integer or float", path, k)
	}
	if secPath, nsecPath, two := strings.Cut(d.Stamp, "+"); two {
		if unit != "" {
			return fmt.Errorf("unit: a sec+nsec stamp is in seconds and nanoseconds")
		}
		s.form = formSecNsec
		if err := add(secPath, kInt, kUint); err != nil {
			return err
		}
		return add(nsecPath, kInt, kUint)
	}
	_, k, err := c.resolve(d.Stamp)
	if err != nil {
		return err
	}
	switch k {
	case kMessage: // a time message: its sec and nsec fields
		if unit != "" {
			return fmt.Errorf("unit: field %s is a message of seconds and nanoseconds", d.Stamp)
		}
		sec, nsec := c.child(d.Stamp, secNames), c.child(d.Stamp, nsecNames)
		if sec == "" || nsec == "" {
			return fmt.Errorf("field %s is a message without seconds and nanoseconds fields (%s; %s): name them as stamp=%s.SEC+%s.NSEC",
				d.Stamp, strings.Join(secNames, ", "), strings.Join(nsecNames, ", "), d.Stamp, d.Stamp)
		}
		s.form = formSecNsec
		if err := add(sec, kInt, kUint); err != nil {
			return err
		}
		return add(nsec, kInt, kUint)
	case kInt, kUint:
		s.form = formInt
		if s.unitNs == 0 {
			s.unitNs = 1
			if d.Epoch == "uts" {
				s.unitNs = 100
			}
		}
	case kFloat:
		s.form = formFloat
		if s.unitNs == 0 {
			s.unitNs = 1e9
		}
	default:
		return fmt.Errorf("field %s is a %s, not a stamp", d.Stamp, k)
	}
	return add(d.Stamp, k)
}

// child is the first of names that is a field of the message at path.
func (c *Codec) child(path string, names []string) string {
	for _, n := range names {
		if _, _, err := c.resolve(path + "." + n); err == nil {
			return path + "." + n
		}
	}
	return ""
}

func (c *Codec) compileSeq() error {
	d, s := &c.decl, &c.seq
	switch d.Seq {
	case ZenohSourceSN:
		s.src = srcZenoh
	case RMWSequenceNumber:
		s.src = srcRMW
	case Count, "":
		s.src = srcCount
	default:
		s.src = srcPayload
		r, k, err := c.resolve(d.Seq)
		if err != nil {
			return err
		}
		if k != kInt && k != kUint {
			return fmt.Errorf("field %s is a %s, not a counter's integer", d.Seq, k)
		}
		s.ref, s.kind = r, k
	}
	c.refs = nil
	if c.stamp.src == srcPayload {
		c.refs = append(c.refs, c.stamp.refs...)
	}
	if s.src == srcPayload {
		c.refs = append(c.refs, s.ref)
	}
	return nil
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// errStampRange: a stamp that is no time vrlog can hold (int64 unix ns).
var errStampRange = fmt.Errorf("stamp out of range: %w", codec.ErrOverflow)

// ns converts the stamp's values (the first len(refs) of vals) to unix ns.
func (s *stampSpec) ns(vals []num) (int64, error) {
	if vals[0].absent {
		return 0, &codec.DecodeError{Field: "stamp", Err: codec.ErrInvalid, Detail: "absent from the message"}
	}
	epochNs := s.epochSec * 1e9
	switch s.form {
	case formSecNsec:
		sec, nsec := asInt(vals[0]), asInt(vals[1])
		if nsec < 0 || nsec >= 1e9 {
			return 0, &codec.DecodeError{Field: "nanoseconds", Err: codec.ErrInvalid, Detail: fmt.Sprintf("%d is not in 0..999999999", nsec)}
		}
		sec -= s.epochSec
		if sec > math.MaxInt64/1_000_000_000-1 || sec < math.MinInt64/1_000_000_000+1 {
			return 0, errStampRange
		}
		return sec*1e9 + nsec, nil
	case formFloat:
		f := vals[0].f*float64(s.unitNs) - float64(epochNs)
		t, ok := clampInt(math.Round(f))
		if !ok || math.IsInf(vals[0].f, 0) {
			return 0, errStampRange
		}
		return t, nil
	}
	v := vals[0]
	if v.k == kFloat { // a JSON number with a fraction
		t, ok := clampInt(math.Round(v.f*float64(s.unitNs) - float64(epochNs)))
		if !ok || math.IsInf(v.f, 0) {
			return 0, errStampRange
		}
		return t, nil
	}
	epochUnits := epochNs / s.unitNs
	var d int64
	if v.k == kUint {
		if v.u > math.MaxInt64 {
			return 0, errStampRange
		}
		d = int64(v.u)
	} else {
		d = v.i
	}
	if (epochUnits > 0 && d < math.MinInt64+epochUnits) || (epochUnits < 0 && d > math.MaxInt64+epochUnits) {
		return 0, errStampRange
	}
	d -= epochUnits
	if d > math.MaxInt64/s.unitNs || d < math.MinInt64/s.unitNs {
		return 0, errStampRange
	}
	return d * s.unitNs, nil
}

// set sets vals (of the stamp's kinds) to unix ns t.
func (s *stampSpec) set(vals []num, t int64) error {
	put := func(v *num, x int64) error {
		if v.k == kUint {
			if x < 0 {
				return errStampRange
			}
			v.u = uint64(x)
		} else {
			v.i = x
		}
		return nil
	}
	switch s.form {
	case formSecNsec:
		sec, nsec := t/1e9, t%1e9
		if nsec < 0 {
			sec, nsec = sec-1, nsec+1e9
		}
		if err := put(&vals[0], sec+s.epochSec); err != nil {
			return err
		}
		return put(&vals[1], nsec)
	}
	if s.form == formFloat || vals[0].k == kFloat {
		vals[0].f = (float64(t) + float64(s.epochSec)*1e9) / float64(s.unitNs)
		return nil
	}
	return put(&vals[0], t/s.unitNs+s.epochSec*(1e9/s.unitNs))
}

func asInt(v num) int64 {
	switch v.k {
	case kUint:
		if v.u > math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(v.u)
	case kFloat:
		i, _ := clampInt(v.f)
		return i
	}
	return v.i
}
