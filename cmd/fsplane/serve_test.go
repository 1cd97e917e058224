package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/testenv"
)

func TestServeRefusesOpenBindWithoutKey(t *testing.T) {
	t.Parallel()
	got := runBinary(t, t.TempDir(), "", "serve", "--listen", "0.0.0.0:0", "--state-dir", t.TempDir())
	if got.Exit != 2 || !strings.Contains(got.Stderr, "--api-key") || !strings.Contains(got.Stderr, "--insecure-no-auth") {
		t.Fatalf("got %+v", got)
	}
}

// server is a running `fsplane serve` child process.
type server struct {
	cmd  *exec.Cmd
	url  string
	logs *lockedBuffer
	done chan error
}

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var addrRE = regexp.MustCompile(`addr=(https?://127\.0\.0\.1:\d+)`)

// startServer runs the real binary on an ephemeral loopback port (args
// may override --listen).
func startServer(t *testing.T, dir string, args ...string) *server {
	t.Helper()
	s := tryStartServer(t, dir, args...)
	if s == nil {
		t.Fatalf("server did not start")
	}
	return s
}

// startServerEnv is startServer with environment variables added.
func startServerEnv(t *testing.T, dir string, env []string, args ...string) *server {
	t.Helper()
	s := tryStartServerEnv(t, dir, env, args...)
	if s == nil {
		t.Fatalf("server did not start")
	}
	return s
}

// tryStartServer is startServer returning nil when the server exits before
// listening (its address is taken, say).
func tryStartServer(t *testing.T, dir string, args ...string) *server {
	t.Helper()
	return tryStartServerEnv(t, dir, nil, args...)
}

func tryStartServerEnv(t *testing.T, dir string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--listen", "127.0.0.1:0", "--state-dir", t.TempDir()}, args...)...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return tryStartServerCmd(t, cmd)
}

// tryStartServerCmd starts cmd, a serve command line, and waits until it
// listens; nil when it exits first.
func tryStartServerCmd(t *testing.T, cmd *exec.Cmd) *server {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, logs: &lockedBuffer{}, done: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.logs.WriteString(line + "\n")
			if m := addrRE.FindStringSubmatch(line); m != nil {
				found <- m[1]
			}
		}
		s.done <- cmd.Wait()
	}()
	select {
	case s.url = <-found:
	case <-s.done:
		return nil
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		return nil
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return s
}

func TestServeStartsOnTheCurrentDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir)
	resp, err := http.Get(s.url + "/v2/fs/read?path=hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Success bool
		Data    struct{ Content string }
	}
	json.NewDecoder(resp.Body).Decode(&env)
	resp.Body.Close()
	if !env.Success || env.Data.Content != "hi\n" {
		t.Fatalf("read through the default root: %+v", env)
	}
	if !strings.Contains(s.logs.String(), "roots="+dir) {
		t.Errorf("the root is not printed at start:\n%s", s.logs.String())
	}
}

// TestServeGracefulShutdown sends SIGTERM while a large write is still
// uploading: the write must complete, the file must be whole, and the
// server must exit 0.
func TestServeGracefulShutdown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A grace far longer than the write needs even on a loaded machine
	// (it failed once beside a full test run): the test is of what
	// happens within the grace, not of its length.
	s := startServer(t, dir, "--shutdown-grace", "2m")
	content := strings.Repeat("0123456789abcdef", 1<<20) // 16 MiB
	body := `{"path":"big.txt","content":"` + content + `"}`
	pr, pw := io.Pipe()
	req, _ := http.NewRequestWithContext(context.Background(), "POST", s.url+"/v2/fs/write", pr)
	req.ContentLength = int64(len(body))
	type result struct {
		status int
		err    error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		res <- result{status: resp.StatusCode}
	}()
	half := len(body) / 2
	if _, err := pw.Write([]byte(body[:half])); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := pw.Write([]byte(body[half:])); err != nil {
		t.Fatalf("server stopped reading mid-request: %v", err)
	}
	pw.Close()
	r := <-res
	if r.err != nil || r.status != 200 {
		t.Fatalf("in-flight write: %+v\n%s", r, s.logs.String())
	}
	if err := <-s.done; err != nil {
		t.Fatalf("server exit: %v\n%s", err, s.logs.String())
	}
	got, err := os.ReadFile(filepath.Join(dir, "big.txt"))
	if err != nil || string(got) != content {
		t.Fatalf("big.txt: %d bytes, %v", len(got), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("leftovers in the root: %v", entries)
	}
}

