package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/sendq"
	"github.com/fsplane/fsplane/internal/workspace"
)

const hubToken = "hub-token"

// hubEnv is an API server with a hub, over a real loopback listener.
type hubEnv struct {
	url  string
	hub  *hub.Hub
	root string // the server's own root, which /v2/fs/* serves
}

// newHubEnv starts the server; with smallSendBuffers its connections
// buffer little outbound (a client that stops reading blocks a response
// at once, not after megabytes).
func newHubEnv(t *testing.T, smallSendBuffers bool) *hubEnv {
	t.Helper()
	return newHubEnvWith(t, smallSendBuffers, httpapi.Options{})
}

// newHubEnvWith is newHubEnv with opts (its Hub is set here).
func newHubEnvWith(t *testing.T, smallSendBuffers bool, opts httpapi.Options) *hubEnv {
	t.Helper()
	root := t.TempDir()
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	h := hub.New(hub.Options{Token: hubToken})
	opts.Hub = h
	srv := httptest.NewUnstartedServer(httpapi.New(ops.New(ws, ops.Options{}), opts))
	srv.Listener = sendq.Listener(srv.Listener) // as fsplane serve's
	if smallSendBuffers {
		srv.Listener = sendBufferListener{srv.Listener}
	}
	srv.Start()
	t.Cleanup(func() { h.Close(); srv.Close() })
	return &hubEnv{url: srv.URL, hub: h, root: root}
}

type sendBufferListener struct{ net.Listener }

func (l sendBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(32 << 10)
	}
	return c, err
}

// waitHosts waits until n hosts are connected.
func (e *hubEnv) waitHosts(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.hub.Hosts()) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d hosts connected, want %d", len(e.hub.Hosts()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// notices collects a host's notices.
type notices struct {
	mu   sync.Mutex
	msgs []string
}

func (n *notices) add(e host.Event) {
	if e.Kind == host.EventNotice {
		n.mu.Lock()
		n.msgs = append(n.msgs, e.Message)
		n.mu.Unlock()
	}
}

func (n *notices) has(sub string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range n.msgs {
		if strings.Contains(m, sub) {
			return true
		}
	}
	return false
}

// connectHost runs a real host named laptop over a new root holding files
// (name → size; the files are sparse) until the test ends.
func (e *hubEnv) connectHost(t *testing.T, files map[string]int64, limits proto.Limits) *notices {
	t.Helper()
	root := t.TempDir()
	for name, size := range files {
		f, err := os.Create(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return e.connectHostRoot(t, root, limits)
}

// connectHostRoot runs a real host named laptop over root until the test
// ends.
func (e *hubEnv) connectHostRoot(t *testing.T, root string, limits proto.Limits) *notices {
	t.Helper()
	return e.connectHostVia(t, e.url, root, limits)
}

// connectHostVia is connectHostRoot with the host dialling url (a proxy
// in front of the hub).
func (e *hubEnv) connectHostVia(t *testing.T, url, root string, limits proto.Limits) *notices {
	t.Helper()
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	n := &notices{}
	x, err := host.New(host.Options{URL: url, Token: hubToken, Name: "laptop", Mode: proto.ReadOnly,
		Engine: ops.New(ws, ops.Options{}), Limits: limits, OnEvent: n.add})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { x.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; ws.Close() })
	e.waitHosts(t, 1)
	return n
}

// openHostDownload starts a GET of url with c, requires 200, and closes
// the body when the test ends; the caller reads it, or not.
func openHostDownload(t *testing.T, c *http.Client, url string) *http.Response {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("download: %s", resp.Status)
	}
	return resp
}

