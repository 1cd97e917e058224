package httpapi

import (
	"io"
	"net/http"
	"strconv"

	"github.com/fsplane/fsplane/internal/fserr"
)

// rangeRefusals turns http.ServeContent's plain-text 416 (a Range the
// file cannot satisfy) and its empty 412 (If-Match or
// If-Unmodified-Since failed) into the JSON error envelope every other
// failure has (bad_request, stale_version; the status stays), so that
// clients get a code and a hint.
// Everything else passes through, io.ReaderFrom included (sendfile),
// counted as the access log counts it (statusRecorder), so that the
// route can tell a body that ended short of its Content-Length (short).
type rangeRefusals struct {
	statusRecorder // the status written, the body bytes passed on
	op, path       string
	rangeHeader    string // the request's, as the client sent it
	refused        bool
}

// short reports a 200 or 206 whose body ended before its Content-Length:
// the file shrank while ServeContent sent it (net/http then closes the
// connection, so the client sees the cut), or the client went away.
func (w *rangeRefusals) short() (sent, declared int64, ok bool) {
	if w.status != http.StatusOK && w.status != http.StatusPartialContent {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(w.Header().Get("Content-Length"), 10, 64)
	return w.bytes, n, err == nil && w.bytes < n
}

func (w *rangeRefusals) WriteHeader(code int) {
	if (code != http.StatusRequestedRangeNotSatisfiable && code != http.StatusPreconditionFailed) || w.refused {
		w.statusRecorder.WriteHeader(code)
		return
	}
	if w.status == 0 {
		w.status = code
	}
	w.refused = true
	w.Header().Del("X-Content-Type-Options")
	if code == http.StatusPreconditionFailed {
		refusePrecondition(w.ResponseWriter, w.op, w.path)
		return
	}
	refuseRange(w.ResponseWriter, w.op, w.path, w.rangeHeader)
}

// refusePrecondition answers 412 with the JSON envelope (stale_version):
// the file no longer has the version (or time) the request's If-Match or
// If-Unmodified-Since names. The host download route answers so too.
func refusePrecondition(w http.ResponseWriter, op, path string) {
	w.Header().Del("Content-Length")
	e := fserr.New(fserr.StaleVersion, op, path, "%s no longer has the version or modification time that If-Match or If-Unmodified-Since names", path).
		WithHint("fetch it again without the condition (its ETag is the current version), or drop If-Match to take whatever it holds now")
	failWith(w, http.StatusPreconditionFailed, e)
}

// refuseRange answers 416 with the JSON envelope (bad_request) to the
// Range header rng. The Content-Range the caller set (bytes */size, when
// no range holds a byte of the file) stays in the headers and is named in
// the message; without it the header itself was malformed, and the
// message says that. The host download route answers with it too, so a
// range refused by either route reads the same.
func refuseRange(w http.ResponseWriter, op, path, rng string) {
	cr := w.Header().Get("Content-Range")
	var e *fserr.Error
	if cr == "" {
		e = fserr.New(fserr.BadRequest, op, path, "the Range header %q is malformed", rng).
			WithHint("write byte ranges as bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX (comma-separated, LAST not before FIRST), or leave Range out for the whole file")
	} else {
		e = fserr.New(fserr.BadRequest, op, path, "the requested range cannot be served from %s (Content-Range: %s)", path, cr).
			WithHint("ask for bytes within the file's size, which Content-Range gives after the slash")
	}
	failWith(w, http.StatusRequestedRangeNotSatisfiable, e)
}

// Write drops ServeContent's text once the envelope is written.
func (w *rangeRefusals) Write(b []byte) (int, error) {
	if w.refused {
		return len(b), nil
	}
	return w.statusRecorder.Write(b)
}

func (w *rangeRefusals) ReadFrom(r io.Reader) (int64, error) {
	if w.refused {
		return io.Copy(io.Discard, r)
	}
	return w.statusRecorder.ReadFrom(r)
}