// stallUpload starts a multipart upload of path announcing size bytes,
// sends sent of them and stalls, holding the connection open. It returns
// once the server has created the upload's part file in dir.
func stallUpload(t *testing.T, s *server, dir, path string, size, sent int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	const boundary = "stallboundary"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\n"
	req := fmt.Sprintf("POST /v2/fs/upload?path=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"+
		"Content-Type: multipart/form-data; boundary=%s\r\nContent-Length: %d\r\n\r\n%s",
		path, boundary, len(head)+size, head)
	if _, err := io.WriteString(conn, req+strings.Repeat("x", sent)); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "the upload's part file", func() bool { return len(partFiles(t, dir)) > 0 })
	return conn
}

// partFiles lists the upload part files in dir.
func partFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".fsplane-upload-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitExit waits for the server to exit and returns its exit code. The
// bound only keeps a hung server from hanging the test.
func (s *server) waitExit(t *testing.T) int {
	t.Helper()
	select {
	case err := <-s.done:
		if err == nil {
			return 0
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		t.Fatal(err)
	case <-time.After(60 * time.Second):
		t.Fatalf("the server did not exit; log:\n%s", s.logs.String())
	}
	return -1
}

// TestServeShutdownClosesStalledUploads: a client that stops sending its
// upload must not hold the server past the grace period. SIGTERM ends
// the server with exit status 0 (a shutdown that was asked for), and the
// upload's part file is removed, not left in the root.
func TestServeShutdownClosesStalledUploads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, "--shutdown-grace", "500ms")
	stallUpload(t, s, dir, "stall.bin", 10<<20, 100<<10)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.waitExit(t); code != 0 {
		t.Errorf("exit %d, want 0; log:\n%s", code, s.logs.String())
	}
	if p := partFiles(t, dir); len(p) > 0 {
		t.Errorf("part files left in the root: %v", p)
	}
	if logs := s.logs.String(); strings.Contains(logs, "deadline exceeded") {
		t.Errorf("the shutdown reports a failure:\n%s", logs)
	}
	// The upload's access log line must not read as a success: the
	// client got no complete response.
	var upload string
	for line := range strings.Lines(s.logs.String()) {
		if strings.Contains(line, `msg=Request`) && strings.Contains(line, `route="POST /v2/fs/upload"`) {
			upload = line
		}
	}
	if !strings.Contains(upload, " aborted=true") {
		t.Errorf("the cut upload's access log line %q does not say aborted=true; log:\n%s", upload, s.logs.String())
	}
}

// TestServeSecondSignalForcesExit: a second SIGINT or SIGTERM does not
// wait for the grace period; the exit status is 128 plus the signal (130,
// 143), and the part file is still removed.
func TestServeSecondSignalForcesExit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := startServer(t, dir, "--shutdown-grace", "1h")
			stallUpload(t, s, dir, "stall.bin", 10<<20, 100<<10)
			if err := s.cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, 20*time.Second, "the shutdown to start", func() bool { return strings.Contains(s.logs.String(), "Shutting down") })
			if err := s.cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if code := s.waitExit(t); code != tt.code {
				t.Errorf("exit %d, want %d; log:\n%s", code, tt.code, s.logs.String())
			}
			if p := partFiles(t, dir); len(p) > 0 {
				t.Errorf("part files left in the root: %v", p)
			}
		})
	}
}

// TestServeClosesIdleConnections: a keep-alive connection left idle
// between requests is closed after --idle-timeout, while a long poll on
// another connection, idle as long but inside a request, is not.
func TestServeClosesIdleConnections(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir, "--root", dir, "--idle-timeout", "300ms")
	host := strings.TrimPrefix(s.url, "http://")
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	idle, idleR := dial()
	fmt.Fprintf(idle, "GET /v2/fs/read?path=a.txt HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	resp, err := http.ReadResponse(idleR, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first request: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	w, err := client.New(s.url)
	if err != nil {
		t.Fatal(err)
	}
	watch, err := w.CreateWatch(context.Background(), client.CreateWatchRequest{Path: "."})
	if err != nil {
		t.Fatal(err)
	}
	first, err := w.PollWatch(context.Background(), watch.WatcherID, client.PollQuery{})
	if err != nil {
		t.Fatal(err)
	}
	wait := 1.5
	polled := make(chan error, 1)
	go func() {
		_, err := w.PollWatch(context.Background(), watch.WatcherID, client.PollQuery{Cursor: &first.Cursor, Timeout: &wait})
		polled <- err
	}()

	// The idle connection is closed by the server: a read ends with EOF
	// (the test's own deadline only guards against a hang).
	idle.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := idleR.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("idle connection: read %v, want EOF from the server closing it", err)
	}
	if err := <-polled; err != nil {
		t.Errorf("a long poll longer than the idle timeout failed: %v", err)
	}
}

