package httpapi

import (
	"errors"
	"io"
	"net/http"
	"strconv"
)

// pipeSink hands a data transfer's bytes to the HTTP handler through a
// pipe, so the response is written by the handler's own goroutine.
type pipeSink struct{ w *io.PipeWriter }

func (p pipeSink) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p pipeSink) Finish(err error) {
	if err == nil {
		err = io.EOF
	}
	p.w.CloseWithError(err)
}

// hostDownload streams a file from a connected host: headers (size,
// ETag = version, Last-Modified) from the host's result, then the bytes as
// they arrive. A transfer that fails midway cuts the response, so a
// client never takes a partial file for a whole one.
func (s *Server) hostDownload(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	path := q.str("path", true)
	if q.errs != nil {
		invalid(w, q.errs)
		return
	}
	name := r.PathValue("host")
	if name == "-" {
		name = ""
	}
	remote, err := s.hub.Remote(name)
	if err != nil {
		fail(w, v2, "download", path, err)
		return
	}
	pr, pw := io.Pipe()
	defer pr.Close()
	res, err := remote.Download(r.Context(), path, pipeSink{pw})
	if err != nil {
		fail(w, v2, "download", path, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(res.Size, 10))
	if res.Version != "" {
		h.Set("ETag", `"`+res.Version+`"`)
	}
	h.Set("Last-Modified", res.ModTime.UTC().Format(http.TimeFormat))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		pr.CloseWithError(errors.New("HEAD request: body not wanted"))
		return
	}
	n, err := io.Copy(w, pr)
	if err != nil || n != res.Size {
		s.log.Warn("Host download cut", "path", path, "bytes", n, "of", res.Size, "err", err)
		panic(http.ErrAbortHandler)
	}
}
