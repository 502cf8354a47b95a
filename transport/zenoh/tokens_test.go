//go:build cgo

package zenoh

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
)

// A session that has just connected finds every token of the network,
// however early it asks (the peers are met through the one it connects
// to, one after another): the recorders of `collect --all` connecting to
// a simulator that listens, asked by a new collector each time. With no
// token at all it waits the whole timeout; its context stops it.
func TestFindTokensOfANewSession(t *testing.T) {
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	open := func(cfg Config) *Session {
		t.Helper()
		cfg.Mode, cfg.DisableMulticastScouting = ModePeer, true
		s, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	hub := open(Config{Listen: []string{ep}})
	var want []string
	for _, name := range []string{"a", "b"} {
		s := open(Config{Connect: []string{ep}})
		tok, err := s.DeclareToken("test/tokens/" + name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tok.Close() })
		want = append(want, "test/tokens/"+name)
	}
	time.Sleep(300 * time.Millisecond) // the peers meet
	for i := range 6 {
		s := open(Config{Connect: []string{ep}})
		start := time.Now()
		got, err := s.FindTokens(context.Background(), "test/tokens/*", 5*time.Second, 300*time.Millisecond)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("new session %d: %v after %v, want %v (%v)", i, got, time.Since(start), want, err)
		}
		s.Close()
	}

	start := time.Now()
	got, err := hub.FindTokens(context.Background(), "test/none/*", 700*time.Millisecond, 100*time.Millisecond)
	if err != nil || len(got) != 0 || time.Since(start) < 700*time.Millisecond {
		t.Fatalf("no token: %v, %v after %v", got, err, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := hub.FindTokens(ctx, "test/none/*", 5*time.Second, 100*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled: %v", err)
	}
}
