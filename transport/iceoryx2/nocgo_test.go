//go:build !cgo

package iceoryx2

import (
	"errors"
	"testing"
)

func TestUnavailableWithoutCgo(t *testing.T) {
	if _, err := NewNode("x"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("NewNode without cgo: %v", err)
	}
	m := TypeDetails{Payload: TypeDetail{Variant: Dynamic, TypeName: "u8", Size: 1, Alignment: 1}, UserHeader: NoUserHeader}.ToMeta()
	if back, err := TypeDetailsFromMeta(m); err != nil || back.Payload.TypeName != "u8" {
		t.Fatalf("meta round trip without cgo: %+v %v", back, err)
	}
}
