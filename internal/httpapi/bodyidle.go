package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// defaultBodyIdle is Options.BodyIdleTimeout's default: nginx's
// client_body_timeout.
const defaultBodyIdle = 60 * time.Second

// cutIdleBodies ends a request whose client stops sending its body: each
// read of the body may wait d at most (a deadline on the connection, set
// before each read), so a client that announces a body and then sends
// nothing, or trickles it with long pauses, no longer holds a connection
// and a handler for good — with the key as without (refusals are cut
// sooner, see refuse). The handler sees a read error (an interrupted
// upload, an unreadable body: nothing is written) and the connection
// closes. A slow but steady upload is never cut: only a pause counts.
//
// Once the body has ended no deadline is set again: net/http then watches
// the connection with a read of its own for the rest of the request
// (clearing the deadline as it starts it), and a deadline set by a read
// after the end would time that read out, which cancels the request's
// context while a long search or commit runs. When the handler stops
// reading early, net/http's read of what is left after the handler is
// bounded by the deadline too — the last one set, so a handler that stops
// early (a tar's padding after its end) and then works longer than d has
// its connection closed after its answer, which still arrives whole, and
// its log line says aborted=true. The next request's read sets the
// connection's deadlines afresh.
func cutIdleBodies(d time.Duration, next http.Handler) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		// A copy of the request carries the wrapped body: net/http looks
		// at its own request's body, after the handler, to decide what to
		// do with an unread rest (close the connection rather than read
		// 256 KiB of a 5 GiB upload it refused), and a body it does not
		// know it would read with no deadline.
		r2 := r.WithContext(r.Context())
		r2.Body = &idleBody{ReadCloser: r.Body, rc: http.NewResponseController(w), d: d}
		next.ServeHTTP(w, r2)
		r.Pattern = r2.Pattern // for the access log
	})
}

// idleBody is a request body whose reads wait d at most each.
type idleBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	d    time.Duration
	done bool // the body ended: no more deadlines
}

// bodyIdleError is the error of a body read that waited longer than d.
// Its text is for the client (the connection's own "read tcp …: i/o
// timeout" is not), and the fronts' failures say it (see idleHint).
type bodyIdleError struct {
	d   time.Duration
	err error // the connection's deadline error
}

func (e *bodyIdleError) Error() string {
	return fmt.Sprintf("no part of the request body arrived for %s: send the body without long pauses", e.d)
}

func (e *bodyIdleError) Unwrap() error { return e.err }

// idleHint is the hint for a failure caused by a body cut for idling
// (an upload, a tree or a JSON body read; the message names the
// operation), or "".
func idleHint(err error) string {
	if be, ok := errors.AsType[*bodyIdleError](err); ok {
		return be.Error()
	}
	return ""
}

func (b *idleBody) Read(p []byte) (int, error) {
	if !b.done {
		_ = b.rc.SetReadDeadline(time.Now().Add(b.d))
	}
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &bodyIdleError{d: b.d, err: err}
	default:
		b.done = true
	}
	return n, err
}
