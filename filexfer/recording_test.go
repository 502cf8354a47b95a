package filexfer

import (
	"errors"
	"slices"
	"testing"
)

// OfRecording picks one recording's files out of a recorder's listing:
// the file named, the files its splits went on in, the recovered copy of
// one its recorder never finished; never another recording's.
func TestOfRecording(t *testing.T) {
	listed := []File{
		{Name: "run.vrlog", Recording: "old"},
		{Name: "run-2.vrlog", Recording: "new"},
		{Name: "run-2_001.vrlog", Recording: "new"},
		{Name: "run-2_002.recovered.vrlog", Recording: "new", Recovered: true, RecoveredFrom: "run-2_002.vrlog"},
		{Name: "run-3.vrlog", Recording: "newer"},
		{Name: "bare.vrlog"},
		{Name: "bare_001.vrlog"},
	}
	names := func(fs []File) (out []string) {
		for _, f := range fs {
			out = append(out, f.Name)
		}
		return out
	}
	for _, tc := range []struct {
		first string
		want  []string
	}{
		{"run-2.vrlog", []string{"run-2.vrlog", "run-2_001.vrlog", "run-2_002.recovered.vrlog"}},
		{"run-2_002.vrlog", []string{"run-2.vrlog", "run-2_001.vrlog", "run-2_002.recovered.vrlog"}}, // named by its original
		{"run.vrlog", []string{"run.vrlog"}},
		{"bare.vrlog", []string{"bare.vrlog"}}, // no id: that file alone
	} {
		got, err := OfRecording(listed, tc.first)
		if err != nil || !slices.Equal(names(got), tc.want) {
			t.Errorf("%s: %v %v, want %v", tc.first, names(got), err, tc.want)
		}
	}
	for _, first := range []string{"missing.vrlog", "", "../run.vrlog"} {
		if got, err := OfRecording(listed, first); !errors.Is(err, ErrNoRecording) {
			t.Errorf("%q: %v %v, want ErrNoRecording", first, names(got), err)
		}
	}
}
