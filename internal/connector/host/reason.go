package host

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector"
)

// phaseError is a connection failure and the stage it happened at:
// reaching the hub (the dial, TLS, the upgrade) or, once connected,
// keeping the connection. Reason words its summary after the stage: the
// same "connection reset" means the hub could not be reached in one and
// that a working connection broke in the other.
type phaseError struct {
	lost bool // after the upgrade
	err  error
}

func (e *phaseError) Error() string {
	if e.lost {
		return "connection lost: " + e.err.Error()
	}
	return "cannot reach the hub: " + e.err.Error()
}

func (e *phaseError) Unwrap() error { return e.err }

// Reason sums up in a few words why a connection attempt or a connection
// failed, for a status line or a log line: "hub unreachable (connection
// refused)", "hub not found (no such host)", "hub shut down", "connection
// lost (timed out)". The whole error is long — the network library wraps
// the cause in the request it was making, the URL and the stage it was
// at — and a line cut to fit a window kept everything but the cause. The
// errors the host words itself (the hub refused the token, the
// certificate is not trusted, the server is no hub, no welcome came) come
// back whole: they are short and say what to do. Event.Reason is Reason
// of the error in Event.Err; the TUI and the plain log show it.
func Reason(err error) string {
	var pe *phaseError
	switch {
	case err == nil:
		return ""
	case permanent(err) || !errors.As(err, &pe):
		return err.Error()
	}
	var (
		dns *net.DNSError
		ce  websocket.CloseError
		rh  tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &rh):
		// https:// to a server that does not speak TLS.
		return "TLS handshake failed (the server at that address does not speak TLS: use http://)"
	case strings.Contains(err.Error(), "remote error: tls:"):
		// The hub was reached and refused the handshake (a client
		// certificate it wants, a protocol version). Over TCP the alert
		// is an unexported type inside a net.OpError (tls.AlertError is
		// QUIC's): its text is all there is to match.
		return "TLS handshake failed (" + cause(pe.err) + ")"
	case errors.As(err, &ce):
		if ce.Code == websocket.StatusNormalClosure || ce.Code == websocket.StatusGoingAway {
			return "hub shut down"
		}
		why := ce.Reason
		if why == "" {
			why = fmt.Sprintf("status %d", int(ce.Code))
		}
		return "hub closed the connection (" + why + ")"
	case errors.As(err, &dns):
		why := "DNS lookup failed: " + dns.Err
		switch {
		case dns.IsNotFound:
			why = "no such host"
		case dns.IsTimeout:
			why = "DNS lookup timed out"
		}
		return "hub not found (" + why + ")"
	}
	what := "hub unreachable"
	if pe.lost {
		what = "connection lost"
	}
	return what + " (" + cause(pe.err) + ")"
}

// cause names the network failure behind err, else returns the innermost
// error's text (the one wrapped by all the others).
func cause(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to host"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.Is(err, connector.ErrClosed):
		// The connection closed itself: the hub stopped answering pings
		// or stopped reading (connector.ErrClosed).
		return "the hub stopped responding"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "closed abruptly"
	}
	for {
		next := errors.Unwrap(err)
		if next == nil || next.Error() == "" {
			return err.Error()
		}
		err = next
	}
}
