package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fsplane/fsplane/client"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

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
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return []client.ValidationError{{Location: []string{"body"}, Message: fmt.Sprintf("request body exceeds %d bytes; use upload for large content", maxBody), Type: "value_error.toolarge"}}
		}
		return []client.ValidationError{{Location: []string{"body"}, Message: "could not read the request body", Type: "value_error"}}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return []client.ValidationError{{Location: []string{"body"}, Message: jsonMessage(err, raw), Type: "value_error.jsondecode"}}
	}
	var errs []client.ValidationError
	known := jsonFields(reflect.TypeOf(dst).Elem())
	for _, name := range known.required {
		if v, ok := fields[name]; !ok || string(v) == "null" {
			errs = append(errs, client.ValidationError{Location: []string{"body", name}, Message: "missing field `" + name + "`", Type: "value_error.missing"})
		}
	}
	if rules.strict {
		for name := range fields {
			if !known.names[name] {
				errs = append(errs, client.ValidationError{Location: []string{"body", name}, Message: "unknown field `" + name + "`", Type: "value_error.extra"})
			}
		}
	}
	if err := json.Unmarshal(raw, dst); err == nil {
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
	required []string // in field order
}

// jsonFields returns the JSON names of t's fields, and which are required
// (no omitempty).
func jsonFields(t reflect.Type) *fieldSet {
	if m, ok := fieldCache.Load(t); ok {
		return m.(*fieldSet)
	}
	fs := &fieldSet{names: map[string]bool{}}
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
		if !strings.Contains(opts, "omitempty") {
			fs.required = append(fs.required, name)
		}
	}
	fieldCache.Store(t, fs)
	return fs
}

func sortErrors(errs []client.ValidationError) {
	for i := 1; i < len(errs); i++ {
		for j := i; j > 0 && strings.Join(errs[j].Location, ".") < strings.Join(errs[j-1].Location, "."); j-- {
			errs[j], errs[j-1] = errs[j-1], errs[j]
		}
	}
}

// query reads typed query parameters, collecting validation errors.
type query struct {
	r    *http.Request
	errs []client.ValidationError
}

func newQuery(r *http.Request) *query { return &query{r: r} }

func (q *query) str(name string, required bool) string {
	v, ok := q.r.URL.Query()[name]
	if !ok || len(v) == 0 {
		if required {
			q.errs = append(q.errs, client.ValidationError{Location: []string{"query", name}, Message: "missing query parameter `" + name + "`", Type: "value_error.missing"})
		}
		return ""
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
