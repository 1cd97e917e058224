package httpapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/fsplane/fsplane/client"
)

// openAPI returns the OpenAPI 3.1 document, built once from the registered
// routes: schemas are inferred from the request and data types (required
// = no omitempty; descriptions from jsonschema tags), so the document and
// the decoder read the same tags. TestResponsesMatchOpenAPI validates real
// answers of every route against it.
func (s *Server) openAPI() []byte {
	s.docOnce.Do(func() {
		doc, err := s.buildOpenAPI()
		if err != nil {
			// The types are fixed at compile time; a failure here is a
			// programming error caught by the tests.
			panic(err)
		}
		s.doc, _ = json.MarshalIndent(doc, "", "  ")
	})
	return s.doc
}

type docCache struct {
	docOnce sync.Once
	doc     []byte
}

// schemaFor infers t's schema. jsonschema-go lets a slice be null (a nil
// slice encodes as null) but not a map, which encoding/json writes as
// null just the same when it is nil (str_replace_editor's metadata always
// is): nilMaps makes map-typed fields nullable too.
func schemaFor(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	nilMaps(t, s)
	return s, nil
}

// nilMaps adds null to the type of every map-typed struct field in s, the
// schema inferred for t.
func nilMaps(t reflect.Type, s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		nilMaps(t.Elem(), s.Items)
	case reflect.Map:
		nilMaps(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			fs := s.Properties[name]
			if f.Anonymous || !f.IsExported() || fs == nil {
				continue
			}
			if f.Type.Kind() == reflect.Map && fs.Type == "object" {
				fs.Types, fs.Type = []string{"null", "object"}, ""
			}
			nilMaps(f.Type, fs)
		}
	}
}

// Names of the shared schemas in components/schemas.
const (
	fileErrorName   = "FileOperationError"
	fileFailureName = "FileFailure"
	failureName     = "Failure"
	validationName  = "ValidationFailure"
)

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func jsonContent(schema any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

// oneOf is the schema matching exactly one of schemas (the envelopes are
// closed objects told apart by success, the data's type or the fields
// they require, so at most one ever matches).
func oneOf(schemas []any) any {
	if len(schemas) == 1 {
		return schemas[0]
	}
	return map[string]any{"oneOf": schemas}
}

// pathParam is a path template's {name}.
var pathParam = regexp.MustCompile(`\{([a-z]+)\}`)

// pathParamDoc describes each path parameter the routes use.
var pathParamDoc = map[string]string{
	"id":   "watcher id (watcher_id of the create call)",
	"host": "a connected host's name or id, or - for the only one",
}

func (s *Server) buildOpenAPI() (map[string]any, error) {
	paths := map[string]map[string]any{}
	fileErr, err := schemaFor(typeOf[client.FileError]())
	if err != nil {
		return nil, err
	}
	vf, err := schemaFor(typeOf[validationFailure]())
	if err != nil {
		return nil, err
	}
	vf.Properties["success"].Const = jsonschema.Ptr[any](false)
	vf.Properties["data"] = &jsonschema.Schema{Type: "null"}
	for _, rt := range s.routes {
		path := strings.TrimSuffix(rt.Path, "{$}")
		op := map[string]any{
			"summary":     rt.Summary,
			"tags":        []string{rt.Tag},
			"operationId": operationID(rt),
		}
		if publicPaths[path] {
			op["security"] = []any{}
		}
		var params []map[string]any
		for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true,
				"description": pathParamDoc[m[1]], "schema": map[string]any{"type": "string"}})
		}
		if rt.Query != nil {
			params = append(params, queryParams(rt.Query)...)
		}
		for _, p := range rt.Params {
			params = append(params, map[string]any{"name": p.Name, "in": p.In, "required": false,
				"description": p.Description, "schema": map[string]any{"type": p.Type}})
		}
		if params != nil {
			op["parameters"] = params
		}
		switch {
		case rt.Body != nil:
			sch, err := schemaFor(rt.Body)
			if err != nil {
				return nil, err
			}
			op["requestBody"] = map[string]any{"required": true, "content": jsonContent(sch)}
		case rt.RawBody == "multipart/form-data":
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{rt.RawBody: map[string]any{"schema": map[string]any{
				"type":     "object",
				"required": []string{"file"},
				"properties": map[string]any{
					"path": map[string]any{"type": "string", "description": "target file; instead of ?path=. Absent or empty: /tmp/<the file part's filename> when /tmp is inside a root, else <first root>/<filename>"},
					"file": map[string]any{"type": "string", "format": "binary", "contentMediaType": "application/octet-stream"},
				},
			}}}}
		case rt.RawBody != "":
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{rt.RawBody: map[string]any{}}}
		}
		responses, err := s.responses(rt, path)
		if err != nil {
			return nil, err
		}
		op["responses"] = responses
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(rt.Method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "fsplane file API",
			"version":     s.opts.Version,
			"description": "AIO Sandbox's file API (v1 and v2) with fsplane's extensions: versions and expected_version, tolerant matching (match), patches, undo. v2 answers a failure with its status; v1 answers an expected file-system failure with 200 and success:false, as AIO does.",
		},
		"paths": paths,
		"components": map[string]any{
			"schemas": map[string]any{
				validationName:  vf,
				fileErrorName:   fileErr,
				fileFailureName: envelopeSchema(false, ref(fileErrorName)),
				failureName:     envelopeSchema(false, map[string]any{"type": "null"}),
			},
			"securitySchemes": map[string]any{
				"bearer":  map[string]any{"type": "http", "scheme": "bearer"},
				"apiKey":  map[string]any{"type": "apiKey", "in": "header", "name": "x-api-key"},
				"apiKeyQ": map[string]any{"type": "apiKey", "in": "query", "name": "api_key"},
			},
		},
		"security": []any{map[string]any{"bearer": []any{}}, map[string]any{"apiKey": []any{}}, map[string]any{"apiKeyQ": []any{}}},
	}, nil
}

