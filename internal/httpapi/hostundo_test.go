package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestUndoExpectedVersionNeedsAHostThatHonoursIt: a host that does not
// announce proto.FeatureUndoHeld (one from before it) would
// ignore expected_version and revert the file's newest change, whoever
// made it; the hub refuses such an undo without sending it, with a hint.
// An undo without expected_version still reaches that host.
func TestUndoExpectedVersionNeedsAHostThatHonoursIt(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, false)
	var undos atomic.Int32
	fakeHost(t, e, func(c *connector.Conn, op *proto.Op) {
		if op.Op == proto.OpUndo {
			undos.Add(1)
		}
		_ = c.Send(context.Background(), &proto.Result{OpID: op.OpID, OK: true, Result: []byte(`{"path":"/x/a.txt"}`)})
	})
	for _, tc := range []struct {
		name      string
		body      string
		status    int
		code      string
		reachHost bool
	}{
		{"with expected_version", `{"path":"a.txt","expected_version":"v1"}`, http.StatusBadRequest, "bad_request", false},
		{"without", `{"path":"a.txt"}`, http.StatusOK, "", true},
	} {
		before := undos.Load()
		resp, err := http.Post(e.url+"/v2/hosts/laptop/fs/undo", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var env struct {
			Hint string `json:"hint"`
			Data struct {
				ErrorType string `json:"error_type"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &env)
		if resp.StatusCode != tc.status || env.Data.ErrorType != tc.code {
			t.Errorf("%s: %d %s, want %d %q", tc.name, resp.StatusCode, body, tc.status, tc.code)
		}
		if tc.code != "" && !strings.Contains(env.Hint, "update fsplane") {
			t.Errorf("%s: hint %q, want one saying to update fsplane on the host", tc.name, env.Hint)
		}
		if reached := undos.Load() > before; reached != tc.reachHost {
			t.Errorf("%s: the undo reached the host: %v, want %v", tc.name, reached, tc.reachHost)
		}
	}
}

// TestHostsListFeatures: GET /v2/hosts reports what a host honours, so a
// caller can tell before an undo with expected_version whether it will
// be refused.
func TestHostsListFeatures(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, false)
	e.connectHost(t, map[string]int64{"a.txt": 1}, proto.Limits{})
	_, body, err := get(t, e.url+"/v2/hosts")
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Data client.HostList `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || len(env.Data.Hosts) != 1 {
		t.Fatalf("hosts: %v %s", err, body)
	}
	if f := env.Data.Hosts[0].Features; !slices.Contains(f, proto.FeatureUndoHeld) {
		t.Errorf("features %q, want %s", f, proto.FeatureUndoHeld)
	}
}
