// Package refuse ends the connections of requests a server answers
// without reading their bodies: refusals (401, 403) and the probes an
// unauthenticated client may call.
//
// After a handler returns, net/http reads what remains of an unread
// request body, up to 256 KiB, so that the connection can serve another
// request, and it reads without a deadline. A client that announces a
// body and then sends a byte now and then holds the connection, and its
// descriptor, for as long as it likes; enough of them exhaust the
// process's descriptors. "Connection: close" alone does not stop that
// read (net/http still closes the body the same way), so CloseAfter also
// bounds it.
package refuse

import (
	"net/http"
	"time"
)

// Drain is how long the server may go on reading a refused request's
// body after answering. A client that sent its whole body at once (the
// usual case) has it read, so the server's close does not reset the
// connection under the answer; a slow one is cut off.
const Drain = time.Second

// CloseAfter makes the server close w's connection once the response is
// written, reading what remains of the request body for at most Drain
// first. Call it before writing the response. A writer that wraps another
// must unwrap to it (http.ResponseController).
func CloseAfter(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(Drain))
}

// HasBody reports whether r announces a request body (a Content-Length
// above zero, or chunked).
func HasBody(r *http.Request) bool { return r.ContentLength != 0 }
