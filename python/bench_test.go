package python

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

// BenchmarkPythonReader measures the Python reader on a synthetic session
// of 1 kHz states and 30 Hz 64×48 frames for 1000 s (1.03 M records): the
// rates tests/bench.py reports, as metrics (records/s).
//
//	go test -run '^$' -bench PythonReader -benchtime 1x ./python/
func BenchmarkPythonReader(b *testing.B) {
	cfg := synth.Default()
	cfg.Duration, cfg.StateHz, cfg.FrameHz, cfg.Width, cfg.Height = 1000*time.Second, 1000, 30, 64, 48
	cfg.RestartAt = 0
	path := filepath.Join(b.TempDir(), "bench.vrlog")
	if _, err := synth.WriteFile(path, cfg, logfmt.WriterOptions{}); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		out, err := exec.Command(peertest.Python(b), filepath.Join("tests", "bench.py"), path).CombinedOutput()
		if err != nil {
			b.Fatalf("bench.py: %v\n%s", err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) != 3 {
				b.Fatalf("bench.py: %q", line)
			}
			v, _ := strconv.ParseFloat(f[1], 64)
			b.ReportMetric(v, f[0]+"_rec/s")
		}
	}
}
