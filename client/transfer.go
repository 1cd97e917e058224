package client

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// request sends a request whose body is not JSON and returns the response
// of a successful call (status < 300). A failure is decoded into *Error
// and the body closed.
func (c *Client) request(ctx context.Context, method, path string, query url.Values, body io.Reader, header http.Header) (*http.Response, error) {
	resp, err := c.send(ctx, method, path, query, body, header)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_, err = decodeEnvelope(resp, raw, method, path, nil)
	return nil, err
}

// Upload streams r to the file path (POST /v2/fs/upload) as
// multipart/form-data without buffering it; the server renames it into
// place when complete. user, when set, owns a created file.
func (c *Client) Upload(ctx context.Context, path string, r io.Reader, user string) (*UploadResult, error) {
	return c.UploadWith(ctx, path, r, UploadOptions{User: user})
}

// UploadOptions are the optional fields of an upload.
type UploadOptions struct {
	User string // owns a created file
	// ExpectedVersion: replace the file only if it still has this version
	// (an *Error with code stale_version otherwise; nothing is written).
	ExpectedVersion string
}

// UploadWith is Upload with options.
func (c *Client) UploadWith(ctx context.Context, path string, r io.Reader, opts UploadOptions) (*UploadResult, error) {
	q := url.Values{}
	if opts.User != "" {
		q.Set("user", opts.User)
	}
	if opts.ExpectedVersion != "" {
		q.Set("expected_version", opts.ExpectedVersion)
	}
	c.setUser(q, "POST /v2/fs/upload")
	return c.upload(ctx, "/v2/fs/upload", path, r, q)
}

// V1Upload is Upload on POST /v1/file/upload (failures still come back
// as *Error, from the envelope's success:false).
func (c *Client) V1Upload(ctx context.Context, path string, r io.Reader) (*UploadResult, error) {
	return c.upload(ctx, "/v1/file/upload", path, r, url.Values{})
}

func (c *Client) upload(ctx context.Context, route, path string, r io.Reader, q url.Values) (*UploadResult, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := mw.WriteField("path", path)
		if err == nil {
			var part io.Writer
			if part, err = mw.CreateFormFile("file", baseName(path)); err == nil {
				_, err = io.Copy(part, r)
			}
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	// r may block for ever: ending ctx unblocks the request's body read
	// (the copy goroutine ends when r returns).
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(context.Cause(ctx)) })
	defer stop()
	resp, err := c.request(ctx, "POST", route, q, pr, http.Header{"Content-Type": {mw.FormDataContentType()}})
	pr.CloseWithError(io.ErrClosedPipe) // stop the writer if the server answered early
	if err != nil {
		return nil, err
	}
	var out UploadResult
	if _, err := c.decodeData(resp, "POST", route, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// DownloadOptions qualify a Download.
type DownloadOptions struct {
	ChangePolicy string // "ignore" (default) or "abort"
	Range        string // e.g. "bytes=0-1023"
	IfRange      string // an ETag or HTTP date
	Head         bool   // headers only (HEAD)
	V1           bool   // use /v1/file/download
}

// Download is an open download. Read Body to its end and close it; with
// change_policy abort, a read error (io.ErrUnexpectedEOF) means the file
// changed during the transfer and the bytes must be discarded.
type Download struct {
	Body         io.ReadCloser
	Status       int   // 200, or 206 for a range
	Size         int64 // Content-Length of this response
	ETag         string
	Version      string // the ETag without quotes: the content version
	LastModified time.Time
	ContentRange string
}

// Download opens a file's raw bytes (GET /v2/fs/download). Failures
// (404, 409 changed, 416 bad range) come back as *Error.
func (c *Client) Download(ctx context.Context, path string, opts DownloadOptions) (*Download, error) {
	q := url.Values{"path": {path}}
	if opts.ChangePolicy != "" {
		q.Set("change_policy", opts.ChangePolicy)
	}
	h := http.Header{}
	if opts.Range != "" {
		h.Set("Range", opts.Range)
	}
	if opts.IfRange != "" {
		h.Set("If-Range", opts.IfRange)
	}
	if c.prefix != "" && opts.ChangePolicy != "" {
		// The host route serves Range and If-Range but has no
		// change_policy: it would ignore it.
		return nil, notOnHost("GET /v2/fs/download with ChangePolicy")
	}
	method, route := "GET", "/v2/fs/download"
	if opts.Head {
		method = "HEAD"
	}
	if opts.V1 {
		route = "/v1/file/download"
	}
	resp, err := c.request(ctx, method, route, q, nil, h)
	if err != nil {
		return nil, err
	}
	d := &Download{Body: resp.Body, Status: resp.StatusCode, Size: resp.ContentLength, ETag: resp.Header.Get("ETag"),
		ContentRange: resp.Header.Get("Content-Range")}
	if n := len(d.ETag); n >= 2 && d.ETag[0] == '"' {
		d.Version = d.ETag[1 : n-1]
	}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		d.LastModified = t
	}
	if d.Size < 0 {
		if n, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64); err == nil {
			d.Size = n
		}
	}
	return d, nil
}

// GetTree streams the directory path as a tar archive (GET /v2/fs/tree).
// A read error before the archive's end means the stream was cut. What the
// server could not read is left out, and named by the archive's last
// member: see SkippedInTree.
func (c *Client) GetTree(ctx context.Context, path string) (io.ReadCloser, error) {
	resp, err := c.request(ctx, "GET", "/v2/fs/tree", url.Values{"path": {path}}, nil, nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// PutTree extracts the tar archive r at q.Path (PUT /v2/fs/tree): into a
// new directory (mode rename) or merged into an existing one (merge).
func (c *Client) PutTree(ctx context.Context, q TreeQuery, r io.Reader) (*TreeUploadResult, error) {
	vals := url.Values{"path": {q.Path}}
	if q.User != "" {
		vals.Set("user", q.User)
	}
	c.setUser(vals, "PUT /v2/fs/tree")
	body, stop := stoppable(ctx, r)
	defer stop()
	resp, err := c.request(ctx, "PUT", "/v2/fs/tree", vals, body, http.Header{"Content-Type": {"application/x-tar"}})
	if err != nil {
		return nil, err
	}
	var out TreeUploadResult
	if _, err := c.decodeData(resp, "PUT", "/v2/fs/tree", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// stoppable returns r as a request body that ends with ctx: the transport
// waits for the body's Read before it gives up on a request, and r may
// block for ever (a pipe, a network stream). Readers of memory cannot
// block and are returned as they are, keeping their Content-Length.
// stop ends the copy from r (it ends when r returns) once the request is
// done.
func stoppable(ctx context.Context, r io.Reader) (body io.Reader, stop func()) {
	switch r.(type) {
	case *bytes.Buffer, *bytes.Reader, *strings.Reader:
		return r, func() {}
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err)
	}()
	after := context.AfterFunc(ctx, func() { pw.CloseWithError(context.Cause(ctx)) })
	return pr, func() {
		after()
		pr.CloseWithError(io.ErrClosedPipe)
	}
}
