package host

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// dialFailure wraps cause as coder/websocket and net/http wrap a failed
// dial, so the cause sits at the end of a long text.
func dialFailure(cause error) error {
	return &phaseError{err: fmt.Errorf("failed to WebSocket dial: failed to send handshake request: %w",
		&url.Error{Op: "Get", URL: "http://127.0.0.1:18710/v2/connector", Err: cause})}
}

// lostFailure wraps cause as a connection's reader wraps a failed read.
func lostFailure(cause error) error {
	return &phaseError{lost: true, err: fmt.Errorf("failed to get reader: %w", cause)}
}

// TestReason: each failure is summed up by its cause, whatever wraps it.
func TestReason(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"none", nil, ""},
		{"connection refused", dialFailure(refused), "hub unreachable (connection refused)"},
		{"no such host", dialFailure(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "hub.invalid", IsNotFound: true}}),
			"hub not found (no such host)"},
		{"DNS timeout", dialFailure(&net.DNSError{Err: "i/o timeout", Name: "hub.example", IsTimeout: true}), "hub not found (DNS lookup timed out)"},
		{"DNS failure", dialFailure(&net.DNSError{Err: "server misbehaving", Name: "hub.example"}), "hub not found (DNS lookup failed: server misbehaving)"},
		{"no route", dialFailure(&net.OpError{Op: "dial", Err: syscall.EHOSTUNREACH}), "hub unreachable (no route to host)"},
		{"dial timeout", dialFailure(&net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}), "hub unreachable (timed out)"},
		{"https to plain HTTP", dialFailure(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}),
			"TLS handshake failed (the server at that address does not speak TLS: use http://)"},
		{"TLS refused by the hub", dialFailure(&net.OpError{Op: "remote error", Err: tls.AlertError(116)}),
			"TLS handshake failed (tls: certificate required)"},
		{"hub shut down", lostFailure(fmt.Errorf("failed to read frame: %w", websocket.CloseError{Code: websocket.StatusNormalClosure})), "hub shut down"},
		{"hub going away", lostFailure(websocket.CloseError{Code: websocket.StatusGoingAway, Reason: "restart"}), "hub shut down"},
		{"hub closed it", lostFailure(websocket.CloseError{Code: websocket.StatusPolicyViolation, Reason: "use subprotocol " + proto.Protocol}),
			"hub closed the connection (use subprotocol " + proto.Protocol + ")"},
		{"hub closed it, no reason", lostFailure(websocket.CloseError{Code: websocket.StatusInternalError}), "hub closed the connection (status 1011)"},
		{"reset", lostFailure(&net.OpError{Op: "read", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}), "connection lost (connection reset)"},
		{"EOF", lostFailure(io.EOF), "connection lost (closed abruptly)"},
		{"unanswered pings", lostFailure(connector.ErrClosed), "connection lost (the hub stopped responding)"},
		{"read timeout", lostFailure(&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}), "connection lost (timed out)"},
		{"anything else", lostFailure(fmt.Errorf("reading: %w", errors.New("frame too big"))), "connection lost (frame too big)"},
		// Errors the host words itself are already short and say what to
		// do.
		{"refused token", fmt.Errorf("%w (HTTP 401 Unauthorized)", ErrUnauthorized), "the hub refused the connection (HTTP 401 Unauthorized)"},
		{"no welcome", errors.New("the hub sent no welcome within 10s of hello"), "the hub sent no welcome within 10s of hello"},
		{"hub restarting", errors.New("the hub refused the connection (HTTP 503 Service Unavailable: hub restarting)"),
			"the hub refused the connection (HTTP 503 Service Unavailable: hub restarting)"},
	} {
		if got := Reason(tt.err); got != tt.want {
			t.Errorf("%s: Reason(%v) = %q, want %q", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestReconnectionReasons runs hosts against real listeners: the events
// carry the reason in a few words and the whole error beside it.
func TestReconnectionReasons(t *testing.T) {
	t.Parallel()
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		f := start(t, hosttest.Start(t, hosttest.Options{}), proto.ReadOnly, []string{t.TempDir()}, func(o *Options) {
			o.URL = "http://" + addr + "/?token=QTOKsecret55"
		})
		e, _ := f.rec.wait(t, 10*time.Second, 0, "reconnecting", func(e Event) bool { return e.State == Reconnecting })
		if e.Reason != "hub unreachable (connection refused)" {
			t.Errorf("reason %q, want hub unreachable (connection refused)", e.Reason)
		}
		if !strings.Contains(e.Err, "cannot reach the hub") || !strings.Contains(e.Err, "connection refused") || strings.Contains(e.Err, "QTOKsecret55") {
			t.Errorf("err %q, want the whole error, the URL's secret masked", e.Err)
		}
		if s := f.h.Status(); s.Reason != e.Reason {
			t.Errorf("Status().Reason = %q, want %q", s.Reason, e.Reason)
		}
	})
	t.Run("hub shut down", func(t *testing.T) {
		t.Parallel()
		h := hosttest.Start(t, hosttest.Options{})
		f := setup(t, h, proto.ReadOnly, nil, nil)
		n := len(f.rec.all())
		h.Drop() // a clean close, as a hub shutting down sends
		e, _ := f.rec.wait(t, 10*time.Second, n, "reconnecting", func(e Event) bool { return e.State == Reconnecting })
		if e.Reason != "hub shut down" || !strings.Contains(e.Err, "StatusNormalClosure") {
			t.Errorf("reason %q (err %q), want hub shut down", e.Reason, e.Err)
		}
	})
}

// TestRefusalsSayWhatToFix: the refusals that end Run are told apart by
// their remedy, and each is still the general error for errors.Is.
func TestRefusalsSayWhatToFix(t *testing.T) {
	t.Parallel()
	tokenHub := hosttest.Start(t, hosttest.Options{Token: "right"})
	tlsHub := hosttest.Start(t, hosttest.Options{Token: "tok", TLS: true})
	noTokenHub := httptest.NewServer(hub.New(hub.Options{})) // the real hub, without a connector token
	t.Cleanup(noTokenHub.Close)
	plainToTLS := strings.Replace(tlsHub.URL, "https://", "http://", 1)
	for _, tt := range []struct {
		name       string
		url, token string
		is         []error
		not        error
		want       string
	}{
		{"no token given", tokenHub.URL, "", []error{ErrTokenMissing, ErrUnauthorized}, nil,
			"the hub requires a token and none was given (HTTP 401 Unauthorized)"},
		{"wrong token", tokenHub.URL, "wrong", []error{ErrUnauthorized}, ErrTokenMissing,
			"the hub refused the connection (HTTP 401 Unauthorized: connector token required)"},
		{"hub without a token", noTokenHub.URL, "tok", []error{ErrHubHasNoToken, ErrUnauthorized}, nil,
			"the hub refused the connection (HTTP 403 Forbidden: " + proto.NoHostsRefusal + ")"},
		{"hub without a token, none given", noTokenHub.URL, "", []error{ErrHubHasNoToken}, ErrTokenMissing, proto.NoHostsRefusal},
		{"http:// to a TLS hub", plainToTLS + "/prefix?token=QTOKsecret55", "tok", []error{ErrNeedsTLS, ErrProtocol}, nil,
			"the hub speaks TLS: use " + tlsHub.URL + "/prefix?token=xxxxx"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := start(t, tokenHub, proto.ReadOnly, []string{t.TempDir()}, func(o *Options) { o.URL, o.Token = tt.url, tt.token })
			select {
			case err := <-f.done:
				f.done <- err // for the cleanup
				for _, target := range tt.is {
					if !errors.Is(err, target) {
						t.Errorf("Run = %v, not %v", err, target)
					}
				}
				if tt.not != nil && errors.Is(err, tt.not) {
					t.Errorf("Run = %v, wrongly %v", err, tt.not)
				}
				if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "QTOKsecret55") {
					t.Errorf("Run = %q, want %q", err, tt.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run kept retrying")
			}
		})
	}
}
