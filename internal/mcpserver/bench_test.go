package mcpserver

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchFile is about 1 MB of 80-byte lines.
var benchFile = strings.Repeat("func example(a, b int) int { return a + b } // filler text of a benchmark file\n", 13000)

// BenchmarkReadTool reads the first 2,000 lines of a 1 MB file through
// an in-memory session (client decoding included).
func BenchmarkReadTool(b *testing.B) {
	cs := newEnvB(b, map[string]string{"1mb.txt": benchFile})
	ctx := context.Background()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "1mb.txt"}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkEditTool replaces a unique line in a 1 MB file (a durable,
// atomic write with an undo record each time).
func BenchmarkEditTool(b *testing.B) {
	half := len(benchFile) / 2
	cs := newEnvB(b, map[string]string{"1mb.txt": benchFile[:half] + "MARKER_0\n" + benchFile[half:]})
	ctx := context.Background()
	i := 0
	for b.Loop() {
		from, to := "MARKER_"+strconv.Itoa(i)+"\n", "MARKER_"+strconv.Itoa(i+1)+"\n"
		i++
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "edit", Arguments: map[string]any{"path": "1mb.txt", "old_text": from, "new_text": to}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
