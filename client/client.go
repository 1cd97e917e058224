package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// Client calls one fsplane server. It is safe for concurrent use.
type Client struct {
	base   *url.URL
	hc     *http.Client
	apiKey string
	prefix string // "/v2/hosts/{host}" for a host client: /v2/fs/* routes go there
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key as "Authorization: Bearer".
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient uses hc instead of http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// New returns a client for the server at baseURL (e.g.
// "http://127.0.0.1:18091").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q must be absolute, like http://127.0.0.1:18091", baseURL)
	}
	c := &Client{base: u, hc: http.DefaultClient}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Error is a failed call. For file failures, Data holds the server's
// structured error (its ErrorType is fsplane's stable code: not_found,
// stale_version, ambiguous_match, …); for 422, Validation lists what was
// wrong with the request. Retrying is only useful when Data.Retryable is
// set or Status is 503; a stale_version needs a fresh read first.
type Error struct {
	Status     int    // HTTP status (200 for v1 file failures)
	Message    string // the server's message
	Hint       string // what to do instead, when the server said
	Data       *FileError
	Validation []ValidationError
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fsplane: %s", e.Message)
	if e.Data != nil && e.Data.ErrorType != "" {
		fmt.Fprintf(&b, " (%s)", e.Data.ErrorType)
	}
	for _, v := range e.Validation {
		fmt.Fprintf(&b, "; %s: %s", strings.Join(v.Location, "."), v.Message)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, "; hint: %s", e.Hint)
	}
	return b.String()
}

// Code returns the stable error code ("" when the failure was not a file
// error, e.g. a validation failure or 401).
func (e *Error) Code() string {
	if e.Data == nil {
		return ""
	}
	return e.Data.ErrorType
}

// wire is the envelope as it arrives.
type wire struct {
	Success bool              `json:"success"`
	Message string            `json:"message"`
	Data    json.RawMessage   `json:"data"`
	Hint    *string           `json:"hint"`
	Errors  []ValidationError `json:"errors"`
}

// call sends a request and decodes the envelope's data into out (nil to
// discard). query, when not nil, is a struct encoded by its json tags.
func (c *Client) call(ctx context.Context, method, path string, query, body, out any) (hint string, err error) {
	u := *c.base
	u.Path += c.route(path)
	if query != nil {
		u.RawQuery = encodeQuery(query).Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return "", fmt.Errorf("client: encoding %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("client: reading %s %s: %w", method, path, err)
	}
	var w wire
	if err := json.Unmarshal(raw, &w); err != nil {
		return "", &Error{Status: resp.StatusCode, Message: fmt.Sprintf("unexpected %s response: %.200s", resp.Status, raw)}
	}
	if w.Hint != nil {
		hint = *w.Hint
	}
	if !w.Success || resp.StatusCode >= 300 {
		e := &Error{Status: resp.StatusCode, Message: w.Message, Hint: hint, Validation: w.Errors}
		if len(w.Data) > 0 && string(w.Data) != "null" {
			var fe FileError
			if json.Unmarshal(w.Data, &fe) == nil && fe.ErrorType != "" {
				e.Data = &fe
			}
		}
		return hint, e
	}
	if out != nil && len(w.Data) > 0 {
		if err := json.Unmarshal(w.Data, out); err != nil {
			return hint, fmt.Errorf("client: decoding %s %s: %w", method, path, err)
		}
	}
	return hint, nil
}

// route maps a /v2/fs/ route to the host's /v2/hosts/{host}/fs/ route on
// a host client (see Host).
func (c *Client) route(path string) string {
	if c.prefix != "" {
		if rest, ok := strings.CutPrefix(path, "/v2/fs/"); ok {
			return c.prefix + "/fs/" + rest
		}
	}
	return path
}

// encodeQuery turns a struct into query parameters by its json tags,
// leaving out zero-valued omitempty fields.
func encodeQuery(q any) url.Values {
	vals := url.Values{}
	v := reflect.Indirect(reflect.ValueOf(q))
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				continue
			}
			f = f.Elem()
		} else if strings.Contains(opts, "omitempty") && f.IsZero() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			vals.Set(name, f.String())
		case reflect.Bool:
			vals.Set(name, strconv.FormatBool(f.Bool()))
		case reflect.Int, reflect.Int64:
			vals.Set(name, strconv.FormatInt(f.Int(), 10))
		case reflect.Slice:
			for j := 0; j < f.Len(); j++ {
				vals.Add(name, fmt.Sprint(f.Index(j).Interface()))
			}
		}
	}
	return vals
}

// Int returns a pointer to v, for optional integer fields.
func Int(v int) *int { return &v }

// String returns a pointer to v, for optional string fields.
func String(v string) *string { return &v }