// get fetches url and reads the whole body with a client that gives up
// after 10 s, so a response that never ends fails the test.
func get(t *testing.T, url string) (*http.Response, []byte, error) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// TestHostDownloadOverTheLimit: a file over the connector's transfer limit
// is refused by the host before it answers, so the client gets 413
// too_large instead of a 200 whose body never comes.
func TestHostDownloadOverTheLimit(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, false)
	e.connectHost(t, map[string]int64{"big.bin": 1<<20 + 1, "ok.bin": 1 << 20}, proto.Limits{MaxTransferBytes: 1 << 20})
	resp, body, err := get(t, e.url+"/v2/hosts/laptop/fs/download?path=big.bin")
	if err != nil {
		t.Fatalf("download over the limit: %v (the response hung or was cut)", err)
	}
	var env struct {
		Data struct {
			ErrorType string `json:"error_type"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusRequestEntityTooLarge || json.Unmarshal(body, &env) != nil || env.Data.ErrorType != "too_large" {
		t.Fatalf("download over the limit: %d %.300q, want 413 too_large", resp.StatusCode, body)
	}
	resp, body, err = get(t, e.url+"/v2/hosts/laptop/fs/download?path=ok.bin")
	if err != nil || resp.StatusCode != http.StatusOK || len(body) != 1<<20 {
		t.Fatalf("download at the limit: %v, %d bytes", err, len(body))
	}
}

// fakeHost connects to the hub as a host named laptop and answers each
// download op with answer (on its own goroutine).
func fakeHost(t *testing.T, e *hubEnv, answer func(c *connector.Conn, op *proto.Op)) {
	t.Helper()
	fakeHostOver(t, e, nil, answer)
}

// fakeHostOver is fakeHost with its network connection wrapped by wrap.
func fakeHostOver(t *testing.T, e *hubEnv, wrap func(net.Conn) net.Conn, answer func(c *connector.Conn, op *proto.Op)) {
	t.Helper()
	ctx := context.Background()
	opts := &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + hubToken}}, Subprotocols: []string{proto.Protocol}}
	if wrap != nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return wrap(c), nil
		}}}
	}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/v2/connector", opts)
	if err != nil {
		t.Fatal(err)
	}
	c := connector.New(ws, proto.DefaultLimits)
	t.Cleanup(c.Close)
	go c.Run(ctx, func(msg any) {
		if op, ok := msg.(*proto.Op); ok {
			go answer(c, op)
		}
	})
	if err := c.Send(ctx, &proto.Hello{Name: "laptop", Roots: []string{"/x"}, Mode: proto.ReadOnly,
		Capabilities: proto.Capabilities{Ops: []string{proto.OpDownload}, Transfer: 1}, Limits: proto.DefaultLimits}); err != nil {
		t.Fatal(err)
	}
	e.waitHosts(t, 1)
}

// failingReader yields n bytes, then fails.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("disk gone")
	}
	k := min(len(p), r.n)
	clear(p[:k])
	r.n -= k
	return k, nil
}

// TestHostDownloadAbortEndsTheResponse: when the host gives up a download
// after its result (before the first byte, or midway), the client's
// response ends at once, cut, instead of waiting for bytes that will
// never come.
func TestHostDownloadAbortEndsTheResponse(t *testing.T) {
	t.Parallel()
	const size = 1 << 20
	for _, tc := range []struct {
		name string
		fail func(c *connector.Conn, opID string) error
	}{
		{"before the first byte", func(c *connector.Conn, opID string) error {
			return c.Send(context.Background(), &proto.TransferAbort{TransferID: 1 << 30, OpID: opID, Reason: "the op was cancelled"})
		}},
		{"midway", func(c *connector.Conn, opID string) error {
			err := c.SendData(context.Background(), opID, &failingReader{n: size / 3}, size)
			if err == nil {
				return errors.New("SendData succeeded")
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newHubEnv(t, false)
			fakeHost(t, e, func(c *connector.Conn, op *proto.Op) {
				res, _ := json.Marshal(proto.DownloadResult{Size: size, ModTime: time.Now()})
				if err := c.Send(context.Background(), &proto.Result{OpID: op.OpID, OK: true, Result: res}); err != nil {
					t.Error(err)
					return
				}
				if err := tc.fail(c, op.OpID); err != nil {
					t.Error(err)
				}
			})
			resp, body, err := get(t, e.url+"/v2/hosts/laptop/fs/download?path=f.bin")
			switch {
			case isTimeout(err):
				t.Fatalf("the response did not end when the host aborted the download: %v", err)
			case err == nil:
				t.Fatalf("a download the host aborted looked whole: %d, %d bytes", resp.StatusCode, len(body))
			}
			t.Logf("the client saw: %v", err)
		})
	}
}

// corruptingConn flips one bit in the middle of the first write of at
// least 1 KiB after it is armed: a byte of a data chunk's payload, as
// damage on the way would.
type corruptingConn struct {
	net.Conn
	armed atomic.Bool
}

func (c *corruptingConn) Write(p []byte) (int, error) {
	if len(p) >= 1<<10 && c.armed.CompareAndSwap(true, false) {
		q := bytes.Clone(p)
		q[len(q)/2] ^= 1
		return c.Conn.Write(q)
	}
	return c.Conn.Write(p)
}

// TestHostDownloadCorruptIsCut: a download whose bytes do not match the
// SHA-256 the host sent at the end never reaches its client whole — the
// response stops short of its Content-Length — although the bytes before
// the held-back last one could be written before the check ran.
func TestHostDownloadCorruptIsCut(t *testing.T) {
	t.Parallel()
	const size = 1 << 20
	e := newHubEnv(t, false)
	cc := make(chan *corruptingConn, 1)
	fakeHostOver(t, e, func(c net.Conn) net.Conn {
		x := &corruptingConn{Conn: c}
		cc <- x
		return x
	}, func(c *connector.Conn, op *proto.Op) {
		res, _ := json.Marshal(proto.DownloadResult{Size: size, ModTime: time.Now()})
		if err := c.Send(context.Background(), &proto.Result{OpID: op.OpID, OK: true, Result: res}); err != nil {
			t.Error(err)
			return
		}
		(<-cc).armed.Store(true)
		if err := c.SendData(context.Background(), op.OpID, bytes.NewReader(make([]byte, size)), size); err != nil {
			t.Error(err)
		}
	})
	resp, body, err := get(t, e.url+"/v2/hosts/laptop/fs/download?path=f.bin")
	if err == nil {
		t.Fatalf("a download corrupted on the way looked whole: %d, %d bytes, %d of them not zero", resp.StatusCode, len(body), size-bytes.Count(body, []byte{0}))
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(body) >= size {
		t.Errorf("the client saw %v after %d bytes, want unexpected EOF before %d", err, len(body), size)
	}
}

// smallReadBufferClient is an HTTP client whose connections buffer little
// inbound: reading slowly, or not at all, pushes back on the server at
// once, not after megabytes.
func smallReadBufferClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(16 << 10)
		}
		return c, err
	}}}
}

// TestStalledHostDownloadDoesNotBlockTheHost: a client that opens a large
// download and stops reading fails its own download (its writes time out)
// instead of holding up the host's connection: another op on the host
// completes meanwhile, and the host is told to stop sending. The bound on
// a write to the client (30 s by default) is shortened to keep the test
// quick.
func TestStalledHostDownloadDoesNotBlockTheHost(t *testing.T) {
	t.Parallel()
	e := newHubEnvWith(t, true, httpapi.Options{HostWriteTimeout: time.Second})
	n := e.connectHost(t, map[string]int64{"big.bin": 64 << 20, "a.txt": 10}, proto.Limits{})
	stalled := smallReadBufferClient()
	openHostDownload(t, stalled, e.url+"/v2/hosts/laptop/fs/download?path=big.bin") // never read: the client stalls
	start := time.Now()
	c := &http.Client{Timeout: 25 * time.Second}
	r, err := c.Get(e.url + "/v2/hosts/laptop/fs/stat?path=a.txt")
	if err != nil {
		t.Fatalf("a stat behind the stalled download: %v", err)
	}
	r.Body.Close()
	took := time.Since(start)
	t.Logf("the stat took %s behind the stalled download", took)
	if r.StatusCode != http.StatusOK || took > 10*time.Second {
		t.Fatalf("a stat behind the stalled download: %s after %s, want 200 within 10 s", r.Status, took)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !n.has("the hub aborted a transfer") {
		if time.Now().After(deadline) {
			t.Fatal("the host was not told to stop sending the stalled download")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := len(e.hub.Hosts()); got != 1 {
		t.Errorf("%d hosts connected after the stalled download, want 1", got)
	}
}

// TestSlowHostDownloadClientGetsTheWholeFile: with flow control between hub
// and host, a client that reads slowly (here 512 KiB/s, through small
// socket buffers) gets the whole file at its own pace, where it used to be
// cut off as too slow after 2 s, and the host's other operations are not
// held up meanwhile.
func TestSlowHostDownloadClientGetsTheWholeFile(t *testing.T) {
	t.Parallel()
	const size, rate = 3 << 20, 512 << 10
	e := newHubEnv(t, true)
	e.connectHost(t, map[string]int64{"big.bin": size, "a.txt": 10}, proto.Limits{})
	slow := smallReadBufferClient()
	resp := openHostDownload(t, slow, e.url+"/v2/hosts/laptop/fs/download?path=big.bin")
	read := make(chan error, 1)
	var got int
	go func() {
		buf := make([]byte, 16<<10)
		start := time.Now()
		for {
			n, err := resp.Body.Read(buf)
			got += n
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				read <- err
				return
			}
			if ahead := time.Duration(got)*time.Second/rate - time.Since(start); ahead > 0 {
				time.Sleep(ahead)
			}
		}
	}()
	time.Sleep(time.Second)
	start := time.Now()
	r, body, err := get(t, e.url+"/v2/hosts/laptop/fs/stat?path=a.txt")
	if err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("a stat during the slow download: %v %s", err, body)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a stat during the slow download took %v, want well under 5 s", took)
	}
	select {
	case err := <-read:
		if err != nil {
			t.Fatalf("the slow client's download failed after %d of %d bytes: %v", got, size, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the slow download did not finish in 30 s")
	}
	if got != size {
		t.Fatalf("the slow client got %d bytes, want %d", got, size)
	}
}

// TestSteadyHostDownloadClientIsNotCut: a client that reads a little at a
// time (2 KiB every half second, as curl --limit-rate pauses between
// reads) for longer than a write to it used to be allowed (5 s) gets the
// whole file: each 64 KiB write then takes longer than that, but the
// client never stops reading, and the connector allows a consumer 30 s
// per chunk.
func TestSteadyHostDownloadClientIsNotCut(t *testing.T) {
	t.Parallel()
	const size = 1 << 20
	e := newHubEnv(t, true)
	e.connectHost(t, map[string]int64{"big.bin": size}, proto.Limits{})
	resp := openHostDownload(t, smallReadBufferClient(), e.url+"/v2/hosts/laptop/fs/download?path=big.bin")
	got := 0
	buf := make([]byte, 2<<10)
	for start := time.Now(); time.Since(start) < 7*time.Second; {
		n, err := io.ReadFull(resp.Body, buf)
		got += n
		if err != nil {
			t.Fatalf("the steady client's download was cut after %d of %d bytes (%s): %v", got, size, time.Since(start).Round(time.Second), err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	rest, err := io.ReadAll(resp.Body)
	got += len(rest)
	if err != nil || got != size {
		t.Fatalf("the steady client got %d of %d bytes: %v", got, size, err)
	}
}

// TestHostHeadNeedsNoDataSlot: a HEAD through the hub is answered from
// the host's result alone, with the headers a GET gets, at once even
// while stalled downloads hold all the host's data slots. It used to take
// a slot like a GET: it waited 5 s and was refused busy (503).
func TestHostHeadNeedsNoDataSlot(t *testing.T) {
	t.Parallel()
	e := newHubEnvWith(t, true, httpapi.Options{HostWriteTimeout: time.Minute})
	e.connectHost(t, map[string]int64{"big.bin": 64 << 20, "b.bin": 10}, proto.Limits{MaxConcurrentTransfers: 2})
	small, _ := getWith(t, e.url+"/v2/hosts/laptop/fs/download?path=b.bin", nil)
	stalled := smallReadBufferClient()
	// Never read: the client holds the host's one data slot until the
	// subtests are done.
	resp := openHostDownload(t, stalled, e.url+"/v2/hosts/laptop/fs/download?path=big.bin")
	for _, tt := range []struct {
		name   string
		path   string
		header map[string]string
		get    *http.Response // the GET whose headers the HEAD's must be
		status int
		length string
		ranged string // Content-Range
	}{
		{"a file", "b.bin", nil, small, http.StatusOK, "10", ""},
		{"the file being sent", "big.bin", nil, resp, http.StatusOK, resp.Header.Get("Content-Length"), ""},
		{"a range", "b.bin", map[string]string{"Range": "bytes=2-5"}, small, http.StatusPartialContent, "4", "bytes 2-5/10"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodHead, e.url+"/v2/hosts/laptop/fs/download?path="+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			start := time.Now()
			r, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if took := time.Since(start); r.StatusCode != tt.status || took > 3*time.Second {
				t.Fatalf("HEAD while the slot is held: %s after %s, want %d at once", r.Status, took, tt.status)
			}
			for k, want := range map[string]string{
				"Content-Length": tt.length,
				"Content-Range":  tt.ranged,
				"ETag":           tt.get.Header.Get("ETag"),
				"Last-Modified":  tt.get.Header.Get("Last-Modified"),
				"Accept-Ranges":  "bytes",
			} {
				if got := r.Header.Get(k); got != want || (k == "ETag" && got == "") {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
		})
	}
}

// TestHostDownloadBusyIsRefusedBeforeItStarts: when a host's data slots
// are all held (here its one, by a client that stopped reading), another
// download is refused as busy (503, retryable) before anything is sent,
// where it used to be answered 200 and then cut when no slot freed. An
// answer with no bytes (412, 416) needs no slot and is not held up.
func TestHostDownloadBusyIsRefusedBeforeItStarts(t *testing.T) {
	t.Parallel()
	e := newHubEnvWith(t, true, httpapi.Options{HostWriteTimeout: time.Minute})
	e.connectHost(t, map[string]int64{"big.bin": 64 << 20, "b.bin": 10}, proto.Limits{MaxConcurrentTransfers: 2})
	stalled := smallReadBufferClient()
	openHostDownload(t, stalled, e.url+"/v2/hosts/laptop/fs/download?path=big.bin") // never read: the client holds the slot
	for _, h := range []map[string]string{{"If-Match": `"nope"`}, {"Range": "bytes=100-"}} {
		start := time.Now()
		r, _ := getWith(t, e.url+"/v2/hosts/laptop/fs/download?path=b.bin", h)
		if took := time.Since(start); (r.StatusCode != http.StatusPreconditionFailed && r.StatusCode != http.StatusRequestedRangeNotSatisfiable) || took > 3*time.Second {
			t.Errorf("%v while the slot is held: %s after %s, want 412 or 416 at once", h, r.Status, took)
		}
	}
	second, body, err := get(t, e.url+"/v2/hosts/laptop/fs/download?path=b.bin")
	if err != nil {
		t.Fatalf("the second download was not answered whole: %v", err)
	}
	if second.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"error_type":"busy"`) ||
		!strings.Contains(string(body), `"retryable":true`) || !strings.Contains(string(body), "as many downloads as it may") {
		t.Errorf("second download: %s %s; want 503 busy, retryable", second.Status, body)
	}
}
