package httpapi

import (
	"encoding/json"
	"github.com/fsplane/fsplane/client"
	"net/http"
)

// envelope is AIO's response wrapper.
type envelope struct {
	Success bool    `json:"success"`
	Message string  `json:"message"`
	Data    any     `json:"data"`
	Hint    *string `json:"hint"`
}

// validationFailure is AIO's 422 body.
type validationFailure struct {
	Success bool                     `json:"success"`
	Message string                   `json:"message"`
	Data    any                      `json:"data"`
	Errors  []client.ValidationError `json:"errors"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// ok writes a success envelope.
func ok(w http.ResponseWriter, message string, data any) {
	writeJSON(w, http.StatusOK, envelope{Success: true, Message: message, Data: data})
}

// okHint writes a success envelope with a hint (e.g. a freshness notice).
func okHint(w http.ResponseWriter, message string, data any, hint string) {
	e := envelope{Success: true, Message: message, Data: data}
	if hint != "" {
		e.Hint = &hint
	}
	writeJSON(w, http.StatusOK, e)
}

// invalid writes a validation failure: 422, or 413 when the body was too
// large to read (as AIO answers an oversized body), with the same shape.
func invalid(w http.ResponseWriter, errs []client.ValidationError) {
	status := http.StatusUnprocessableEntity
	for _, e := range errs {
		if e.Type == tooLargeType {
			status = http.StatusRequestEntityTooLarge
		}
	}
	writeJSON(w, status, validationFailure{
		Message: "Request data validation failed", Errors: errs,
	})
}
