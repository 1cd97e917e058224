// Package mcpserver is fsplane's MCP front: the file tools read, write,
// edit, patch, grep, glob, list, stat, move, delete and undo, served with
// the official Go SDK (github.com/modelcontextprotocol/go-sdk) over stdio
// (fsplane mcp) or streamable HTTP (/mcp on fsplane serve).
//
// It is a thin adapter over internal/ops: each tool decodes its typed
// arguments (the input schema comes from the argument struct's tags),
// calls one ops method and renders the result twice, as text written for
// a model (numbered lines, the tier an edit used, a diff) and as
// structured content for programs. The tool descriptions are the embedded
// Markdown files in tools/; they say when to use which tool and how to
// recover from each error code.
//
// Errors. An *fserr.Error (every failure of ops) becomes a tool result with
// isError set: the text is "Error (code): message" plus the hint, and
// _meta["fsplane/error"] carries {code, hint, lines}, so a model can fix
// its call. Protocol errors (an unknown tool, a malformed request) are
// JSON-RPC errors, answered by the SDK — or, over stdio, for input lines
// the SDK's transport would end the session on (not JSON, not JSON-RPC,
// not UTF-8, too long), by StdioTransport. errors.go holds the one
// mapping table.
//
// Sessions. Each MCP session is one ops Caller, so freshness is per
// session (DESIGN.md §5): a read lets the same session edit by line
// numbers, and a change made by anyone else in between is reported in
// Agent Zero's stale wording. A stdio session, which has no session ID, is
// given a random one. Session state is dropped when the session ends.
// Because of this the server speaks the protocol versions that have
// sessions (up to 2025-11-25): from 2026-07-28 on every HTTP request would
// be a session of its own and roots are deprecated. Clients that prefer
// 2026-07-28 fall back to the initialize handshake, as the SDKs do.
//
// Roots. The allowed set is the workspace's roots (fsplane mcp --root). A
// client that advertises the roots capability narrows it: the session may
// touch only the intersection of its roots (file:// URIs) with the allowed
// set — a client root inside an allowed root, or an allowed root inside a
// client root — and relative paths resolve against the first root of that
// intersection. A client root outside every allowed root grants nothing;
// if nothing is left, every path is refused with outside_root. A client
// that lists no roots, or does not support roots, leaves the allowed set
// as it is. The roots are fetched on the session's first tool call and
// again after notifications/roots/list_changed. A client that advertises
// roots but fails to answer roots/list keeps the roots it gave last, or
// has its calls refused until it answers: a session is never widened.
//
// Tools can be added and removed while sessions are connected (AddTool,
// RemoveTools); connected clients get notifications/tools/list_changed.
// The hub's remote-host tools will be registered that way. A Server is
// safe for concurrent use.
package mcpserver
