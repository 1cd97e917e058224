package main

import (
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
)

// TestConnectNeverPrintsTheURLsSecrets: a token in the hub URL's query (a
// hub behind a proxy may take one) appears nowhere in connect's output:
// not in the banner, not in the reconnection lines that quote the failed
// dial, not in the errors that end it.
func TestConnectNeverPrintsTheURLsSecrets(t *testing.T) {
	t.Parallel()
	const secret = "QTOKsecret55"
	query := "/?token=" + secret + "&api_key=" + secret + "&access_token=" + secret + "&x=" + secret
	hub := hosttest.Start(t, hosttest.Options{Token: "tok"})
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "http://" + free.Addr().String()
	free.Close() // nothing listens there now: every dial fails, quoting the URL
	tests := []struct {
		name  string
		url   string
		env   []string
		steps func(t *testing.T, p *connectProc)
		exit  int
	}{
		{name: "connected, then dropped", url: hub.URL + query, env: []string{"FSPLANE_CONNECTOR_TOKEN=tok"}, steps: func(t *testing.T, p *connectProc) {
			p.waitLine(t, "connected as")
			hub.Drop()
			p.waitLine(t, "reconnecting in")
			p.waitLine(t, "connected as")
		}},
		{name: "unreachable", url: unreachable + query, steps: func(t *testing.T, p *connectProc) {
			p.waitLine(t, "reconnecting in")
			p.waitLine(t, "reconnecting in")
		}},
		{name: "refused token", url: hub.URL + query, env: []string{"FSPLANE_CONNECTOR_TOKEN=wrong"}, exit: 1},
		{name: "credentials too", url: "http://user:" + secret + "@" + strings.TrimPrefix(hub.URL, "http://") + query, exit: 2},
		{name: "unparsable", url: "http://127.0.0.1:port" + query, exit: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startConnect(t, tt.env, tt.url, "--no-tui", "--name", "h", "--root", t.TempDir(), "--state-dir", t.TempDir())
			if tt.steps != nil {
				p.waitLine(t, "fsplane connect: hub ")
				tt.steps(t, p)
				if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			if code := p.wait(t); code != tt.exit {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.exit, p.stderr.String())
			}
			out := p.stdout.String() + p.stderr.String()
			if strings.Contains(out, secret) {
				t.Errorf("the output shows the URL's secret:\n%s", out)
			}
			if tt.steps != nil && !strings.Contains(out, "token=xxxxx") {
				t.Errorf("the output does not show the URL, masked:\n%s", out)
			}
		})
	}
}
