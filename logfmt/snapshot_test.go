package logfmt

import (
	"errors"
	"reflect"
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
