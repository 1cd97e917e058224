package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/jsonx"
)

// tooLargeType is the validation error type of a body over maxBody; the
// response is then 413 (see invalid).
const tooLargeType = "value_error.toolarge"

// maxBody bounds a JSON request body: a 32 MiB write (to a connected host,
// say) in base64 fits; bigger files go through upload.
const maxBody = 64 << 20

// bodyRules describe what decode checks beyond JSON syntax and types. The
// required fields are those of the body type whose json tag lacks
// omitempty; the OpenAPI schema is inferred from the same tags.
type bodyRules struct {
	strict bool // unknown fields are an error (AIO's v2 write)
}

// decode reads a JSON object body into dst (a pointer to a struct),
// collecting AIO-shaped validation errors. An absent body reads as {}.
func decode(r *http.Request, dst any, rules bodyRules) []client.ValidationError {
	raw, err := readBody(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return []client.ValidationError{{Location: []string{"body"}, Message: fmt.Sprintf("request body exceeds %d bytes; use upload for large content", maxBody), Type: tooLargeType}}
		}
		msg := "could not read the request body"
		if h := idleHint(err); h != "" {
			msg = h
		}
		return []client.ValidationError{{Location: []string{"body"}, Message: msg, Type: "value_error"}}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	if !jsonx.DepthOK(raw) {
		return []client.ValidationError{{Location: []string{"body"}, Message: fmt.Sprintf("JSON nests deeper than %d arrays or objects", jsonx.MaxDepth), Type: "value_error.jsondecode"}}
	}
	var fields map[string]json.RawMessage
	if err := fastjson.Unmarshal(raw, &fields); err != nil || fields == nil {
		return []client.ValidationError{{Location: []string{"body"}, Message: jsonMessage(err, raw), Type: "value_error.jsondecode"}}
	}
	if ve, bad := invalidText(raw); bad {
		return []client.ValidationError{ve}
	}
	var errs []client.ValidationError
	t := reflect.TypeOf(dst).Elem()
	known := jsonFields(t)
	for _, name := range known.required {
		if v, ok := fields[name]; !ok || string(v) == "null" {
			errs = append(errs, client.ValidationError{Location: []string{"body", name}, Message: "missing field `" + name + "`", Type: "value_error.missing"})
		}
	}
	mis := misspelt(known, fields)
	errs = append(errs, mis...)
	if rules.strict {
		refused := make(map[string]bool, len(mis))
		for _, e := range mis {
			refused[e.Location[1]] = true
		}
		for name := range fields {
			if refused[name] {
				continue // refused already, with a better message
			}
			if _, like := known.fold(name); !known.names[name] && !like {
				errs = append(errs, client.ValidationError{Location: []string{"body", name}, Message: "unknown field `" + name + "`", Type: "value_error.extra"})
			}
		}
	}
	errs = append(errs, caseVariants(t, fields, []string{"body"})...)
	errs = append(errs, belowMinimum(t, fields)...)
	if err := decodeFields(dst, known, fields); err == nil {
		sortErrors(errs)
		return errs
	}
	// Attribute the type error to its field.
	for name, v := range fields {
		one := map[string]json.RawMessage{name: v}
		b, _ := json.Marshal(one)
		if err := json.Unmarshal(b, dst); err != nil {
			var te *json.UnmarshalTypeError
			msg := "invalid value"
			if errors.As(err, &te) {
				msg = fmt.Sprintf("expected %s, got %s", typeName(te.Type), te.Value)
			}
			errs = append(errs, client.ValidationError{Location: []string{"body", name}, Message: msg, Type: "type_error"})
		}
	}
	sortErrors(errs)
	return errs
}

// decodeFields fills the struct dst points to from fields, the body's
// top-level members already split by the validating parse: each known
// field from its own value, so the body is not parsed a second time, and a
// plain string (file content, up to 64 MiB) through jsonx.Unquote, which
// copies the runs between escapes. The result is what json.Unmarshal of
// the body would give, except that keys differing from a field only in
// case fill nothing (decode refuses them). The first failing field's error
// is returned.
func decodeFields(dst any, known *fieldSet, fields map[string]json.RawMessage) error {
	v := reflect.ValueOf(dst).Elem()
	for name, raw := range fields {
		i, ok := known.index[name]
		if !ok {
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.String && len(raw) > 0 && raw[0] == '"' && !f.Addr().Type().Implements(unmarshalerType) {
			if s, err := jsonx.Unquote(raw); err == nil {
				f.SetString(s)
				continue
			}
		}
		if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
			return err
		}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// readBody reads r's body up to maxBody, in one allocation when the
// length is declared (io.ReadAll would copy a 32 MiB body five times as
// it grows). A body declared longer than maxBody is refused unread: read
// to the limit first, it cost about three times the limit in memory.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > maxBody {
		return nil, &http.MaxBytesError{Limit: maxBody}
	}
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= maxBody {
		buf.Grow(int(n) + bytes.MinRead) // ReadFrom wants MinRead spare to see EOF
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, maxBody))
	return buf.Bytes(), err
}

