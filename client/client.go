package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Client calls one fsplane server. It is safe for concurrent use.
type Client struct {
	base   *url.URL
	hc     *http.Client
	apiKey string
	prefix string // "/v2/hosts/{host}" for a host client: /v2/fs/* routes go there
	user   string // ?user= on userRoutes (see As)
	onHint func(route, hint string)
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key as "Authorization: Bearer".
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient uses hc instead of http.DefaultClient for every call.
// It is how to reach an HTTPS server (fsplane serve --tls-cert) whose
// certificate the system does not trust, such as a self-signed one: give
// hc a transport whose TLSClientConfig.RootCAs holds that certificate.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithHintHandler has f called with the hint of every successful call
// that carries one: route is the method and path called ("POST
// /v2/fs/grep"), hint what the server advises (files left out of a
// search for their size, a file that changed since the caller's last
// read). Failures carry theirs in *Error. f runs on the calling goroutine,
// before the method returns; a Client used from several goroutines calls
// it concurrently.
func WithHintHandler(f func(route, hint string)) Option { return func(c *Client) { c.onHint = f } }

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

// Code returns the stable error code ("unauthorized" for a missing or
// wrong API key; "" when the failure carried no error data, e.g. a
// validation failure).
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

// call sends a JSON request and decodes the envelope's data into out (nil
// to discard). query, when not nil, is a struct encoded by its json tags.
func (c *Client) call(ctx context.Context, method, path string, query, body, out any) (hint string, err error) {
	q := url.Values{}
	if query != nil {
		if q, err = encodeQuery(query); err != nil {
			return "", fmt.Errorf("client: encoding %s %s: %w", method, path, err)
		}
	}
	c.setUser(q, method+" "+path)
	var rd io.Reader
	var header http.Header
	if body != nil {
		if field, bad := invalidUTF8(reflect.ValueOf(body), ""); bad {
			// encoding/json would send each bad byte as U+FFFD: other
			// bytes written, or another file's name.
			return "", fmt.Errorf("client: encoding %s %s: %s is not valid UTF-8, which JSON cannot carry (send bytes as base64 content, or by Upload)", method, path, field)
		}
		b, err := json.Marshal(body)
		if err != nil {
			return "", fmt.Errorf("client: encoding %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
		header = http.Header{"Content-Type": {"application/json"}}
	}
	resp, err := c.send(ctx, method, path, q, rd, header)
	if err != nil {
		return "", err
	}
	return c.decodeData(resp, method, path, out)
}

// decodeData reads a response's envelope into out, and gives a successful
// call's hint to the hint handler.
func (c *Client) decodeData(resp *http.Response, method, path string, out any) (hint string, err error) {
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("client: reading %s %s: %w", method, path, err)
	}
	hint, err = decodeEnvelope(resp, raw, method, path, out)
	if err == nil && hint != "" && c.onHint != nil {
		c.onHint(method+" "+path, hint)
	}
	return hint, err
}

// send sends a request to the route path, through the host's routes on a
// host client.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body io.Reader, header http.Header) (*http.Response, error) {
	route, err := c.route(method, path)
	if err != nil {
		return nil, err
	}
	u := *c.base
	if strings.IndexByte(route, '%') >= 0 {
		// A host name escaped into the route (see Host): keep its
		// escapes, so that "my/box" stays one path segment.
		p, err := url.PathUnescape(route)
		if err != nil {
			return nil, err
		}
		u.RawPath = c.base.EscapedPath() + route
		u.Path += p
	} else {
		u.Path += route
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	return c.hc.Do(req)
}

// ErrorHeader carries a failure's stable code (FileError.ErrorType) beside
// the JSON envelope, for responses without a body (HEAD).
const ErrorHeader = "X-Fsplane-Error"

// decodeEnvelope decodes a response's envelope, once, and then its data
// into either out or, on failure, the *Error: the status, message, hint,
// file error and validation errors all come from that one decoding.
func decodeEnvelope(resp *http.Response, raw []byte, method, path string, out any) (hint string, err error) {
	var w wire
	if code := resp.Header.Get(ErrorHeader); len(raw) == 0 && code != "" {
		// A failed HEAD: the status and the code, without a body.
		return "", &Error{Status: resp.StatusCode, Message: fmt.Sprintf("%s %s: %s", method, path, resp.Status), Data: &FileError{ErrorType: code}}
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return "", &Error{Status: resp.StatusCode, Message: fmt.Sprintf("%s %s: unexpected %s response: %.200s", method, path, resp.Status, raw)}
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

// userRoutes are the JSON routes whose ?user= owns what they create (the
// upload and tree routes take it too).
var userRoutes = []string{"POST /v2/fs/write", "POST /v2/fs/mkdir", "POST /v2/fs/copy", "POST /v2/fs/upload", "PUT /v2/fs/tree"}

// As returns a client whose Write, Mkdir, Copy, Upload and PutTree
// create files and directories owned by the account user (?user=; the
// server's default user when empty). An Upload's or PutTree's own user
// takes precedence.
func (c *Client) As(user string) *Client {
	cc := *c
	cc.user = user
	return &cc
}

// setUser adds c's user to the query q of route (method and path) when
// the route takes one and q has none.
func (c *Client) setUser(q url.Values, route string) {
	if c.user != "" && q.Get("user") == "" && slices.Contains(userRoutes, route) {
		q.Set("user", c.user)
	}
}

// ErrNotOnHost reports a call a host client (see Host) cannot make: the
// hub serves only some routes for a connected host, and sending any other
// to the server would act on the server's own workspace or fail there
// with a bare 404. The request is never sent.
var ErrNotOnHost = errors.New("not supported through a host")

// hostRoutes are the /v2/fs routes the hub serves again under
// /v2/hosts/{host}/fs/ (internal/httpapi's hostRoutes), with the Client
// methods that call them. HEAD is served by the GET route.
var hostRoutes = []struct{ Route, Method string }{
	{"GET /v2/fs/read", "Read"},
	{"POST /v2/fs/write", "Write"},
	{"POST /v2/fs/edit", "Edit"},
	{"POST /v2/fs/patch", "Patch"},
	{"POST /v2/fs/undo", "Undo"},
	{"GET /v2/fs/stat", "Stat"},
	{"GET /v2/fs/list", "List"},
	{"POST /v2/fs/grep", "Grep"},
	{"GET /v2/fs/search", "Find"},
	{"GET /v2/fs/download", "Download"},
}

// route is the path to request for the route method+path: on a host
// client, a host route's path under /v2/hosts/{host}, the hub's own
// routes (Hosts, TextEditor, Ping) as they are, and ErrNotOnHost for the
// rest.
func (c *Client) route(method, path string) (string, error) {
	if c.prefix == "" || path == "/v1/ping" || path == "/v2/hosts" || strings.HasPrefix(path, "/v2/hosts/") {
		return path, nil
	}
	key := method + " " + path
	if method == http.MethodHead {
		key = http.MethodGet + " " + path
	}
	for _, r := range hostRoutes {
		if r.Route == key {
			return c.prefix + strings.TrimPrefix(path, "/v2"), nil
		}
	}
	return "", notOnHost(method + " " + path)
}

// notOnHost is ErrNotOnHost for the request what (method and route), with
// the methods a host client does serve.
func notOnHost(what string) error {
	var methods []string
	for _, r := range hostRoutes {
		methods = append(methods, r.Method)
	}
	return fmt.Errorf("client: %s is %w: a host client serves %s (/v2/hosts/{host}/fs/*), TextEditor, Hosts and Ping",
		what, ErrNotOnHost, strings.Join(methods, ", "))
}

// encodeQuery turns a struct into query parameters by its json tags,
// leaving out nil pointers and zero-valued omitempty fields. A field of
// a kind it cannot encode is an error rather than a silently missing
// parameter.
func encodeQuery(q any) (url.Values, error) {
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
		if f.Kind() == reflect.Slice {
			for j := 0; j < f.Len(); j++ {
				s, err := queryValue(f.Index(j))
				if err != nil {
					return nil, fmt.Errorf("query field %s: %w", t.Field(i).Name, err)
				}
				vals.Add(name, s)
			}
			continue
		}
		s, err := queryValue(f)
		if err != nil {
			return nil, fmt.Errorf("query field %s: %w", t.Field(i).Name, err)
		}
		vals.Set(name, s)
	}
	return vals, nil
}

// queryValue formats one scalar as the server's query parser reads it.
func queryValue(v reflect.Value) (string, error) {
	switch v.Kind() {
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, v.Type().Bits()), nil
	}
	return "", fmt.Errorf("%s values cannot be sent in a query", v.Type())
}

// invalidUTF8 returns the JSON name (dotted, from the body's top) of the
// first string in v, a request body, that is not valid UTF-8: map keys
// and the strings in pointers, slices, maps and interfaces included.
func invalidUTF8(v reflect.Value, name string) (string, bool) {
	switch v.Kind() {
	case reflect.String:
		return name, !utf8.ValidString(v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return invalidUTF8(v.Elem(), name)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || tag == "-" {
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			if name != "" {
				tag = name + "." + tag
			}
			if n, bad := invalidUTF8(v.Field(i), tag); bad {
				return n, true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", false // bytes go as base64
		}
		for i := 0; i < v.Len(); i++ {
			if n, bad := invalidUTF8(v.Index(i), name+"."+strconv.Itoa(i)); bad {
				return n, true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if _, bad := invalidUTF8(it.Key(), ""); bad {
				return name, true
			}
			if n, bad := invalidUTF8(it.Value(), name); bad {
				return n, true
			}
		}
	}
	return "", false
}

// Int returns a pointer to v, for optional integer fields.
func Int(v int) *int { return &v }

// String returns a pointer to v, for optional string fields.
func String(v string) *string { return &v }
