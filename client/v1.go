package client

import "context"

// V1Read reads a text file (POST /v1/file/read).
func (c *Client) V1Read(ctx context.Context, req V1ReadRequest) (*ReadResult, error) {
	var out ReadResult
	_, err := c.call(ctx, "POST", "/v1/file/read", nil, req, &out)
	return result(&out, err)
}

// V1Write writes a file (POST /v1/file/write).
func (c *Client) V1Write(ctx context.Context, req V1WriteRequest) (*WriteResult, error) {
	var out WriteResult
	_, err := c.call(ctx, "POST", "/v1/file/write", nil, req, &out)
	return result(&out, err)
}

// V1Editor runs a str_replace_editor command (POST /v1/file/str_replace_editor).
func (c *Client) V1Editor(ctx context.Context, req V1EditorRequest) (*EditorResult, error) {
	var out EditorResult
	_, err := c.call(ctx, "POST", "/v1/file/str_replace_editor", nil, req, &out)
	return result(&out, err)
}

// V1Replace replaces every occurrence of a string (POST /v1/file/replace).
func (c *Client) V1Replace(ctx context.Context, req V1ReplaceRequest) (*ReplaceResult, error) {
	var out ReplaceResult
	_, err := c.call(ctx, "POST", "/v1/file/replace", nil, req, &out)
	return result(&out, err)
}
