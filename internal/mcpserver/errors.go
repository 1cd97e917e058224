package mcpserver

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// This file is the MCP front's one error table.
//
// Every *fserr.Error is something the model can act on (fix the call, read
// again, pick another path, or tell the user), so it becomes a tool result
// with isError set and this text:
//
//	Error (no_match): a.go: old_text was not found in the file
//	Hint: the closest region is at line 12 …
//
// and _meta["fsplane/error"] = {code, hint, lines}. When ops gave no hint
// (or one naming another front's alternatives, see ownHint), the code's
// recovery below is used. Protocol errors (unknown
// tool, malformed JSON-RPC) never reach a handler: the SDK answers them
// with JSON-RPC errors. A handler that returns a *jsonrpc.Error makes a
// protocol error too. Any other error is wrapped as io_error.

// recovery is what to do about each code when ops gave no hint.
var recovery = map[fserr.Code]string{
	fserr.NotFound:           "check the path: list the parent directory, or glob for the name",
	fserr.PermissionDenied:   "the operating system refused access; retrying will not help — choose another path or ask the user",
	fserr.AlreadyExists:      "the target exists: pass overwrite (move), recursive (delete), or choose another name",
	fserr.InvalidPath:        "give a non-empty path without NUL bytes, inside a root",
	fserr.OutsideRoot:        "use a path inside one of the allowed roots; relative paths start at the first root",
	fserr.InvalidTarget:      "the path is the wrong kind (a directory where a file is needed, or the reverse); list or stat it",
	fserr.BadRequest:         "fix the arguments as the message says and call again",
	fserr.DecodeError:        "the file is not UTF-8 text (binary or another encoding); these tools only read and edit text",
	fserr.TooLarge:           "too large for this tool: read returns at most 16 MiB of lines per call (ask for fewer), edit and patch take files up to 256 MiB; grep it (path = the file) to find the lines you need",
	fserr.NoSpaceLeft:        "the disk is full; nothing was written — tell the user",
	fserr.ReadOnlyFilesystem: "the file system is mounted read-only; nothing can be written there",
	fserr.ReadOnly:           "this server is read-only: only read, grep, glob, list and stat are available",
	fserr.NoMatch:            "read the file again and copy old_text exactly from it (without the line-number prefix)",
	fserr.AmbiguousMatch:     "add surrounding lines to old_text until it matches once, or set replace_all to change every occurrence",
	fserr.StaleVersion:       "the file changed since you read it: read it again, then redo the change against its current content",
	fserr.MustRead:           "read the file first; line numbers are only valid for the version you read",
	fserr.Conflict:           "the file changed after that edit; undo would discard the later change — read the file and edit it instead",
	fserr.IOError:            "an I/O error occurred; the call may succeed if retried later",
	fserr.Unavailable:        "the target is not connected; retry when it is",
	fserr.Timeout:            "the target did not answer in time; the operation may still have completed — read before retrying",
	fserr.Busy:               "the host is busy with other operations and did not run this one; retry in a moment",
}

// toolError is the error a handler returns for a tool result with
// isError set. Its text is what the model reads.
type toolError struct{ e *fserr.Error }

// Caps of an error: a message naming every line a hunk's context matches
// in a large file would otherwise be megabytes.
const (
	errorMaxMessage = 8 << 10
	errorMaxLines   = 100 // in _meta, as edit's ambiguous_match gives them
)

func (t *toolError) Error() string {
	var b strings.Builder
	b.WriteString("Error (")
	b.WriteString(string(t.e.Code))
	b.WriteString("): ")
	if t.e.Path != "" && !strings.Contains(t.e.Message, t.e.Path) {
		// Name the file when the message does not: a model may have
		// several calls in flight.
		b.WriteString(t.e.Path)
		b.WriteString(": ")
	}
	if m := t.e.Message; len(m) > errorMaxMessage {
		kept := cutUTF8(m, errorMaxMessage)
		b.WriteString(kept)
		b.WriteString(" … [message cut: ")
		b.WriteString(strconv.Itoa(len(m) - len(kept)))
		b.WriteString(" more bytes]")
	} else {
		b.WriteString(m)
	}
	if h := t.hint(); h != "" {
		b.WriteString("\nHint: ")
		b.WriteString(h)
	}
	return b.String()
}

func (t *toolError) Unwrap() error { return t.e }

// ownHint lists the codes whose hint is always the table's: the engine's
// hint names alternatives other fronts have (download, streaming) and
// MCP does not.
var ownHint = map[fserr.Code]bool{fserr.TooLarge: true, fserr.DecodeError: true}

func (t *toolError) hint() string {
	if t.e.Hint != "" && !ownHint[t.e.Code] {
		return t.e.Hint
	}
	return recovery[t.e.Code]
}

// asToolError maps a handler's error (see the table above).
func asToolError(op string, err error) error {
	if err == nil {
		return nil
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return rpc
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The client gave up or the server is stopping: a protocol matter.
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: op + ": " + err.Error()}
	}
	e, ok := fserr.As(err)
	if !ok {
		e = fserr.From(op, "", err)
	}
	return &toolError{e: e}
}

// errorMetaKey names the _meta entry of a failed tool call.
const errorMetaKey = "fsplane/error"

// errorMeta adds _meta["fsplane/error"] = {code, hint, lines} to failed
// tool calls, for programs that act on the code rather than the text.
func errorMeta(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if !ok || r == nil || !r.IsError {
			return res, err
		}
		var te *toolError
		if !errors.As(r.GetError(), &te) {
			const schema = "validating \"arguments\": "
			if r.GetError() == nil || !strings.HasPrefix(r.GetError().Error(), schema) {
				return res, err // not ours to label
			}
			// The SDK refused the arguments against the input schema
			// (a missing or mistyped field) before any handler ran: say
			// so in the same form as every other failure.
			te = &toolError{e: fserr.New(fserr.BadRequest, "", "", "invalid arguments: %s", strings.TrimPrefix(r.GetError().Error(), schema)).
				WithHint("pass the arguments the tool's input schema names, with their types")}
			r.Content = []mcp.Content{&mcp.TextContent{Text: te.Error()}}
		}
		m := map[string]any{"code": string(te.e.Code)}
		if h := te.hint(); h != "" {
			m["hint"] = h
		}
		if len(te.e.Lines) > 0 {
			m["lines"] = te.e.Lines[:min(len(te.e.Lines), errorMaxLines)]
		}
		if te.e.Retryable {
			m["retryable"] = true
		}
		if r.Meta == nil {
			r.Meta = mcp.Meta{}
		}
		r.Meta[errorMetaKey] = m
		return r, err
	}
}
