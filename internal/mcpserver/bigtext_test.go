package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// decodeAny encodes v as the SDK does (encoding/json) and decodes it
// generically, so two encodings can be compared by meaning.
func decodeAny(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %.200s: %v", b, err)
	}
	return out
}

// checkBigText asserts that the bigText encoding of r means exactly what
// the SDK's encoding does.
func checkBigText(t testing.TB, r *mcp.CallToolResult) {
	t.Helper()
	want := decodeAny(t, r)
	got := decodeAny(t, &bigText{r})
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bigText encoding differs from the SDK's (-sdk +bigText):\n%.2000s", d)
	}
}

func TestBigTextEncodesLikeTheSDK(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("     1\tfunc main() { fmt.Println(\"hi\") }\n", bigTextMin/40+1)
	tricky := "quotes \" backslash \\ tab \t cr \r nul \x00 bell \x07 html <a href='x'>&amp;</a> " +
		"line sep \u2028 para sep \u2029 emoji 😀 invalid \xff\xfe utf-8 " + bigTextMark + " "
	cases := map[string]*mcp.CallToolResult{
		"plain":  {Content: []mcp.Content{&mcp.TextContent{Text: pad}}},
		"tricky": {Content: []mcp.Content{&mcp.TextContent{Text: tricky + pad}}},
		"meta and structured": {
			Meta:              mcp.Meta{"k": "v"},
			Content:           []mcp.Content{&mcp.TextContent{Text: pad, Annotations: &mcp.Annotations{Priority: 0.5}}},
			StructuredContent: map[string]any{"path": "a.go", "lines": 2000},
		},
		"several contents": {Content: []mcp.Content{
			&mcp.TextContent{Text: "small"},
			&mcp.TextContent{Text: pad + "second"},
			&mcp.TextContent{Text: "third"},
		}},
		"below the threshold": {Content: []mcp.Content{&mcp.TextContent{Text: "short " + tricky}}},
		"mark in the small content": {Content: []mcp.Content{
			&mcp.TextContent{Text: bigTextMark},
			&mcp.TextContent{Text: pad},
		}},
	}
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkBigText(t, r)
		})
	}
}

// TestBigTextResults checks the middleware end to end: a large read
// reaches the client intact, through the SDK's real encoding and decoding.
func TestBigTextResults(t *testing.T) {
	t.Parallel()
	// 1,900 lines (under read's default of 2,000), 2.5 times bigTextMin.
	content := strings.Repeat("x := \"<tag>\" + `\\` // \u2028 ü\t and some more text\n", 1900)
	e := newEnv(t, map[string]string{"big.go": content}, envOptions{})
	r := e.ok("read", map[string]any{"path": "big.go"})
	_, body, _ := strings.Cut(r.text, "\n") // after the header line
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	src := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	if len(content) < 2*bigTextMin || len(lines) < len(src) {
		t.Fatalf("read returned %d lines of %d bytes, want at least %d lines of %d", len(lines), len(r.text), len(src), 2*bigTextMin)
	}
	for i, want := range src {
		if got := lines[i][strings.IndexByte(lines[i], '\t')+1:]; got != want {
			t.Fatalf("line %d = %q, want %q", i+1, got, want)
		}
	}
}

func FuzzBigText(f *testing.F) {
	f.Add("hello", "")
	f.Add("\"\\\x00\u2028<>&\xff", "k")
	f.Add(bigTextMark, bigTextMark)
	f.Fuzz(func(t *testing.T, text, meta string) {
		r := &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: text + strings.Repeat(text+"y", bigTextMin/(len(text)+1)+1)}},
		}
		if meta != "" {
			r.Meta = mcp.Meta{meta: meta}
		}
		checkBigText(t, r)
	})
}

func TestBigTextResultsWrapsOnlyLargeSuccesses(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", bigTextMin)
	failed := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}, IsError: true}
	cases := []struct {
		name string
		res  mcp.Result
		wrap bool
	}{
		{"large text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, true},
		{"small text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big[1:]}}}, false},
		{"tool error", failed, false},
		{"other result", &mcp.ListToolsResult{}, false},
	}
	for _, tc := range cases {
		h := bigTextResults(func(context.Context, string, mcp.Request) (mcp.Result, error) { return tc.res, nil })
		got, err := h(context.Background(), "tools/call", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, wrapped := got.(*bigText); wrapped != tc.wrap {
			t.Errorf("%s: wrapped = %v, want %v", tc.name, wrapped, tc.wrap)
		}
	}
}
