package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/fserr"
)

// TestFailExceptionType: exception_type names the Python class of the
// cause, decided by the errno when the error has one.
func TestFailExceptionType(t *testing.T) {
	t.Parallel()
	withErrno := func(code fserr.Code, errno syscall.Errno) error {
		e := fserr.New(code, "op", "p", "m")
		e.Errno = errno
		return e
	}
	tests := []struct {
		name      string
		err       error
		exc       string // "" means null
		errnoName string // "" means null
	}{
		{name: "directory read as a file", err: withErrno(fserr.InvalidTarget, syscall.EISDIR), exc: "IsADirectoryError", errnoName: "EISDIR"},
		{name: "file used as a directory", err: withErrno(fserr.InvalidTarget, syscall.ENOTDIR), exc: "NotADirectoryError", errnoName: "ENOTDIR"},
		{name: "refused", err: withErrno(fserr.InvalidTarget, syscall.EPERM), exc: "PermissionError", errnoName: "EPERM"},
		{name: "cross-device", err: withErrno(fserr.InvalidTarget, syscall.EXDEV), exc: "OSError", errnoName: "EXDEV"},
		{name: "invalid_target without errno", err: fserr.New(fserr.InvalidTarget, "read", "fifo", "fifo is not a regular file"), exc: "OSError"},
		{name: "not_found without errno", err: fserr.New(fserr.NotFound, "stat", "x", "x does not exist"), exc: "FileNotFoundError", errnoName: "ENOENT"},
		{name: "not_found from the OS", err: fserr.FromOS("read", "x", syscall.ENOENT), exc: "FileNotFoundError", errnoName: "ENOENT"},
		{name: "permission from the OS", err: fserr.FromOS("read", "x", syscall.EACCES), exc: "PermissionError", errnoName: "EACCES"},
		{name: "bad request", err: fserr.New(fserr.BadRequest, "grep", "", "m"), exc: "ValueError"},
		{name: "no exception for stale_version", err: fserr.New(fserr.StaleVersion, "write", "", "m")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			fail(rec, v2, "op", "p", tt.err)
			var env struct{ Data client.FileError }
			if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
				t.Fatal(err)
			}
			d := env.Data
			if got := deref(d.ExceptionType); got != tt.exc {
				t.Errorf("exception_type %q, want %q", got, tt.exc)
			}
			if got := deref(d.ErrnoName); got != tt.errnoName {
				t.Errorf("errno_name %q, want %q", got, tt.errnoName)
			}
			if (d.Errno == nil) != (tt.errnoName == "") {
				t.Errorf("errno %v with errno_name %q", d.Errno, tt.errnoName)
			}
		})
	}
}
