package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioCancelledCallIsNotAnswered: MCP says the receiver of
// notifications/cancelled should not answer the cancelled request, and
// the official TypeScript client reports any answer that comes anyway
// to its onerror ("Received a response for an unknown message ID"), once
// per cancelled call. So a call the client cancelled gets no answer on
// stdio: not the error of a search cut short, nor the result of a change
// that completed all the same. Other calls are answered as ever, and a
// cancel of a call already answered does not silence a later call that
// reuses its id.
func TestStdioCancelledCallIsNotAnswered(t *testing.T) {
	t.Parallel()
	started := make(chan string, 2)
	c := newRawClientWith(t, func(s *Server) {
		AddTool(s, &mcp.Tool{Name: "slow_read", Description: "waits", Annotations: readOnlyTool("Wait")},
			func(ctx context.Context, _ *Call, _ struct{}) (string, struct{}, error) {
				started <- "slow_read"
				<-ctx.Done()
				return "No matches", struct{}{}, nil
			})
		AddTool(s, &mcp.Tool{Name: "slow_write", Description: "waits, then reports its change", Annotations: writeTool("Wait", false)},
			func(ctx context.Context, _ *Call, _ struct{}) (string, struct{}, error) {
				started <- "slow_write"
				<-ctx.Done()
				return "Wrote it", struct{}{}, nil
			})
	}, nil, "2025-06-18")

	c.send(`{"jsonrpc":"2.0","id":30,"method":"ping"}`)
	if got := c.recv().(map[string]any); got["id"] != 30.0 {
		t.Fatalf("ping 30 answered %v", got)
	}
	// 30 is answered: cancelling it now must be ignored.
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":30}}`)

	for _, call := range []string{
		`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"slow_read","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"w-21","method":"tools/call","params":{"name":"slow_write","arguments":{}}}`,
	} {
		c.send(call)
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the tool did not start")
		}
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":20,"reason":"stop"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w-21","reason":"stop"}}`)
	c.send(`{"jsonrpc":"2.0","id":30,"method":"ping"}`)
	// At the end of input the transport waits until every call it handed
	// on is answered (or dropped), then the session ends: everything the
	// server had to say is in what remains to read.
	c.in.Close()
	rest, err := io.ReadAll(c.out)
	if err != nil {
		t.Fatal(err)
	}
	pong := false
	for _, line := range bytes.Split(rest, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		switch m["id"] {
		case 20.0, "w-21":
			t.Errorf("the cancelled call was answered: %s", line)
		case 30.0:
			pong = true
		}
	}
	if !pong {
		t.Errorf("the ping after the cancels was not answered; output:\n%s", rest)
	}
}
