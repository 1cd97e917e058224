package mcpserver

import (
	"context"
	"embed"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolFunc handles one call of a tool. text is what the model reads (the
// result's text content); out is the structured content, and its type
// gives the tool's output schema. A returned error becomes a tool result
// with isError set (an *fserr.Error keeps its code, message and hint; see
// errors.go); a *jsonrpc.Error becomes a JSON-RPC error instead.
type ToolFunc[In, Out any] func(ctx context.Context, c *Call, in In) (text string, out Out, err error)

// AddTool adds t, or replaces the tool of the same name, with handler h.
// The input schema comes from In's json and jsonschema tags unless t sets
// one; arguments are validated against it before h runs. Connected
// clients are sent notifications/tools/list_changed. It panics when a
// schema cannot be derived, so a broken tool fails at start, not on the
// first call.
func AddTool[In, Out any](s *Server, t *mcp.Tool, h ToolFunc[In, Out]) {
	name := t.Name
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	mcp.AddTool(s.mcp, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		c := &Call{Session: req.Session, srv: s, sess: s.session(req.Session)}
		c.Caller = c.sess.caller
		if err := c.loadRoots(ctx); err != nil {
			var zero Out
			return nil, zero, asToolError(name, err)
		}
		text, out, err := h(ctx, c, in)
		if err == nil && readOnly && ctx.Err() != nil {
			// Cancelled (notifications/cancelled) or the session ended:
			// what a reading tool found by then may be partial ("no
			// matches" from a search cut short), so it is not answered
			// as a result. A change that was made is still reported.
			err = ctx.Err()
		}
		if err != nil {
			var zero Out
			return nil, zero, asToolError(name, err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
	})
}

// RemoveTools removes the named tools (absent names are ignored);
// connected clients are sent notifications/tools/list_changed.
func (s *Server) RemoveTools(names ...string) { s.mcp.RemoveTools(names...) }

//go:embed tools/*.md
var descriptions embed.FS

// description returns the embedded description of a tool (tools/NAME.md).
func description(name string) string {
	b, err := descriptions.ReadFile("tools/" + name + ".md")
	if err != nil {
		panic("mcpserver: no description for tool " + name)
	}
	return strings.TrimSpace(string(b))
}

// instructions is the server's initialize instructions: the overview of
// which tool to use when.
func instructions(readOnly bool) string {
	s := description("instructions")
	if readOnly {
		s += "\n\nThis server is read-only: only read, grep, glob, list and stat are available."
	}
	return s
}

// Annotations. Every local tool works on the local file system only, so
// openWorldHint is false throughout. Reading tools are idempotent too
// (the hint is only meaningful for writing tools, but the SDK always
// sends it, so it should not say false).
func readOnlyTool(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
}

func writeTool(title string, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: new(true), IdempotentHint: idempotent, OpenWorldHint: new(false)}
}

// addLocalTools registers the file tools over the server's engine.
func (s *Server) addLocalTools() {
	add := func(t *mcp.Tool) *mcp.Tool {
		t.Description = description(t.Name)
		return t
	}
	AddTool(s, add(&mcp.Tool{Name: "read", Annotations: readOnlyTool("Read a text file")}), readFile)
	AddTool(s, add(&mcp.Tool{Name: "grep", Annotations: readOnlyTool("Search file contents")}), grepFiles)
	AddTool(s, add(&mcp.Tool{Name: "glob", Annotations: readOnlyTool("Find files by name")}), globFiles)
	AddTool(s, add(&mcp.Tool{Name: "list", Annotations: readOnlyTool("List a directory")}), listDir)
	AddTool(s, add(&mcp.Tool{Name: "stat", Annotations: readOnlyTool("Describe a file")}), statFile)
	if s.opts.ReadOnly {
		return
	}
	AddTool(s, add(&mcp.Tool{Name: "write", Annotations: writeTool("Write a whole file", true)}), writeFile)
	AddTool(s, add(&mcp.Tool{Name: "edit", Annotations: writeTool("Edit a file", false), InputSchema: editSchema()}), editFile)
	AddTool(s, add(&mcp.Tool{Name: "patch", Annotations: writeTool("Apply a patch", false)}), patchFiles)
	AddTool(s, add(&mcp.Tool{Name: "move", Annotations: writeTool("Move or rename", false)}), moveFile)
	AddTool(s, add(&mcp.Tool{Name: "delete", Annotations: writeTool("Delete a file or directory", true)}), deleteFile)
	AddTool(s, add(&mcp.Tool{Name: "undo", Annotations: writeTool("Undo the last change of a file", false)}), undoFile)
}

// schemaFor derives T's schema from its tags, then lets fix refine what
// tags cannot say.
func schemaFor[T any](fix func(*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	fix(s)
	return s
}