// TestServeWarnsBeyondLoopback: a server reachable beyond loopback over
// plain HTTP, or without authentication, says so at start with a WARN
// line (never the key); on loopback, or with TLS, it has nothing to
// warn of. Listening on every interface, the start line gives a URL a
// local client can use (it used to print addr=http://[::]:PORT) and says
// it listens on all of them.
func TestServeWarnsBeyondLoopback(t *testing.T) {
	t.Parallel()
	const key = "SEKRIT-key-1234"
	cert := newTestCert(t, t.TempDir(), "hub")
	const (
		plain  = `level=WARN msg="Serving plain HTTP beyond loopback: the API key, the connector token and file contents cross the network unencrypted; pass --tls-cert and --tls-key`
		noAuth = `level=WARN msg="No authentication (--insecure-no-auth): anyone who can reach this server can read, change and delete the files under the roots`
	)
	tests := []struct {
		name     string
		args     []string
		want     []string // log lines must contain these
		not      []string // and not these
		allIfces bool
	}{
		{"every interface, key, HTTP", []string{"--listen", "0.0.0.0:0", "--api-key", key},
			[]string{plain}, []string{key, "level=WARN msg=\"No authentication"}, true},
		{"every interface, no auth", []string{"--listen", "0.0.0.0:0", "--insecure-no-auth"},
			[]string{noAuth, `level=WARN msg="Serving plain HTTP beyond loopback: file contents cross the network unencrypted`}, nil, true},
		{"every interface, key, TLS", []string{"--listen", "0.0.0.0:0", "--api-key", key, "--tls-cert", cert.certFile, "--tls-key", cert.keyFile},
			nil, []string{"level=WARN", key}, true},
		{"loopback, no auth", nil, nil, []string{"level=WARN", "interfaces="}, false},
		{"loopback, insecure-no-auth", []string{"--insecure-no-auth"}, nil, []string{"level=WARN"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, t.TempDir(), tt.args...)
			logs := s.logs.String()
			for _, w := range tt.want {
				if !strings.Contains(logs, w) {
					t.Errorf("log lacks %q:\n%s", w, logs)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(logs, n) {
					t.Errorf("log has %q:\n%s", n, logs)
				}
			}
			if got := strings.Contains(logs, " interfaces=all "); got != tt.allIfces {
				t.Errorf("start line says interfaces=all: %v, want %v:\n%s", got, tt.allIfces, logs)
			}
			c := httpsClient(cert.pool)
			resp, err := c.Get(s.url + "/health")
			if err != nil {
				t.Fatalf("the start line's URL %s: %v", s.url, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s/health: %d", s.url, resp.StatusCode)
			}
		})
	}
}

// TestLocalURLWithTLS: on every interface with TLS, the printed URL
// names a host the certificate is valid for, so that a client can use it
// as printed (127.0.0.1 failed verification with a certificate for a DNS
// name).
func TestLocalURLWithTLS(t *testing.T) {
	t.Parallel()
	every := &net.TCPAddr{IP: net.IPv6unspecified, Port: 8443}
	for _, tt := range []struct {
		name string
		addr *net.TCPAddr
		cert x509.Certificate
		url  string
	}{
		{"names 127.0.0.1", every, x509.Certificate{DNSNames: []string{"files.example"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}, "https://127.0.0.1:8443"},
		{"names localhost", every, x509.Certificate{DNSNames: []string{"files.example", "localhost"}}, "https://localhost:8443"},
		{"a DNS name", every, x509.Certificate{DNSNames: []string{"*.example", "files.example"}}, "https://files.example:8443"},
		{"an IP address", every, x509.Certificate{IPAddresses: []net.IP{net.ParseIP("fd00::5")}}, "https://[fd00::5]:8443"},
		{"nothing usable", every, x509.Certificate{DNSNames: []string{"*.example"}}, "https://127.0.0.1:8443"},
		{"one interface", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8443}, x509.Certificate{DNSNames: []string{"files.example"}}, "https://10.0.0.5:8443"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if url, _, _ := localURL("https", tt.addr, &tt.cert); url != tt.url {
				t.Errorf("localURL = %q, want %q", url, tt.url)
			}
		})
	}
}

func TestLocalURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		addr                 *net.TCPAddr
		url                  string
		everywhere, loopback bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 18091}, "http://127.0.0.1:18091", false, true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 18091}, "http://127.0.0.1:18091", true, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 80}, "http://127.0.0.1:80", true, false},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 8080, Zone: "eth0"}, "http://[fe80::1%eth0]:8080", false, false},
	} {
		url, everywhere, loopback := localURL("http", tt.addr, nil)
		if url != tt.url || everywhere != tt.everywhere || loopback != tt.loopback {
			t.Errorf("localURL(%v) = %q, %v, %v; want %q, %v, %v", tt.addr, url, everywhere, loopback, tt.url, tt.everywhere, tt.loopback)
		}
	}
}

// TestServeRefusesUnusableFlags: values no client could use stop the
// server at start with exit status 2 and a clear error, instead of a
// server that then refuses every client or silently does something else.
// A key or token of white space only, or with a control character
// inside, cannot be sent in a header; --op-timeout 0
// used to become 30 s without a word; a --connector-allow-origin written
// otherwise than browsers send it never matched. The error never prints
// the secret.
func TestServeRefusesUnusableFlags(t *testing.T) {
	t.Parallel()
	const secret = "Sekrit-Value-42"
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"key of white space only", []string{"AIO_API_KEY=   "}, []string{"--listen", "0.0.0.0:0"},
			"fsplane serve: AIO_API_KEY (for --api-key): the value is only white space"},
		{"key with a control character", nil, []string{"--api-key", secret + "\x01x"},
			"fsplane serve: --api-key: the value contains a control character, which an HTTP header cannot carry"},
		{"token with a line break inside", []string{"FSPLANE_CONNECTOR_TOKEN=" + secret + "\nx"}, nil,
			"fsplane serve: FSPLANE_CONNECTOR_TOKEN (for --connector-token): the value contains a line break"},
		{"op timeout zero", nil, []string{"--op-timeout", "0"}, "fsplane serve: --op-timeout 0s: must be positive"},
		{"op timeout negative", nil, []string{"--op-timeout", "-5s"}, "fsplane serve: --op-timeout -5s: must be positive"},
		{"connector origin with a path", nil, []string{"--connector-allow-origin", "https://app.example/page"},
			`fsplane serve: --connector-allow-origin: origin "https://app.example/page"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// A root that does not exist: a server that let the value
			// through fails at it (exit 1) rather than running on.
			args := append([]string{"serve", "--listen", "127.0.0.1:0", "--root", "/nonexistent/root", "--state-dir", t.TempDir()}, tt.args...)
			got := runBinaryEnv(t, t.TempDir(), tt.env, args...)
			if got.Exit != 2 || !strings.Contains(got.Stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", got.Exit, got.Stderr, tt.want)
			}
			if strings.Contains(got.Stderr, secret) {
				t.Errorf("stderr shows the secret:\n%s", got.Stderr)
			}
		})
	}
}

// TestServeAcceptsUsableFlags: a key with white space inside (a tab) is
// sendable and accepted, one with white space around it (a secret
// file's final newline) is taken without it; "LOCALHOST" is loopback as "localhost" is (it
// was refused as an address beyond loopback without a key); a
// --connector-allow-origin in another case or with the default port is
// the origin browsers send.
func TestServeAcceptsUsableFlags(t *testing.T) {
	t.Parallel()
	for _, k := range []struct{ name, given, sent string }{
		{"a tab inside", "in\tside", "in\tside"},
		{"a secret file's final newline", "k3y\n", "k3y"},
		{"a Windows line end and a leading space", " k3y\r\n", "k3y"},
	} {
		s := startServerEnv(t, t.TempDir(), []string{"FSPLANE_API_KEY=" + k.given})
		req, _ := http.NewRequest("GET", s.url+"/v2/fs/list?path=.", nil)
		req.Header.Set("x-api-key", k.sent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("key with %s, sent as %q: %d, want 200", k.name, k.sent, resp.StatusCode)
		}
	}
	var (
		resp *http.Response
		err  error
	)

	s := startServer(t, t.TempDir(), "--listen", "LOCALHOST:0")
	resp, err = http.Get(s.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("--listen LOCALHOST:0: /health %d", resp.StatusCode)
	}

	s = startServer(t, t.TempDir(), "--connector-token", "tok", "--connector-allow-origin", "HTTPS://App.Example:443")
	req, _ := http.NewRequest("GET", s.url+"/v2/connector", nil)
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Origin", "https://app.example")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// Past the origin check, the hub wants a WebSocket upgrade.
	if strings.Contains(string(body), "not allowed") {
		t.Errorf("an allowed connector origin was refused: %d %s", resp.StatusCode, body)
	}
}

// TestServeShutdownLetsMCPCallsFinish: an MCP call in flight when the
// stop comes completes within the grace, as any request does (closing
// every MCP session at once, to end their event streams, cut it: its
// answer was a 404 or an empty 200), and an open event stream does not
// hold the stop for the grace (1 h here).
func TestServeShutdownLetsMCPCallsFinish(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello-mcp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir, "--root", dir, "--shutdown-grace", "1h")
	post := func(sid, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", s.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The session's event stream, open through the stop.
	req, _ := http.NewRequest("GET", s.url+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("event stream: %v %v", stream, err)
	}
	streamEnded := make(chan struct{})
	go func() { io.Copy(io.Discard, stream.Body); stream.Body.Close(); close(streamEnded) }()

	// A call whose body is half sent when the stop comes.
	host := strings.TrimPrefix(s.url, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", host, sid, len(body), body[:20])
	// The stop must find the call begun: a connection still in the
	// listen queue is reset when the listener closes, and one whose
	// headers are unread counts as idle, as for any server. The server
	// has read what was sent once its socket's receive queue is empty.
	testenv.WaitFor(t, 20*time.Second, "the server to read the call's headers", func() bool { return unread(t, conn) == 0 })
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "the shutdown to start", func() bool { return strings.Contains(s.logs.String(), "Shutting down") })
	if _, err := io.WriteString(conn, body[20:]); err != nil {
		t.Fatalf("the server stopped reading the call: %v", err)
	}
	call, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the call in flight got no answer: %v\n%s", err, s.logs.String())
	}
	got, _ := io.ReadAll(call.Body)
	call.Body.Close()
	if call.StatusCode != 200 || !strings.Contains(string(got), "hello-mcp") {
		t.Errorf("the call in flight: %d %q, want 200 with the file's content", call.StatusCode, got)
	}
	if code := s.waitExit(t); code != 0 {
		t.Errorf("exit %d, want 0; log:\n%s", code, s.logs.String())
	}
	<-streamEnded
}

// unread is how many bytes sent on conn, a loopback TCP connection, the
// server's end has not read yet (its receive queue, from /proc/net/tcp;
// Linux); -1 until the kernel lists that end.
func unread(t *testing.T, conn net.Conn) int64 {
	t.Helper()
	client, server := conn.LocalAddr().(*net.TCPAddr), conn.RemoteAddr().(*net.TCPAddr)
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(":%04X", server.Port)
	peer := fmt.Sprintf(":%04X", client.Port)
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasSuffix(f[1], want) || !strings.HasSuffix(f[2], peer) {
			continue
		}
		_, rx, _ := strings.Cut(f[4], ":")
		n, err := strconv.ParseInt(rx, 16, 64)
		if err != nil {
			t.Fatalf("/proc/net/tcp queue %q: %v", f[4], err)
		}
		return n
	}
	return -1
}

// TestServeMCPFollowsTheHostRules: /mcp takes the Host headers the rest
// of the API takes (the browser guard's rules): a name --allow-host adds,
// and any name with an API key (a TLS proxy on the machine that keeps
// Host). A foreign name on an open server is still refused, by the guard.
func TestServeMCPFollowsTheHostRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := startServer(t, dir, "--root", dir, "--allow-host", "sandbox")
	keyed := startServer(t, dir, "--root", dir, "--api-key", "k3y")
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tt := range []struct {
		name   string
		s      *server
		host   string
		key    string
		status int
	}{
		{"allowed name", open, "sandbox", "", 200},
		{"any name with a key", keyed, "proxy.example.com", "k3y", 200},
		{"foreign name, open server", open, "evil.example", "", 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest("POST", tt.s.url+"/mcp", strings.NewReader(initialize))
			req.Host = tt.host + ":" + req.URL.Port()
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.key != "" {
				req.Header.Set("Authorization", "Bearer "+tt.key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("POST /mcp with Host %s: %d %s, want %d", req.Host, resp.StatusCode, body, tt.status)
			}
		})
	}
}
