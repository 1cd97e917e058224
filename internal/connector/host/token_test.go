package host

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestTokenSpacesTrimmedControlCharactersRefused: a token read from a file
// keeps its line ending; sent as it is, every dial failed before the
// request left ("invalid header field value"), retried for ever as "hub
// unreachable". Surrounding white space is trimmed (the hub trims it
// too); a control character inside is refused by New, without showing the
// token.
func TestTokenSpacesTrimmedControlCharactersRefused(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "tok"})
	setup(t, hub, proto.ReadOnly, nil, func(o *Options) { o.Token = " tok\r\n" })
	if diff := cmp.Diff([]string{"Bearer tok"}, hub.Authorizations()); diff != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", diff)
	}

	ws, err := workspace.Open(workspace.Options{Roots: []string{t.TempDir()}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, tok := range []string{"QTOK\nsecret55", "QTOK\rsecret55", "QTOK\x00secret55", "QTOK\x7fsecret55"} {
		_, err := New(Options{URL: hub.URL, Token: tok, Name: "n", Engine: ops.New(ws, ops.Options{})})
		if err == nil || !strings.Contains(err.Error(), "HTTP header cannot carry") || strings.Contains(err.Error(), "QTOK") {
			t.Errorf("New with token %q: %v; want the token refused, unseen", tok, err)
		}
	}
	// A tab is allowed in a header value.
	if _, err := New(Options{URL: hub.URL, Token: "a\tb", Name: "n", Engine: ops.New(ws, ops.Options{})}); err != nil {
		t.Errorf("New with a tab in the token: %v", err)
	}
}
