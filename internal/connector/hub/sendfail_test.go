package hub

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// hijackWrap hands the WebSocket library what wrap makes of the
// connection it hijacks.
type hijackWrap struct {
	http.ResponseWriter
	wrap func(net.Conn) net.Conn
}

func (w hijackWrap) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	wc := w.wrap(c)
	// The library writes through brw's writer (net/http's, on c).
	if err := brw.Flush(); err != nil {
		return nil, nil, err
	}
	brw.Writer.Reset(wc)
	return wc, brw, nil
}

// gatheringHub serves hosts for h on a loopback listener, writing to each
// through a FrameConn (as hosts write) over what wrap makes of its
// connection.
func gatheringHub(t *testing.T, h *Hub, wrap func(net.Conn) net.Conn) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var fc *connector.FrameConn
		hw := hijackWrap{ResponseWriter: w, wrap: func(c net.Conn) net.Conn { fc = connector.NewFrameConn(wrap(c)); return fc }}
		ws, err := websocket.Accept(hw, r, &websocket.AcceptOptions{Subprotocols: []string{proto.Protocol}})
		if err != nil {
			return
		}
		c := connector.New(ws, proto.DefaultLimits)
		c.GatherWrites(fc)
		h.serve(r.Context(), c, nil)
	}))
	t.Cleanup(func() { h.Close(); srv.Close() })
	return srv
}

// breakingWrite fails the next write once armed: it writes all of it but
// the last short bytes, fails, and closes the connection, as a reset
// would. Later writes fail.
type breakingWrite struct {
	net.Conn
	mu     sync.Mutex
	armed  bool
	broken bool
	short  int
}

func (b *breakingWrite) arm(short int) {
	b.mu.Lock()
	b.armed, b.short = true, short
	b.mu.Unlock()
}

func (b *breakingWrite) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken {
		return 0, net.ErrClosed
	}
	if !b.armed {
		return b.Conn.Write(p)
	}
	n, err := b.Conn.Write(p[:max(len(p)-b.short, 0)])
	b.broken = true
	b.Conn.Close()
	if err == nil {
		err = errors.New("connection reset by peer")
	}
	return n, err
}

// TestOpWrittenWholeMayHaveRun: when the hub's write of an op fails after
// every byte of the op was written (a partial write that stops past the
// op's frame), the host may run it, and the call says so: "may or may
// not have been applied", not retryable. It said "nothing was applied",
// retryable, and a client retried an insert that ran. A write that stops
// within the op's frame still says nothing was applied.
func TestOpWrittenWholeMayHaveRun(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		short     int // bytes of the op's write that never leave
		handled   bool
		retryable bool
		want      string
	}{
		{"written whole", 0, true, false, "host disconnected before completing the operation; it may or may not have been applied: re-read before retrying"},
		{"one byte short", 1, false, true, "host victim disconnected before the insert reached it; nothing was applied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := New(Options{Token: token, Timeout: time.Minute})
			var hubSide *breakingWrite
			srv := gatheringHub(t, h, func(c net.Conn) net.Conn { hubSide = &breakingWrite{Conn: c}; return hubSide })
			f := dial(t, srv, "victim", proto.ReadWrite, func(*proto.Op) *proto.Result { return ok(ops.WriteResult{}) })
			x, err := h.Find("victim")
			if err != nil {
				t.Fatal(err)
			}
			hubSide.arm(tt.short)
			err = x.Call(context.Background(), proto.OpInsert, "notes.txt", "", ops.InsertRequest{Path: "notes.txt", After: 1, Text: "once"}, nil)
			e, isF := fserr.As(err)
			if !isF || e.Code != fserr.Unavailable || e.Retryable != tt.retryable || e.Message != tt.want {
				t.Errorf("err %#v\nwant unavailable, retryable %v, %q", err, tt.retryable, tt.want)
			}
			select {
			case <-f.conn.Done(): // the host read to the break
			case <-time.After(10 * time.Second):
				t.Fatal("the host did not see its connection break")
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if handled := len(f.ops) == 1; handled != tt.handled {
				t.Errorf("the host got the op: %v, want %v", handled, tt.handled)
			}
		})
	}
}

// TestSendFailuresSayWhetherToRetry: each way Send can fail maps to what
// is known of the op and whether the same call may be made again: only a
// transient failure that left the op unrun is retryable. An op that
// cannot be encoded was retryable too, though it fails the same way
// every time.
func TestSendFailuresSayWhetherToRetry(t *testing.T) {
	t.Parallel()
	x := &Host{info: Info{Name: "victim"}}
	for _, tt := range []struct {
		name      string
		err       error
		ended     bool // the call's context ended meanwhile
		code      fserr.Code
		retryable bool
		want      string // in the message
	}{
		{"cannot be encoded", fmt.Errorf("%w: json: unsupported value: NaN", connector.ErrEncode), false,
			fserr.IOError, false, "the hub could not encode the insert for host victim (connector: cannot encode the message: json: unsupported value: NaN); it was not run"},
		{"written whole, then broke", fmt.Errorf("%w: reset", connector.ErrMaybeSent), false,
			fserr.Unavailable, false, "it may or may not have been applied: re-read before retrying"},
		{"written whole while the call ended", fmt.Errorf("%w: reset", connector.ErrMaybeSent), true,
			fserr.Unavailable, false, "it may or may not have been applied"},
		{"broke before it was written", fmt.Errorf("%w: reset", connector.ErrBroken), false,
			fserr.Unavailable, true, "nothing was applied"},
		{"closed", connector.ErrClosed, false, fserr.Unavailable, true, "nothing was applied"},
		{"the call ended first", context.Canceled, true, fserr.Timeout, false, "it was not run"},
		{"too large", fmt.Errorf("%w: 300 MB", connector.ErrTooLarge), false, fserr.TooLarge, false, "it was not run"},
		{"any other failure", errors.New("connector: no transfer slot"), false, fserr.Unavailable, true, "did not take the insert"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := x.sendFailed(proto.OpInsert, "notes.txt", tt.err, tt.ended)
			if e.Code != tt.code || e.Retryable != tt.retryable || !strings.Contains(e.Message, tt.want) {
				t.Errorf("got %s, retryable %v: %q\nwant %s, retryable %v, with %q", e.Code, e.Retryable, e.Message, tt.code, tt.retryable, tt.want)
			}
		})
	}
}
