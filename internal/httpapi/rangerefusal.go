package httpapi

import (
	"io"
	"net/http"

	"github.com/fsplane/fsplane/internal/fserr"
)

// rangeRefusals turns http.ServeContent's plain-text 416 (a Range the
// file cannot satisfy) into the JSON error envelope every other failure
// has (bad_request, status 416), so that clients get a code and a hint.
// Everything else passes through, io.ReaderFrom included (sendfile).
type rangeRefusals struct {
	http.ResponseWriter
	op, path string
	refused  bool
}

func (w *rangeRefusals) WriteHeader(code int) {
	if code != http.StatusRequestedRangeNotSatisfiable || w.refused {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.refused = true
	h := w.Header()
	h.Del("X-Content-Type-Options")
	e := fserr.New(fserr.BadRequest, w.op, w.path, "the requested range cannot be served from %s (Content-Range: %s)", w.path, h.Get("Content-Range")).
		WithHint("ask for bytes within the file's size, which Content-Range gives after the slash")
	failWith(w.ResponseWriter, code, e)
}

// Write drops ServeContent's text once the envelope is written.
func (w *rangeRefusals) Write(b []byte) (int, error) {
	if w.refused {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *rangeRefusals) ReadFrom(r io.Reader) (int64, error) {
	if w.refused {
		return io.Copy(io.Discard, r)
	}
	return io.Copy(w.ResponseWriter, r)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *rangeRefusals) Unwrap() http.ResponseWriter { return w.ResponseWriter }
