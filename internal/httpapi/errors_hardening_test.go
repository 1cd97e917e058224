package httpapi_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/httpapi"
)

// TestErrorDataPerCause: every not_found carries ENOENT (not only the
// ones that came from an OS call), and invalid_target's exception_type
// follows its cause instead of always being IsADirectoryError.
func TestErrorDataPerCause(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "x\n", "d/f.txt": "y\n"}, httpapi.Options{})
	if err := syscall.Mkfifo(filepath.Join(e.root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	null := "<null>"
	tests := []struct {
		name, method, path, body string
		status                   int
		code, errnoName, exc     string
	}{
		{name: "read", method: "GET", path: "/v2/fs/read?path=nope", status: 404, code: "not_found", errnoName: "ENOENT", exc: "FileNotFoundError"},
		{name: "list", method: "GET", path: "/v2/fs/list?path=nope", status: 404, code: "not_found", errnoName: "ENOENT", exc: "FileNotFoundError"},
		{name: "stat", method: "GET", path: "/v2/fs/stat?path=nope", status: 404, code: "not_found", errnoName: "ENOENT", exc: "FileNotFoundError"},
		{name: "copy", method: "POST", path: "/v2/fs/copy", body: `{"source":"nope","destination":"x"}`, status: 404, code: "not_found", errnoName: "ENOENT", exc: "FileNotFoundError"},
		{name: "delete", method: "POST", path: "/v2/fs/delete", body: `{"path":"nope"}`, status: 404, code: "not_found", errnoName: "ENOENT", exc: "FileNotFoundError"},
		{name: "grep", method: "POST", path: "/v2/fs/grep", body: `{"path":"nope","pattern":"x"}`, status: 404, code: "not_found", errnoName: "ENOENT", exc: "FileNotFoundError"},
		{name: "v1 list", method: "POST", path: "/v1/file/list", body: `{"path":"nope"}`, status: 200, code: "not_found", errnoName: "ENOENT", exc: "FileNotFoundError"},
		// Causes the OS reported: the errno decides.
		{name: "read through a file", method: "GET", path: "/v2/fs/read?path=a.txt/x", status: 400, code: "invalid_target", errnoName: "ENOTDIR", exc: "NotADirectoryError"},
		// Causes fsplane found itself carry the errno the OS would give.
		{name: "list a file", method: "GET", path: "/v2/fs/list?path=a.txt", status: 400, code: "invalid_target", errnoName: "ENOTDIR", exc: "NotADirectoryError"},
		{name: "read a directory", method: "GET", path: "/v2/fs/read?path=d", status: 400, code: "invalid_target", errnoName: "EISDIR", exc: "IsADirectoryError"},
		{name: "write over a directory", method: "POST", path: "/v2/fs/write", body: `{"path":"d","content":"x"}`, status: 400, code: "invalid_target", errnoName: "EISDIR", exc: "IsADirectoryError"},
		// Python raises a plain OSError for ENOTEMPTY, and AIO's delete
		// answers 400, not 409 (which means "the target exists").
		{name: "delete a full directory", method: "POST", path: "/v2/fs/delete", body: `{"path":"d"}`, status: 400, code: "invalid_target", errnoName: "ENOTEMPTY", exc: "OSError"},
		// Others carry none: OSError, the base class of them all, rather
		// than a wrong subclass.
		{name: "read a fifo", method: "GET", path: "/v2/fs/read?path=fifo", status: 400, code: "invalid_target", errnoName: null, exc: "OSError"},
		{name: "delete the root", method: "POST", path: "/v2/fs/delete", body: `{"path":".","recursive":true}`, status: 400, code: "invalid_target", errnoName: null, exc: "OSError"},
	}
	// After the parallel subtests: "delete the root" must not have.
	t.Cleanup(func() {
		if _, err := os.Stat(e.root); err != nil {
			t.Error(err)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := e.raw(tt.method, tt.path, tt.body)
			data, _ := body["data"].(map[string]any)
			str := func(k string) string {
				if s, ok := data[k].(string); ok {
					return s
				}
				return null
			}
			if status != tt.status || str("error_type") != tt.code || str("errno_name") != tt.errnoName || str("exception_type") != tt.exc {
				t.Fatalf("got %d %s errno_name %s exception_type %s (%v); want %d %s %s %s",
					status, str("error_type"), str("errno_name"), str("exception_type"), body["message"], tt.status, tt.code, tt.errnoName, tt.exc)
			}
			if tt.errnoName == "ENOENT" && data["errno"] != float64(syscall.ENOENT) {
				t.Errorf("errno %v, want %d", data["errno"], syscall.ENOENT)
			}
		})
	}
}

// TestMkdirThroughAFileIsENOTDIR: creating parents through a regular file
// is NotADirectoryError, as Python raises, not a bare OSError.
func TestMkdirThroughAFileIsENOTDIR(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"w.txt": "x\n"}, httpapi.Options{})
	_, body := e.raw("POST", "/v2/fs/mkdir", `{"path":"w.txt/x/y","parents":true}`)
	data, _ := body["data"].(map[string]any)
	if data["errno_name"] != "ENOTDIR" || data["exception_type"] != "NotADirectoryError" {
		t.Fatalf("mkdir through a file: %v", body)
	}
}

// TestDownloadErrorsNameDownload: a failed download reports the
// operation the caller asked for, not the read it is built on.
func TestDownloadErrorsNameDownload(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"d/f.txt": "y\n"}, httpapi.Options{})
	for _, path := range []string{"/v2/fs/download?path=nope.txt", "/v1/file/download?path=nope.txt", "/v2/fs/download?path=d"} {
		_, body := e.raw("GET", path, "")
		if data, _ := body["data"].(map[string]any); data["operation"] != "download" {
			t.Errorf("%s: operation %v, want download (%v)", path, data["operation"], body["message"])
		}
	}
}
