//go:build !cgo

package zenoh

import (
	"errors"
	"testing"
)

func TestUnavailableWithoutCgo(t *testing.T) {
	if _, err := Open(Config{}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open without cgo: %v", err)
	}
}
