//go:build cgo

package recctl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// A recorder whose liveliness token is there but whose queries go
// unanswered (as behind a router's access control) is ErrIgnored, said
// so; one that is not there at all is only ErrNoAnswer.
func TestAskSaysIgnored(t *testing.T) {
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	a, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := zenoh.Open(zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tok, err := a.DeclareToken(TokenKey("mute")) // a token, no queryable
	if err != nil {
		t.Fatal(err)
	}
	defer tok.Close()
	answers, err := Ask(context.Background(), b, []string{"mute", "gone"}, Start, Request{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(answers[0].Err, ErrIgnored) || !errors.Is(answers[0].Err, ErrNoAnswer) || !strings.Contains(answers[0].Err.Error(), "access control") {
		t.Fatalf("a recorder on the network that does not answer: %v", answers[0].Err)
	}
	if !errors.Is(answers[1].Err, ErrNoAnswer) || errors.Is(answers[1].Err, ErrIgnored) {
		t.Fatalf("a recorder not on the network: %v", answers[1].Err)
	}
}
