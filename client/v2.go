package client

import "context"

// Read reads a text file (GET /v2/fs/read). StartLine/EndLine are 0-based,
// end exclusive.
func (c *Client) Read(ctx context.Context, q ReadQuery) (*ReadResult, error) {
	var out ReadResult
	_, err := c.call(ctx, "GET", "/v2/fs/read", q, nil, &out)
	return result(&out, err)
}

// Write writes a file atomically (POST /v2/fs/write).
func (c *Client) Write(ctx context.Context, req WriteRequest) (*WriteResult, error) {
	var out WriteResult
	_, err := c.call(ctx, "POST", "/v2/fs/write", nil, req, &out)
	return result(&out, err)
}

// Edit runs str_replace, insert or undo_edit (POST /v2/fs/edit).
func (c *Client) Edit(ctx context.Context, req EditRequest) (*EditorResult, error) {
	var out EditorResult
	_, err := c.call(ctx, "POST", "/v2/fs/edit", nil, req, &out)
	return result(&out, err)
}

// Patch applies a patch, all files or none (POST /v2/fs/patch).
func (c *Client) Patch(ctx context.Context, req PatchRequest) (*PatchResult, error) {
	var out PatchResult
	_, err := c.call(ctx, "POST", "/v2/fs/patch", nil, req, &out)
	return result(&out, err)
}

// Undo reverts a file's last recorded change (POST /v2/fs/undo).
func (c *Client) Undo(ctx context.Context, path string) (*UndoResult, error) {
	var out UndoResult
	_, err := c.call(ctx, "POST", "/v2/fs/undo", nil, UndoRequest{Path: path}, &out)
	return result(&out, err)
}

// Capabilities reports what the server can do (GET /v1/capabilities).
func (c *Client) Capabilities(ctx context.Context) (*Capabilities, error) {
	var out Capabilities
	_, err := c.call(ctx, "GET", "/v1/capabilities", nil, nil, &out)
	return result(&out, err)
}

// Sandbox describes the workspace and system (GET /v2/sandbox).
func (c *Client) Sandbox(ctx context.Context) (*SandboxInfo, error) {
	var out SandboxInfo
	_, err := c.call(ctx, "GET", "/v2/sandbox", nil, nil, &out)
	return result(&out, err)
}

// Ping checks the server answers (GET /v1/ping).
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.call(ctx, "GET", "/v1/ping", nil, nil, nil)
	return err
}

func result[T any](out *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return out, nil
}