func jsonMessage(err error, raw []byte) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte("\n"))
		return fmt.Sprintf("invalid JSON at line %d: %s", line, se.Error())
	}
	return "the body must be a JSON object"
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

var fieldCache sync.Map // reflect.Type → *fieldSet

type fieldSet struct {
	names    map[string]bool
	types    map[string]reflect.Type
	index    map[string]int // the struct field's index
	ordered  []string       // every name, in field order
	required []string       // in field order
}

// caseVariants refuses the keys of an object decoded into struct type t
// that are not a field's name but equal one when case is ignored, at any
// depth (the line edits of a text_editor patch, say). encoding/json would
// fill the field from such a key, and the last spelling would win:
// {"path":"scratch.txt","PATH":"important.txt"} would delete
// important.txt. Keys that resemble no field are left to the caller's
// rules (ignored, or refused when strict).
func caseVariants(t reflect.Type, fields map[string]json.RawMessage, loc []string) []client.ValidationError {
	known := jsonFields(t)
	var errs []client.ValidationError
	for name, v := range fields {
		at := append(slices.Clip(loc), name)
		if !known.names[name] {
			if like, ok := known.fold(name); ok {
				errs = append(errs, client.ValidationError{Location: at, Message: fmt.Sprintf("field %q is not %q: field names are case-sensitive", name, like), Type: "value_error.extra"})
			}
			continue
		}
		ft := derefType(known.types[name])
		switch {
		case ft.Kind() == reflect.Struct:
			var inner map[string]json.RawMessage
			if json.Unmarshal(v, &inner) == nil {
				errs = append(errs, caseVariants(ft, inner, at)...)
			}
		case ft.Kind() == reflect.Slice && derefType(ft.Elem()).Kind() == reflect.Struct:
			var items []map[string]json.RawMessage
			if json.Unmarshal(v, &items) == nil {
				for i, inner := range items {
					errs = append(errs, caseVariants(derefType(ft.Elem()), inner, append(slices.Clip(at), strconv.Itoa(i)))...)
				}
			}
		}
	}
	return errs
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// fold returns the field that encoding/json would fill from key: the one
// whose name equals key under Unicode case folding, as bytes.EqualFold
// (and so encoding/json) compares.
func (fs *fieldSet) fold(key string) (string, bool) {
	for _, n := range fs.ordered {
		if strings.EqualFold(n, key) {
			return n, true
		}
	}
	return "", false
}

// minimums are lower bounds on integer body fields that no route checks
// after decoding: the engine reads a negative max_results as "the default
// cap" on glob but refuses it on grep, so both are refused here alike, as
// AIO's schema does (minimum 1 there; 0 means the default here). grep's
// offset and context lines have AIO's minimum 0: below it the body fails
// validation (422 on both planes), not the search (200 on v1).
var minimums = map[reflect.Type]map[string]int64{
	reflect.TypeFor[client.GrepRequest](): {"max_results": 0, "offset": 0, "context_before": 0, "context_after": 0},
	reflect.TypeFor[client.GlobRequest](): {"max_results": 0},
}

// belowMinimum reports the fields of a t body that are under their
// minimum. A value that is not an integer is left to the type check.
func belowMinimum(t reflect.Type, fields map[string]json.RawMessage) []client.ValidationError {
	var errs []client.ValidationError
	for name, least := range minimums[t] {
		var n int64
		if v, ok := fields[name]; ok && json.Unmarshal(v, &n) == nil && n < least {
			errs = append(errs, client.ValidationError{Location: []string{"body", name}, Message: fmt.Sprintf("%s must be >= %d (got %d)", name, least, n), Type: "value_error.number.not_ge"})
		}
	}
	return errs
}

// invalidText finds text in a JSON body that is not valid UTF-8: raw
// bytes, or a \u escape of a UTF-16 surrogate that is not half of a
// pair. encoding/json would replace either with U+FFFD, and the write
// would put that on disk instead of what the caller meant, so the body is
// refused; the error names the field (when the offset is in a value) and
// the byte offset. Binary content goes base64-encoded.
func invalidText(raw []byte) (client.ValidationError, bool) {
	off, what := jsonx.InvalidText(raw)
	if off < 0 {
		return client.ValidationError{}, false
	}
	loc := []string{"body"}
	where := ""
	if name, ok := fieldAt(raw, off); ok {
		loc = append(loc, name)
		where = fmt.Sprintf(" in field %q", name)
	}
	return client.ValidationError{Location: loc, Type: "value_error.jsondecode",
		Message: fmt.Sprintf("%s at byte offset %d of the body%s: JSON text must be valid UTF-8; send binary content base64-encoded (\"encoding\":\"base64\") or use upload", what, off, where)}, true
}

// fieldAt names the top-level field whose value spans byte offset off of
// raw, a JSON object.
func fieldAt(raw []byte, off int) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return "", false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		name, _ := tok.(string)
		start := dec.InputOffset()
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", false
		}
		if int64(off) >= start && int64(off) < dec.InputOffset() {
			return name, true
		}
	}
	return "", false
}

