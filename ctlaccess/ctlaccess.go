// Package ctlaccess tells whether a recorder's control plane (the zenoh
// queries under vrlog/record/NAME/: its files, and its start, stop, ... )
// sits behind zenoh's own access control, from its session's effective
// configuration. vrlog never decides who may ask: the router's
// access_control rules do, on the identity a client authenticated with
// (deploy/, docs/deployment.md "Access control"). What a recorder can
// check is that it is reached only through such a router: it is a zenoh
// client (a peer is reached by any other peer directly, past every
// router), listens nowhere, and authenticates to its router with a user
// name and password or a TLS client certificate.
package ctlaccess

import (
	"encoding/json"
	"strings"

	"github.com/vrlog/vrlog/transport/zenoh"
)

// Open says whether sess's control plane is open to anyone who reaches
// its zenoh network, and why; "" when it is reached only through a router
// it authenticates to.
func Open(sess *zenoh.Session) string {
	get := func(key string, v any) bool {
		s, err := sess.ConfigValue(key)
		return err == nil && json.Unmarshal([]byte(s), v) == nil
	}
	var mode string
	if get("mode", &mode); mode != "client" {
		return "it is a zenoh " + or(mode, "peer") + ", which other peers reach directly, past any router's access control (use mode client)"
	}
	var listen []string
	if get("listen/endpoints", &listen); len(listen) > 0 {
		return "it listens on " + strings.Join(listen, ", ") + ", where anyone may connect without the router's access control"
	}
	var user string
	get("transport/auth/usrpwd/user", &user)
	var connect []string
	get("connect/endpoints", &connect)
	tlsOnly := len(connect) > 0
	for _, ep := range connect {
		tlsOnly = tlsOnly && strings.HasPrefix(ep, "tls/")
	}
	var cert, cert64 string
	get("transport/link/tls/connect_certificate", &cert)
	get("transport/link/tls/connect_certificate_base64", &cert64)
	if user == "" && !(tlsOnly && (cert != "" || cert64 != "")) {
		return "it does not authenticate to its router (no transport/auth/usrpwd user, no TLS client certificate), so the router's access control cannot tell it from anyone else"
	}
	return ""
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
