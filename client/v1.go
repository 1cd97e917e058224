package client

import "context"

// V1Read reads a text file (POST /v1/file/read).
func (c *Client) V1Read(ctx context.Context, req V1ReadRequest) (*ReadResult, error) {
	return do[ReadResult](ctx, c, "POST", "/v1/file/read", nil, req)
}

// V1Write writes a file (POST /v1/file/write).
func (c *Client) V1Write(ctx context.Context, req V1WriteRequest) (*WriteResult, error) {
	return do[WriteResult](ctx, c, "POST", "/v1/file/write", nil, req)
}

// V1Editor runs a str_replace_editor command (POST /v1/file/str_replace_editor).
func (c *Client) V1Editor(ctx context.Context, req V1EditorRequest) (*EditorResult, error) {
	return do[EditorResult](ctx, c, "POST", "/v1/file/str_replace_editor", nil, req)
}

// V1Replace replaces every occurrence of a string (POST /v1/file/replace).
func (c *Client) V1Replace(ctx context.Context, req V1ReplaceRequest) (*ReplaceResult, error) {
	return do[ReplaceResult](ctx, c, "POST", "/v1/file/replace", nil, req)
}

// V1Stat describes a path (POST /v1/file/stat).
func (c *Client) V1Stat(ctx context.Context, req V1StatRequest) (*StatResult, error) {
	return do[StatResult](ctx, c, "POST", "/v1/file/stat", nil, req)
}

// V1List lists a directory (POST /v1/file/list).
func (c *Client) V1List(ctx context.Context, req V1ListRequest) (*ListResult, error) {
	return do[ListResult](ctx, c, "POST", "/v1/file/list", nil, req)
}

// V1Mkdir creates a directory (POST /v1/file/mkdir).
func (c *Client) V1Mkdir(ctx context.Context, req MkdirRequest) (*MkdirResult, error) {
	return do[MkdirResult](ctx, c, "POST", "/v1/file/mkdir", nil, req)
}

// V1Copy copies a file or tree (POST /v1/file/copy).
func (c *Client) V1Copy(ctx context.Context, req CopyRequest) (*CopyResult, error) {
	return do[CopyResult](ctx, c, "POST", "/v1/file/copy", nil, req)
}

// V1Move moves or renames (POST /v1/file/move).
func (c *Client) V1Move(ctx context.Context, req MoveRequest) (*MoveResult, error) {
	return do[MoveResult](ctx, c, "POST", "/v1/file/move", nil, req)
}

// V1Delete removes a path (POST /v1/file/delete).
func (c *Client) V1Delete(ctx context.Context, req DeleteRequest) (*DeleteResult, error) {
	return do[DeleteResult](ctx, c, "POST", "/v1/file/delete", nil, req)
}
