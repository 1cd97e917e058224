package client

import "context"

// Grep searches file contents (POST /v2/fs/grep).
func (c *Client) Grep(ctx context.Context, req GrepRequest) (*GrepResult, error) {
	return do[GrepResult](ctx, c, "POST", "/v2/fs/grep", nil, req)
}

// Find finds files by name (GET /v2/fs/search).
func (c *Client) Find(ctx context.Context, q FindQuery) (*FindResult, error) {
	return do[FindResult](ctx, c, "GET", "/v2/fs/search", q, nil)
}

// V1Grep searches file contents (POST /v1/file/grep).
func (c *Client) V1Grep(ctx context.Context, req GrepRequest) (*GrepResult, error) {
	return do[GrepResult](ctx, c, "POST", "/v1/file/grep", nil, req)
}

// V1Search searches one file (POST /v1/file/search).
func (c *Client) V1Search(ctx context.Context, req V1SearchRequest) (*SearchResult, error) {
	return do[SearchResult](ctx, c, "POST", "/v1/file/search", nil, req)
}

// V1Find finds files by name (POST /v1/file/find).
func (c *Client) V1Find(ctx context.Context, req V1FindRequest) (*FindResult, error) {
	return do[FindResult](ctx, c, "POST", "/v1/file/find", nil, req)
}

// V1Glob lists paths matching a glob with metadata (POST /v1/file/glob).
func (c *Client) V1Glob(ctx context.Context, req GlobRequest) (*GlobResult, error) {
	return do[GlobResult](ctx, c, "POST", "/v1/file/glob", nil, req)
}
