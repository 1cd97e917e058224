package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"time"
)

// statusRecorder remembers the status a handler wrote. It forwards
// ReadFrom so io.Copy from a file to the response keeps the kernel's
// sendfile path (downloads depend on it).
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// ReadFrom forwards to the underlying writer's ReadFrom, so copying a file
// into the response stays zero-copy.
func (s *statusRecorder) ReadFrom(r io.Reader) (int64, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := io.Copy(s.ResponseWriter, r)
	s.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer
// (flushing SSE, hijacking for WebSockets).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests logs one line per request: method, route pattern, status,
// bytes and duration. It never logs the query string (which may hold
// api_key), headers or bodies.
//
// status and bytes are what the handler wrote, not what the client got:
// net/http buffers a response, so a write to a connection that is gone
// seems to succeed. When the connection ended before the handler did
// (the client went away, or the server closed it at the end of its
// shutdown grace), the response cannot have arrived whole, and the line
// says aborted=true: "status=200 bytes=382" alone claimed a success the
// client never saw. A client that half-closes its side after the request
// (nc -N, some scripts) can be marked so too, though it read the whole
// response: net/http ends the request's context when it sees that end.
func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		// net/http sends the part of a response still in its buffer (it
		// holds 4 KiB) only after the handler returns, that is after this
		// line is written: a 4 KiB read's last bytes waited for the log
		// write, or for a stderr pipe that is slow to drain. A response
		// with a Content-Length is flushed first; one without it is left
		// alone, since a flush would make net/http send it chunked
		// instead of working out its length. A failed flush ends the
		// request's context, so the line says aborted=true.
		if rec.status != 0 && rec.Header().Get("Content-Length") != "" {
			_ = http.NewResponseController(w).Flush()
		}
		route := r.Pattern
		if route == "" {
			route = r.URL.Path
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		attrs := []slog.Attr{slog.String("method", r.Method), slog.String("route", route),
			slog.Int("status", rec.status), slog.Int64("bytes", rec.bytes),
			slog.Duration("duration", time.Since(start))}
		// The request's context ends before ServeHTTP returns only when
		// its connection failed (net/http cancels it at a failed read,
		// the body's too, or write) or, on HTTP/2, its stream was reset;
		// never for a connection hijacked (a WebSocket), which net/http
		// no longer watches.
		if r.Context().Err() != nil {
			attrs = append(attrs, slog.Bool("aborted", true))
		}
		log.LogAttrs(r.Context(), slog.LevelInfo, "Request", attrs...)
	})
}
