package httpapi

import (
	"encoding/json"
	"github.com/fsplane/fsplane/client"

	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// openAPI returns the OpenAPI 3.1 document, built once from the registered
// routes: schemas are inferred from the request and data types (required
// = no omitempty; descriptions from jsonschema tags), so the document and
// the decoder read the same tags.
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

func schemaFor(t reflect.Type) (*jsonschema.Schema, error) {
	return jsonschema.ForType(t, &jsonschema.ForOptions{})
}

func (s *Server) buildOpenAPI() (map[string]any, error) {
	paths := map[string]map[string]any{}
	fileErr, err := schemaFor(typeOf[client.FileError]())
	if err != nil {
		return nil, err
	}
	for _, rt := range s.routes {
		path := strings.TrimSuffix(rt.Path, "{$}")
		op := map[string]any{
			"summary":     rt.Summary,
			"tags":        []string{rt.Tag},
			"operationId": operationID(rt),
		}
		if rt.Query != nil {
			op["parameters"] = queryParams(rt.Query)
		}
		if rt.Body != nil {
			sch, err := schemaFor(rt.Body)
			if err != nil {
				return nil, err
			}
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": sch}}}
		}
		responses := map[string]any{}
		switch {
		case rt.Raw != "":
			responses["200"] = map[string]any{"description": "OK", "content": map[string]any{rt.Raw: map[string]any{}}}
		default:
			var data any = map[string]any{}
			if rt.Data != nil {
				if data, err = schemaFor(rt.Data); err != nil {
					return nil, err
				}
			}
			responses["200"] = map[string]any{"description": "OK", "content": map[string]any{"application/json": map[string]any{"schema": envelopeSchema(data)}}}
		}
		for _, st := range rt.Statuses {
			responses[strconv.Itoa(st)] = map[string]any{"description": http.StatusText(st),
				"content": map[string]any{"application/json": map[string]any{"schema": envelopeSchema(fileErr)}}}
		}
		if rt.Body != nil || rt.Query != nil {
			responses["422"] = map[string]any{"description": "Request data validation failed", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/ValidationFailure"}}}}
		}
		if !publicPaths[path] {
			responses["401"] = map[string]any{"description": "Unauthorized (an API key is configured and missing or wrong; error_type unauthorized)",
				"content": map[string]any{"application/json": map[string]any{"schema": envelopeSchema(fileErr)}}}
		}
		op["responses"] = responses
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(rt.Method)] = op
	}
	vf, err := schemaFor(typeOf[validationFailure]())
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "fsplane file API",
			"version":     s.opts.Version,
			"description": "AIO Sandbox's file API (v1 and v2) with fsplane's extensions: versions and expected_version, tolerant matching (match), patches, undo.",
		},
		"paths": paths,
		"components": map[string]any{
			"schemas": map[string]any{"ValidationFailure": vf, "FileOperationError": fileErr},
			"securitySchemes": map[string]any{
				"bearer":  map[string]any{"type": "http", "scheme": "bearer"},
				"apiKey":  map[string]any{"type": "apiKey", "in": "header", "name": "x-api-key"},
				"apiKeyQ": map[string]any{"type": "apiKey", "in": "query", "name": "api_key"},
			},
		},
		"security": []any{map[string]any{"bearer": []any{}}, map[string]any{"apiKey": []any{}}, map[string]any{"apiKeyQ": []any{}}},
	}, nil
}

func envelopeSchema(data any) map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []string{"success", "message", "data", "hint"},
		"properties": map[string]any{
			"success": map[string]any{"type": "boolean"},
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
