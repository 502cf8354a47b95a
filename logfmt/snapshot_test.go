package logfmt

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSnapshotMetadataRoundTrip(t *testing.T) {
	s := &Snapshot{
		Triggers: []SnapshotTrigger{{Cause: "signal SIGUSR1", WallNs: 1_700_000_000_000_000_000, MonoNs: 5_000_000_000},
			{Cause: "max-restarts vr/r1/state: 1 (limit ≤ 0)", WallNs: 1_700_000_001_000_000_000, MonoNs: 6_000_000_000, CaptureNs: 1_700_000_000_999_000_000}},
		TriggerCount: 2, Before: 30 * time.Second, After: 5 * time.Second,
		FromMonoNs: 1, ToMonoNs: 2, FromWallNs: 3, ToWallNs: 4, Short: "the recording ended",
	}
	md := map[string]string{"note": "x"}
	s.AddTo(md)
	if md["vrlog.snapshot.cause"] != "signal SIGUSR1" || md["vrlog.snapshot.trigger_ns"] != "1700000000000000000" {
		t.Fatalf("cause and trigger time: %v", md)
	}
	got, err := ParseSnapshot(md)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, s)
	}
	if got, err := ParseSnapshot(map[string]string{"note": "x"}); got != nil || err != nil {
		t.Fatalf("not a snapshot: %v, %v", got, err)
	}
	md["vrlog.snapshot.after"] = "soon"
	if _, err := ParseSnapshot(md); !errors.Is(err, ErrMalformed) {
		t.Fatalf("bad duration: %v, want ErrMalformed", err)
	}
}

// StoredEpoch reads a cut's or merge's epoch (MetaSessionEpoch) before a
// snapshot's; neither: not ok; a damaged value: an error naming the key.
func TestStoredEpoch(t *testing.T) {
	for _, tc := range []struct {
		md     map[string]string
		ns     int64
		ok     bool
		errKey string
	}{
		{md: map[string]string{}},
		{md: map[string]string{metaSnapshotEpoch: "-5"}, ns: -5, ok: true},
		{md: map[string]string{MetaSessionEpoch: "7", metaSnapshotEpoch: "-5"}, ns: 7, ok: true},
		{md: map[string]string{MetaSessionEpoch: "x"}, errKey: MetaSessionEpoch},
		{md: map[string]string{metaSnapshotEpoch: "x"}, errKey: metaSnapshotEpoch},
	} {
		ns, ok, err := StoredEpoch(tc.md)
		if tc.errKey != "" {
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.errKey) {
				t.Errorf("%v: error %v, want ErrMalformed naming %s", tc.md, err, tc.errKey)
			}
			continue
		}
		if err != nil || ok != tc.ok || ns != tc.ns {
			t.Errorf("%v: %d %v %v, want %d %v", tc.md, ns, ok, err, tc.ns, tc.ok)
		}
	}
}
