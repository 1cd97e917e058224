package httpapi_test

import (
	"bufio"
	"context"
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
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// sendfileServerEnv makes the test binary a download server instead of
// a test (see TestDownloadUsesSendfile).
const sendfileServerEnv = "FSPLANE_TEST_SENDFILE_ROOT"

// TestDownloadUsesSendfile runs the real handler chain in a child process
// under strace and checks that a download's body leaves through
// sendfile(2), the kernel's zero-copy path, and not through write(2)s of
// a user-space buffer. It skips without strace or ptrace.
func TestDownloadUsesSendfile(t *testing.T) {
	if root := os.Getenv(sendfileServerEnv); root != "" {
		serveForStrace(t, root)
		return
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed")
	}
	t.Parallel()
	root := t.TempDir()
	const size = 32 << 20
	if err := os.WriteFile(filepath.Join(root, "big.bin"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "trace")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, strace, "-f", "-qq", "-e", "trace=sendfile,copy_file_range,splice,write,writev", "-o", trace,
		os.Args[0], "-test.run=^TestDownloadUsesSendfile$", "-test.count=1")
	cmd.Env = append(os.Environ(), sendfileServerEnv+"="+root)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot run strace: %v", err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	addr := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Skip("the traced server did not start (ptrace not permitted?)")
	}
	go io.Copy(io.Discard, stdout)
	resp, err := http.Get("http://" + addr + "/v2/fs/download?path=big.bin")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != size {
		t.Fatalf("download: %d bytes, %v", n, err)
	}
	stdin.Close()
	cmd.Wait()
	out, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	zeroCopy, written := int64(0), int64(0)
	// strace -f splits a call another thread interrupts into
	// "sendfile(... <unfinished ...>" and "<... sendfile resumed>...) = N":
	// the result is on the resumed line.
	re := regexp.MustCompile(`(?:\b|<\.\.\. )(sendfile|copy_file_range|splice|write|writev)(?:\(| resumed>).*= (\d+)$`)
	for _, line := range strings.Split(string(out), "\n") {
		m := re.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		v, _ := strconv.ParseInt(m[2], 10, 64)
		if m[1] == "write" || m[1] == "writev" {
			written += v
		} else {
			zeroCopy += v
		}
	}
	t.Logf("zero-copy syscalls moved %d bytes, write/writev %d bytes", zeroCopy, written)
	if zeroCopy < size-4096 {
		t.Fatalf("only %d of %d bytes went through sendfile/copy_file_range/splice", zeroCopy, size)
	}
}

// serveForStrace is the child: it serves root with the real handler
// chain, prints its address, and stops when stdin closes.
func serveForStrace(t *testing.T, root string) {
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	eng := ops.New(ws, ops.Options{})
	defer eng.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httpapi.New(eng, httpapi.Options{})}
	go srv.Serve(ln)
	fmt.Println("ADDR " + ln.Addr().String())
	io.Copy(io.Discard, os.Stdin)
	srv.Close()
}
