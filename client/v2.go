package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
)

// Read reads a text file (GET /v2/fs/read). StartLine/EndLine are 0-based,
// end exclusive.
func (c *Client) Read(ctx context.Context, q ReadQuery) (*ReadResult, error) {
	return do[ReadResult](ctx, c, "GET", "/v2/fs/read", q, nil)
}

// Write writes a file atomically (POST /v2/fs/write).
func (c *Client) Write(ctx context.Context, req WriteRequest) (*WriteResult, error) {
	return do[WriteResult](ctx, c, "POST", "/v2/fs/write", nil, req)
}

// Edit runs str_replace, insert or undo_edit (POST /v2/fs/edit).
func (c *Client) Edit(ctx context.Context, req EditRequest) (*EditorResult, error) {
	return do[EditorResult](ctx, c, "POST", "/v2/fs/edit", nil, req)
}

// Patch applies a patch, all files or none (POST /v2/fs/patch).
func (c *Client) Patch(ctx context.Context, req PatchRequest) (*PatchResult, error) {
	return do[PatchResult](ctx, c, "POST", "/v2/fs/patch", nil, req)
}

// Undo reverts a file's last recorded change (POST /v2/fs/undo), whoever
// made it; UndoVersion holds it to a version read.
func (c *Client) Undo(ctx context.Context, path string) (*UndoResult, error) {
	return do[UndoResult](ctx, c, "POST", "/v2/fs/undo", nil, UndoRequest{Path: path})
}

// UndoVersion reverts a file's last recorded change only while the file
// has version, the one the caller read (stale_version otherwise): another
// agent's later change is not reverted unseen.
func (c *Client) UndoVersion(ctx context.Context, path, version string) (*UndoResult, error) {
	return do[UndoResult](ctx, c, "POST", "/v2/fs/undo", nil, UndoRequest{Path: path, ExpectedVersion: version})
}

// Capabilities reports what the server can do (GET /v1/capabilities).
func (c *Client) Capabilities(ctx context.Context) (*Capabilities, error) {
	return do[Capabilities](ctx, c, "GET", "/v1/capabilities", nil, nil)
}

// Sandbox describes the workspace and system (GET /v2/sandbox).
func (c *Client) Sandbox(ctx context.Context) (*SandboxInfo, error) {
	return do[SandboxInfo](ctx, c, "GET", "/v2/sandbox", nil, nil)
}

// Health calls the liveness probe (GET /health, public: no key needed),
// which answers bare JSON, not an envelope.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	resp, err := c.request(ctx, "GET", "/health", nil, nil, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var h Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return nil, fmt.Errorf("client: decoding GET /health: %w", err)
	}
	return &h, nil
}

// Ping checks the server answers (GET /v1/ping).
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.call(ctx, "GET", "/v1/ping", nil, nil, nil)
	return err
}

// do calls the route and decodes its data as a T.
func do[T any](ctx context.Context, c *Client, method, path string, query, body any) (*T, error) {
	var out T
	if _, err := c.call(ctx, method, path, query, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Stat describes a path (GET /v2/fs/stat).
func (c *Client) Stat(ctx context.Context, q StatQuery) (*StatResult, error) {
	return do[StatResult](ctx, c, "GET", "/v2/fs/stat", q, nil)
}

// List lists a directory (GET /v2/fs/list).
func (c *Client) List(ctx context.Context, q ListQuery) (*ListResult, error) {
	return do[ListResult](ctx, c, "GET", "/v2/fs/list", q, nil)
}

// Mkdir creates a directory (POST /v2/fs/mkdir).
func (c *Client) Mkdir(ctx context.Context, req MkdirRequest) (*MkdirResult, error) {
	return do[MkdirResult](ctx, c, "POST", "/v2/fs/mkdir", nil, req)
}

// Copy copies a file or tree (POST /v2/fs/copy).
func (c *Client) Copy(ctx context.Context, req CopyRequest) (*CopyResult, error) {
	return do[CopyResult](ctx, c, "POST", "/v2/fs/copy", nil, req)
}

// Move moves or renames (POST /v2/fs/move).
func (c *Client) Move(ctx context.Context, req MoveRequest) (*MoveResult, error) {
	return do[MoveResult](ctx, c, "POST", "/v2/fs/move", nil, req)
}

// Delete removes a file, link or directory (POST /v2/fs/delete).
func (c *Client) Delete(ctx context.Context, req DeleteRequest) (*DeleteResult, error) {
	return do[DeleteResult](ctx, c, "POST", "/v2/fs/delete", nil, req)
}

// UndoHistory lists a file's recorded changes (GET /v2/fs/undo).
func (c *Client) UndoHistory(ctx context.Context, path string) (*UndoHistory, error) {
	return do[UndoHistory](ctx, c, "GET", "/v2/fs/undo", UndoHistoryQuery{Path: path}, nil)
}

// Hosts lists the connected hosts (GET /v2/hosts).
func (c *Client) Hosts(ctx context.Context) (*HostList, error) {
	return do[HostList](ctx, c, "GET", "/v2/hosts", nil, nil)
}

// Host returns a client whose file methods (Read, Write, Edit, Patch,
// Undo, Stat, List, Grep, Find, Download) address the connected host named host
// ("-" for the only one) through /v2/hosts/{host}/fs/*. Hosts, TextEditor
// and Ping work as on c; every other method fails with ErrNotOnHost
// without sending anything, rather than act on the server's workspace.
func (c *Client) Host(host string) *Client {
	cc := *c
	cc.prefix = "/v2/hosts/" + url.PathEscape(host)
	return &cc
}

// TextEditor calls Agent Zero's text_editor_remote on a host
// (POST /v2/hosts/{host}/text_editor).
func (c *Client) TextEditor(ctx context.Context, host string, req TextEditorRequest) (*TextEditorResult, error) {
	return do[TextEditorResult](ctx, c, "POST", "/v2/hosts/"+url.PathEscape(host)+"/text_editor", nil, req)
}
