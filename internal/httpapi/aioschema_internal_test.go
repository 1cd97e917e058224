package httpapi

import (
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestAIOErrorTypeStatuses: on v2, an AIO error_type answers with AIO's
// status for it (not_found 404, permission_denied 403, already_exists
// 409, bad_request, invalid_path and invalid_target 400, decode_error
// 422, no_space_left 507, any other 500), the errors built from the
// errno the OS returns, as the engine builds them; v1 answers 200.
// read_only_filesystem (EROFS) is one of the others: 500, not 403.
func TestAIOErrorTypeStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		errno  syscall.Errno
		code   fserr.Code
		status int
	}{
		{syscall.ENOENT, fserr.NotFound, http.StatusNotFound},
		{syscall.EACCES, fserr.PermissionDenied, http.StatusForbidden},
		{syscall.EEXIST, fserr.AlreadyExists, http.StatusConflict},
		{syscall.EISDIR, fserr.InvalidTarget, http.StatusBadRequest},
		{syscall.ENOSPC, fserr.NoSpaceLeft, http.StatusInsufficientStorage},
		{syscall.EROFS, fserr.ReadOnlyFilesystem, http.StatusInternalServerError},
		{syscall.EIO, fserr.IOError, http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.errno.Error(), func(t *testing.T) {
			t.Parallel()
			err := fserr.FromOS("write", "x.txt", tt.errno)
			if e, _ := fserr.As(err); e == nil || e.Code != tt.code {
				t.Fatalf("FromOS(%v) = %v, want code %s", tt.errno, err, tt.code)
			}
			for _, p := range []plane{v2, v1} {
				rec := httptest.NewRecorder()
				fail(rec, p, "write", "x.txt", err)
				want := tt.status
				if p == v1 {
					want = http.StatusOK
				}
				if rec.Code != want || rec.Header().Get("X-Fsplane-Error") != string(tt.code) {
					t.Errorf("plane %d: %d %s, want %d %s", p, rec.Code, rec.Header().Get("X-Fsplane-Error"), want, tt.code)
				}
			}
		})
	}
}
