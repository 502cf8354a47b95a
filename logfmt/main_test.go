package logfmt

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		childWriter(path) // re-executed as the writer killed by TestKill9
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if benchDir != "" {
			os.RemoveAll(benchDir)
		}
		os.Exit(code)
	}))
}
