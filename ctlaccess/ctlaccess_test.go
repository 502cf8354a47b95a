//go:build cgo

package ctlaccess

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/internal/peertest"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Open reads the session's own configuration: a peer, a listener and a
// client that does not authenticate are open; a client with a user and
// password is not.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	dict, auth, routerConf := filepath.Join(dir, "credentials.txt"), filepath.Join(dir, "auth.json5"), filepath.Join(dir, "router.json5")
	os.WriteFile(dict, []byte("vrlog-recorder:pw\n"), 0o600)
	os.WriteFile(auth, []byte(`{ transport: { auth: { usrpwd: { user: "vrlog-recorder", password: "pw" } } } }`), 0o600)
	os.WriteFile(routerConf, []byte(`{ transport: { auth: { usrpwd: { dictionary_file: "`+dict+`" } } } }`), 0o600)
	ep := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	open := func(cfg zenoh.Config) *zenoh.Session {
		s, err := zenoh.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	plain := open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{ep}, DisableMulticastScouting: true})
	defer plain.Close()
	authEP := fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))
	router := open(zenoh.Config{Mode: zenoh.ModePeer, Listen: []string{authEP}, DisableMulticastScouting: true, ConfigFile: routerConf})
	defer router.Close()
	for _, tc := range []struct {
		name string
		cfg  zenoh.Config
		want string
	}{
		{"peer", zenoh.Config{Mode: zenoh.ModePeer, Connect: []string{ep}, DisableMulticastScouting: true}, "zenoh peer"},
		{"listener", zenoh.Config{Mode: zenoh.ModeClient, Connect: []string{ep}, Listen: []string{fmt.Sprintf("tcp/127.0.0.1:%d", peertest.FreePort(t))}}, "listens on"},
		{"no auth", zenoh.Config{Mode: zenoh.ModeClient, Connect: []string{ep}}, "does not authenticate"},
		{"usrpwd", zenoh.Config{Mode: zenoh.ModeClient, Connect: []string{authEP}, ConfigFile: auth}, ""},
	} {
		s := open(tc.cfg)
		got := Open(s)
		s.Close()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
