package mcpserver

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestStdioTransportIDsTheSDKWouldChange: the SDK reads a numeric id as a
// float64 and answers with its int64, so an integer id a float64 does not
// hold exactly (past 2^53) or one outside int64 would be answered with
// another id (2^53+1 as 2^53, 12345678901234567890 as -2^63): possibly
// that of another call. Such a call is refused with -32600 and id null, as
// a fractional id is; an error about a line the SDK never sees does not
// carry such an id either. Integers it holds exactly stay ids.
func TestStdioTransportIDsTheSDKWouldChange(t *testing.T) {
	t.Parallel()
	const limit = 1024
	c := newRawClient(t, nil, "2025-06-18", func(tr *stdioTransport) { tr.maxLine = limit })
	long := strings.Repeat("x", 2*limit)
	for _, tc := range []struct {
		line string
		code int
		says string
	}{
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "too large to be answered exactly"},
		{`{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "too large to be answered exactly"},
		{`{"jsonrpc":"2.0","id":-9223372036854775809,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, "too large"},
		{`{"jsonrpc":"2.0","id":1e19,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "too large"},
		{`[{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, "batch member 0"},
		// The SDK takes the last of several ids, which the first hid.
		{`{"jsonrpc":"2.0","id":1,"id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, `more than one "id" member`},
		{`{"jsonrpc":"2.0","id":1,"id":9007199254740993,"method":"ping"}`, jsonrpc.CodeInvalidRequest, `more than one "id" member`},
		// Not a valid request: the error names the request's id only when
		// it is the one the client sent.
		{`{"jsonrpc":"1.0","id":12345678901234567890,"method":"ping"}`, jsonrpc.CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"c":"` + long + `"}}`, jsonrpc.CodeInvalidRequest, "limit of 1024 bytes"},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"c":"` + long + `"},"id":9007199254740993}`, jsonrpc.CodeInvalidRequest, "limit of 1024 bytes"},
	} {
		c.send(tc.line)
		wantRPCError(t, c.recv(), tc.code, nil, tc.says)
	}
	for _, id := range []string{"9007199254740992", "-9007199254740992", "1152921504606846976", "1e3"} {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		f, err := strconv.ParseFloat(id, 64)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"jsonrpc": "2.0", "id": f, "result": map[string]any{}}
		if d := cmp.Diff(want, c.recv()); d != "" {
			t.Errorf("ping with id %s (-want +got):\n%s", id, d)
		}
	}
	c.wantPong()
}
