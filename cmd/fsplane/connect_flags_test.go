package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
)

// TestConnectTokenFromAFile: a token taken from a file keeps its line
// ending (FSPLANE_CONNECTOR_TOKEN="$(cat token)" leaves a Windows \r).
// Sent as it was, every dial failed before the request left and connect
// retried for ever saying "hub unreachable (net/http: invalid header
// field value …)". Surrounding white space is now trimmed, as the hub
// trims it; a control character inside is refused at once (exit 2),
// without printing the token.
func TestConnectTokenFromAFile(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "tok"})
	p := startConnect(t, []string{"FSPLANE_CONNECTOR_TOKEN=tok\r\n"}, hub.URL, "--no-tui", "--name", "crlf",
		"--root", t.TempDir(), "--state-dir", t.TempDir())
	p.waitLine(t, "connected as h-1")
	if diff := cmp.Diff([]string{"Bearer tok"}, hub.Authorizations()); diff != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", diff)
	}

	got := runBinaryWith(t, t.TempDir(), "", []string{"FSPLANE_CONNECTOR_TOKEN=QTOK\x01secret55"},
		"connect", hub.URL, "--no-tui", "--state-dir", t.TempDir())
	if got.Exit != 2 || !strings.Contains(got.Stderr, "--token (or FSPLANE_CONNECTOR_TOKEN): the value contains a control character, which an HTTP header cannot carry") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and the token refused", got.Exit, got.Stderr)
	}
	if strings.Contains(got.Stdout+got.Stderr, "secret55") {
		t.Errorf("the token is printed:\n%s%s", got.Stdout, got.Stderr)
	}
}

// TestConnectLocalhostInAnyCase: "LOCALHOST" and "localhost." name this
// computer as "localhost" does; connect warned that the token would cross
// the network in clear text.
func TestConnectLocalhostInAnyCase(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"ws://LOCALHOST:1/v2/connector", "ws://Localhost:1/v2/connector", "ws://localhost.:1/v2/connector"} {
		if w := plaintextWarning(in); w != "" {
			t.Errorf("plaintextWarning(%q) = %q, want none", in, w)
		}
	}
	if w := plaintextWarning("ws://localhost.example:1/v2/connector"); w == "" {
		t.Error("no warning for localhost.example")
	}
}

// TestConnectRefusesDotNames: a host named "." or ".." could not be
// addressed: /v2/hosts/../fs/write is a URL path step that clients and
// the hub's router resolve to /v2/fs/write, the hub's own files, so an
// agent's write meant for this computer landed on the hub. connect
// refuses the name at start, as it refuses "-".
func TestConnectRefusesDotNames(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "tok"})
	for _, name := range []string{".", ".."} {
		p := startConnect(t, []string{"FSPLANE_CONNECTOR_TOKEN=tok"}, hub.URL, "--no-tui", "--name", name,
			"--root", t.TempDir(), "--state-dir", t.TempDir())
		code := p.wait(t) // fails after 30 s when connect runs on
		want := `--name "` + name + `": host name "` + name + `" is a step of a URL path`
		if code != 2 || !strings.Contains(p.stderr.String(), want) {
			t.Errorf("--name %q: exit %d, stderr:\n%s\nwant exit 2 and %q", name, code, p.stderr.String(), want)
		}
	}
	if n := hub.Connections(); n != 0 {
		t.Errorf("%d connections, want none", n)
	}
}