// responses describes every answer rt gives: its success, each failure
// status with the bodies that status can carry, and (for a route that
// runs an operation) "default" for a failure under another status, such
// as an io_error's 500.
func (s *Server) responses(rt route, path string) (map[string]any, error) {
	out := map[string]any{}
	// failures are the envelopes of this route's failed operations.
	failures := []any{ref(fileFailureName)}
	switch {
	case rt.ErrData != nil:
		d, err := schemaFor(rt.ErrData)
		if err != nil {
			return nil, err
		}
		failures = []any{envelopeSchema(false, d)}
	case rt.BareErrors:
		failures = append(failures, ref(failureName))
	}
	bodies := map[int][]any{}
	add := func(status int, schemas ...any) {
		for _, sch := range schemas {
			if !slices.ContainsFunc(bodies[status], func(have any) bool { return reflect.DeepEqual(have, sch) }) {
				bodies[status] = append(bodies[status], sch)
			}
		}
	}
	ops := len(rt.Statuses) > 0
	for _, st := range rt.Statuses {
		add(st, failures...)
	}
	if rt.Body != nil || rt.Query != nil {
		if ops {
			add(http.StatusUnprocessableEntity, failures...) // decode_error: a file that is not text
		}
		add(http.StatusUnprocessableEntity, ref(validationName))
	}
	if rt.Body != nil {
		if ops {
			add(http.StatusRequestEntityTooLarge, failures...) // too_large: a file over a limit
		}
		add(http.StatusRequestEntityTooLarge, ref(validationName)) // the body is over maxBody
	}
	if !selfAuthenticated[path] {
		// The browser guard runs before any route, public ones too.
		add(http.StatusForbidden, ref(fileFailureName))
		if !publicPaths[path] {
			add(http.StatusUnauthorized, ref(fileFailureName))
		}
	}

	switch {
	case rt.Raw != "":
		var content map[string]any
		if rt.Data != nil {
			d, err := schemaFor(rt.Data)
			if err != nil {
				return nil, err
			}
			content = map[string]any{rt.Raw: map[string]any{"schema": d}}
		} else {
			content = map[string]any{rt.Raw: map[string]any{}}
		}
		out["200"] = map[string]any{"description": "OK", "content": content}
	default:
		var data any = map[string]any{}
		if rt.Data != nil {
			d, err := schemaFor(rt.Data)
			if err != nil {
				return nil, err
			}
			data = d
		}
		ok := envelopeSchema(true, data)
		if rt.FailOK {
			out["200"] = map[string]any{"description": "OK, or an expected failure (success:false, data: the error), as AIO's v1 answers",
				"content": jsonContent(oneOf([]any{ok, ref(fileFailureName)}))}
		} else {
			out["200"] = map[string]any{"description": "OK", "content": jsonContent(ok)}
		}
	}
	if rt.Conditional {
		out["206"] = map[string]any{"description": "Partial Content (a Range was asked for)",
			"content": map[string]any{"application/octet-stream": map[string]any{}, "multipart/byteranges": map[string]any{}}}
		out["304"] = map[string]any{"description": "Not Modified (If-None-Match or If-Modified-Since)"}
		out["412"] = map[string]any{"description": "Precondition Failed (If-Match or If-Unmodified-Since; error_type stale_version)",
			"content": jsonContent(ref(fileFailureName))}
	}
	for st, schemas := range bodies {
		desc := http.StatusText(st)
		switch st {
		case http.StatusUnauthorized:
			desc = "Unauthorized (an API key is configured and missing or wrong; error_type unauthorized)"
		case http.StatusUnprocessableEntity:
			desc = "Request data validation failed"
		}
		out[strconv.Itoa(st)] = map[string]any{"description": desc, "content": jsonContent(oneOf(schemas))}
	}
	if ops {
		out["default"] = map[string]any{"description": "Another failure, under the status of its error_type", "content": jsonContent(oneOf(failures))}
	}
	return out, nil
}

// envelopeSchema is AIO's {success, message, data, hint}: a success
// (success true) carrying data, or a failure (success false) carrying
// the error as data.
func envelopeSchema(success bool, data any) map[string]any {
	return map[string]any{
		"type":                 "object",
		"required":             []string{"success", "message", "data", "hint"},
		"additionalProperties": false,
		"properties": map[string]any{
			"success": map[string]any{"type": "boolean", "const": success},
			"message": map[string]any{"type": "string"},
			"data":    data,
			"hint":    map[string]any{"type": []string{"string", "null"}, "description": "what to do next (for agents)"},
		},
	}
}

func operationID(rt route) string {
	p := strings.NewReplacer("/", "_", "{", "", "}", "", "$", "", ".", "_").Replace(strings.Trim(rt.Path, "/"))
	if p == "" {
		p = "index"
	}
	return strings.ToLower(rt.Method) + "_" + p
}

// queryParams describes a query struct's fields as OpenAPI parameters.
func queryParams(t reflect.Type) []map[string]any {
	var out []map[string]any
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		typ := "string"
		switch ft.Kind() {
		case reflect.Int, reflect.Int64:
			typ = "integer"
		case reflect.Bool:
			typ = "boolean"
		case reflect.Float64:
			typ = "number"
		}
		out = append(out, map[string]any{
			"name": name, "in": "query", "required": !strings.Contains(opts, "omitempty"),
			"description": f.Tag.Get("jsonschema"), "schema": map[string]any{"type": typ},
		})
	}
	return out
}
