package mcpserver

import (
	"bytes"
	"context"
	stdjson "encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/segmentio/encoding/json"
)

// bigTextMin is the size from which a tool result's text is encoded by
// bigText. Below it the SDK's encoding costs microseconds and is left alone.
const bigTextMin = 32 << 10

// bigTextResults makes large tool results cheap to encode. The SDK encodes
// a result with encoding/json, whose Marshaler path escapes a TextContent's
// text and then re-scans it twice more (once per nested MarshalJSON); for a
// 2,000-line read that is about 2 ms of a 5 ms call. Wrapping the result
// in bigText escapes the text once, with segmentio/encoding/json (already
// the connector's encoder), and lets encoding/json scan it once.
//
// Only successful tools/call results with a text content of at least
// bigTextMin bytes are wrapped; everything else passes through untouched.
// The wrapper embeds the SDK's result, so every method the SDK calls on a
// Result after the middleware (meta, result type) reaches the real one.
func bigTextResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if !ok || r == nil || r.IsError || bigTextIndex(r) < 0 {
			return res, err
		}
		return &bigText{r}, err
	}
}

// bigTextIndex returns the index of r's one text content of at least
// bigTextMin bytes, or -1.
func bigTextIndex(r *mcp.CallToolResult) int {
	for i, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok && len(t.Text) >= bigTextMin {
			return i
		}
	}
	return -1
}

// bigText is a tool result whose large text content is escaped by a fast
// encoder; see bigTextResults.
type bigText struct{ *mcp.CallToolResult }

// bigTextMark stands in for the text while the SDK encodes the rest of the
// result. Its NUL bytes are escaped in JSON, so file text, which is what
// the text holds, cannot produce its encoding by accident; MarshalJSON
// checks that it occurs exactly once anyway.
const bigTextMark = "\x00fsplane:big-text\x00"

var bigTextMarkJSON, _ = stdjson.Marshal(bigTextMark)

// MarshalJSON encodes the result as the SDK does (every field but the big
// text is the SDK's own encoding), then splices in the text.
func (b *bigText) MarshalJSON() ([]byte, error) {
	i := bigTextIndex(b.CallToolResult)
	if i < 0 {
		return b.CallToolResult.MarshalJSON()
	}
	big := b.Content[i].(*mcp.TextContent)
	mark := *big
	mark.Text = bigTextMark
	shell := *b.CallToolResult
	shell.Content = append([]mcp.Content(nil), b.Content...)
	shell.Content[i] = &mark
	enc, err := shell.MarshalJSON()
	if err != nil {
		return nil, err
	}
	at := bytes.Index(enc, bigTextMarkJSON)
	if at < 0 || bytes.Count(enc, bigTextMarkJSON) != 1 {
		return b.CallToolResult.MarshalJSON()
	}
	out := make([]byte, 0, len(enc)+len(big.Text)+len(big.Text)/8)
	out = append(out, enc[:at]...)
	// No HTML escaping: the result is read by a JSON-RPC client, not a
	// browser (the SDK's own outer encoder does not escape either).
	if out, err = json.Append(out, big.Text, 0); err != nil {
		return nil, err
	}
	return append(out, enc[at+len(bigTextMarkJSON):]...), nil
}
