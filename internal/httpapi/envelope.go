package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/jsonx"
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

// writeJSON answers v as JSON with its Content-Length, in one write: a
// body encoded straight into the response went out chunked once it passed
// 2 KiB. The price is a second copy of the body while it is written (the
// encoder builds the whole of it first either way): twice the memory of
// a large list or grep answer, for the moment of the write.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := envelopeBufs.Get().(*[]byte)
	b := bytes.NewBuffer((*buf)[:0])
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		envelopeBufs.Put(buf)
		// Only a value that cannot be encoded (a bug): say so rather than
		// send half a body.
		http.Error(w, "cannot encode the response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	writeEnvelope(w, status, buf, b.Bytes())
}

// writeEnvelope answers b, a JSON body built in buf's array, with its
// length, and gives buf back to envelopeBufs (up to maxPooledEnvelope).
func writeEnvelope(w http.ResponseWriter, status int, buf *[]byte, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
	if cap(b) <= maxPooledEnvelope {
		*buf = b[:0]
		envelopeBufs.Put(buf)
	}
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
	if len(errs) > maxReportedErrors {
		// A body of a million unknown keys got a million errors back,
		// about 8 times its own size, built in memory.
		more := len(errs) - maxReportedErrors
		errs = append(errs[:maxReportedErrors:maxReportedErrors], client.ValidationError{Location: []string{"body"}, Type: "value_error",
			Message: "and " + strconv.Itoa(more) + " more errors, not listed; fix these and send the request again"})
	}
	writeJSON(w, status, validationFailure{
		Message: "Request data validation failed", Errors: errs,
	})
}

// maxReportedErrors bounds the validation errors one answer lists; one
// more entry says how many were left out.
const maxReportedErrors = 100

// writeRead writes a read's success envelope byte for byte as writeJSON
// does (a test holds them equal), the file's text escaped by
// jsonx.AppendString: encoding/json escapes it byte by byte, and a read's
// answer is mostly that text (a third of the hub's CPU on a 256 KiB read).
// quoted, when not nil, is the text already as a JSON string literal
// (checked, see Server.read), copied as it is.
func writeRead(w http.ResponseWriter, message string, r *client.ReadResult, quoted []byte) {
	buf := envelopeBufs.Get().(*[]byte)
	b := append((*buf)[:0], `{"success":true,"message":`...)
	b = jsonx.AppendString(b, message)
	b = append(b, `,"data":{"content":`...)
	if quoted != nil {
		b = append(b, quoted...)
	} else {
		b = jsonx.AppendString(b, r.Content)
	}
	b = append(b, `,"file":`...)
	b = jsonx.AppendString(b, r.File)
	b = append(b, `,"version":`...)
	b = jsonx.AppendString(b, r.Version)
	b = append(b, `,"total_lines":`...)
	b = strconv.AppendInt(b, int64(r.TotalLines), 10)
	if r.BOM {
		b = append(b, `,"bom":true`...)
	}
	b = append(b, "},\"hint\":null}\n"...)
	writeEnvelope(w, http.StatusOK, buf, b)
}

// envelopeBufs recycles the buffers JSON answers are built in.
var envelopeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

const maxPooledEnvelope = 1 << 20