// jsonFields returns the JSON names of t's fields, and which are required
// (no omitempty).
func jsonFields(t reflect.Type) *fieldSet {
	if m, ok := fieldCache.Load(t); ok {
		return m.(*fieldSet)
	}
	fs := &fieldSet{names: map[string]bool{}, types: map[string]reflect.Type{}, index: map[string]int{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs.names[name] = true
		fs.types[name] = f.Type
		fs.index[name] = i
		fs.ordered = append(fs.ordered, name)
		if !strings.Contains(opts, "omitempty") {
			fs.required = append(fs.required, name)
		}
	}
	fieldCache.Store(t, fs)
	return fs
}

// sortErrors orders errs by location, stably, joining each location once:
// a body may have tens of thousands of refused keys.
func sortErrors(errs []client.ValidationError) {
	type keyed struct {
		at string
		e  client.ValidationError
	}
	ks := make([]keyed, len(errs))
	for i, e := range errs {
		ks[i] = keyed{strings.Join(e.Location, "."), e}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return strings.Compare(a.at, b.at) })
	for i, k := range ks {
		errs[i] = k.e
	}
}

// query reads typed query parameters, collecting validation errors.
type query struct {
	vals url.Values
	errs []client.ValidationError
}

func newQuery(r *http.Request) *query { return &query{vals: queryValues(r)} }

// queryValues decodes r's query string as AIO's servers do (Python's
// parse_qsl, Rust's form_urlencoded), where url.ParseQuery departs from
// them by dropping whole parameters: only '&' separates parameters (a ';'
// is part of a value: path=notes;v2.txt names that file), '+' is a space,
// and a '%' not followed by two hex digits stands for itself
// (path=100%.txt). Dropped, such a path read as missing, or a
// follow_symlinks=false;… as the default true.
func queryValues(r *http.Request) url.Values {
	vals := url.Values{}
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, v = unescapeLenient(k), unescapeLenient(v)
		vals[k] = append(vals[k], v)
	}
	return vals
}

// unescapeLenient decodes a query component: '+' is a space, %XX a byte,
// and any other '%' itself.
func unescapeLenient(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// str returns the value of the parameter name, "" when absent. One given
// more than once with different values is refused: AIO's Python server
// takes the last value, serde under its Rust one refuses a duplicate
// field, so taking either value silently could read, serve or write
// another file than the client's library or a proxy in front understood.
func (q *query) str(name string, required bool) string {
	v, ok := q.vals[name]
	if !ok || len(v) == 0 {
		if required {
			q.errs = append(q.errs, client.ValidationError{Location: []string{"query", name}, Message: "missing query parameter `" + name + "`", Type: "value_error.missing"})
		}
		return ""
	}
	for _, other := range v[1:] {
		if other != v[0] {
			q.errs = append(q.errs, client.ValidationError{Location: []string{"query", name},
				Message: fmt.Sprintf("query parameter `%s` is given %d times with different values (%q, %q); send it once", name, len(v), v[0], other), Type: "value_error"})
			break
		}
	}
	return v[0]
}

// intp returns nil when the parameter is absent.
func (q *query) intp(name string, min int) *int {
	s := q.str(name, false)
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min {
		q.errs = append(q.errs, client.ValidationError{Location: []string{"query", name}, Message: fmt.Sprintf("%s must be an integer >= %d", name, min), Type: "type_error.integer"})
		return nil
	}
	return &n
}

func (q *query) boolean(name string, def bool) bool {
	s := q.str(name, false)
	if s == "" {
		return def
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		q.errs = append(q.errs, client.ValidationError{Location: []string{"query", name}, Message: name + " must be true or false", Type: "type_error.bool"})
		return def
	}
	return b
}
