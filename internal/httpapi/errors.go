package httpapi

import (
	"github.com/fsplane/fsplane/client"
	"net/http"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
)

// Codes of the HTTP front's own refusals, before any operation runs (see
// browserGuard). They are stable like fserr's codes; fserr does not hold
// them because no operation fails with them.
const (
	// forbiddenOrigin: the request came from a web page (Origin or
	// Sec-Fetch-Site) whose origin was not allowed with --allow-origin.
	forbiddenOrigin fserr.Code = "forbidden_origin"
	// forbiddenHost: without an API key, the Host header named neither
	// localhost, an IP address nor an --allow-host name.
	forbiddenHost fserr.Code = "forbidden_host"
	// unauthorized: an API key is set and the request carried none, or
	// another one (see requireKey).
	unauthorized fserr.Code = "unauthorized"
)

// codeStatus is the one table mapping fsplane's error codes to v2 HTTP
// statuses: AIO's for its error types, and the nearest meaning for ours.
// AIO answers 500 for the error types it gives no status of their own
// (read_only_filesystem, io_error): a read-only mount is not a permission
// refusal (403).
var codeStatus = map[fserr.Code]int{
	fserr.NotFound:           http.StatusNotFound,
	fserr.PermissionDenied:   http.StatusForbidden,
	fserr.OutsideRoot:        http.StatusForbidden,
	fserr.ReadOnly:           http.StatusForbidden,
	fserr.ReadOnlyFilesystem: http.StatusInternalServerError,
	fserr.AlreadyExists:      http.StatusConflict,
	fserr.StaleVersion:       http.StatusConflict,
	fserr.Conflict:           http.StatusConflict,
	fserr.MustRead:           http.StatusConflict,
	fserr.BadRequest:         http.StatusBadRequest,
	fserr.InvalidPath:        http.StatusBadRequest,
	fserr.InvalidTarget:      http.StatusBadRequest,
	fserr.NoMatch:            http.StatusBadRequest,
	fserr.AmbiguousMatch:     http.StatusBadRequest,
	fserr.DecodeError:        http.StatusUnprocessableEntity,
	fserr.TooLarge:           http.StatusRequestEntityTooLarge,
	fserr.NoSpaceLeft:        http.StatusInsufficientStorage,
	fserr.IOError:            http.StatusInternalServerError,
	fserr.Unavailable:        http.StatusServiceUnavailable,
	fserr.Timeout:            http.StatusGatewayTimeout,
	fserr.Busy:               http.StatusServiceUnavailable,
	forbiddenOrigin:          http.StatusForbidden,
	forbiddenHost:            http.StatusForbidden,
	unauthorized:             http.StatusUnauthorized,
}

// exceptionType names the Python exception AIO reports for a code, so
// clients that switch on it keep working. invalid_target is not here: it
// covers several causes, and exceptionOf decides it from the errno.
var exceptionType = map[fserr.Code]string{
	fserr.NotFound:           "FileNotFoundError",
	fserr.PermissionDenied:   "PermissionError",
	fserr.OutsideRoot:        "PermissionError",
	forbiddenOrigin:          "PermissionError",
	forbiddenHost:            "PermissionError",
	unauthorized:             "PermissionError",
	fserr.AlreadyExists:      "FileExistsError",
	fserr.DecodeError:        "UnicodeDecodeError",
	fserr.NoSpaceLeft:        "OSError",
	fserr.ReadOnlyFilesystem: "OSError",
	fserr.IOError:            "OSError",
	fserr.BadRequest:         "ValueError",
	fserr.InvalidPath:        "ValueError",
	fserr.NoMatch:            "ValueError",
	fserr.AmbiguousMatch:     "ValueError",
	fserr.TooLarge:           "ValueError",
}

// errnoException names the Python exception (an OSError subclass) that
// an OS call failing with the errno raises.
var errnoException = map[syscall.Errno]string{
	syscall.EISDIR:  "IsADirectoryError",
	syscall.ENOTDIR: "NotADirectoryError",
	syscall.EACCES:  "PermissionError",
	syscall.EPERM:   "PermissionError",
	syscall.ENOENT:  "FileNotFoundError",
	syscall.EEXIST:  "FileExistsError",
}

// exceptionOf names the Python exception for e, or "" for none.
//
// invalid_target means "the path is the wrong kind", which Python spells
// several ways: a directory read as a file (IsADirectoryError), a file used
// as a directory (NotADirectoryError), a device or a workspace root
// (OSError, PermissionError). The errno is the cause when the OS reported
// the failure. When fsplane found the problem itself the error carries no
// errno, and the answer is OSError, the base class of all of them: less
// precise, never wrong. (The message text is for people, not parsed.)
func exceptionOf(e *fserr.Error) string {
	if e.Code != fserr.InvalidTarget {
		return exceptionType[e.Code]
	}
	if x, ok := errnoException[e.Errno]; ok {
		return x
	}
	return "OSError"
}

// errnoOf is the errno reported for e. A not_found always reports ENOENT,
// as AIO does, including those fsplane finds without an OS call (a stat
// or list of a missing path checks existence itself).
func errnoOf(e *fserr.Error) (int, string) {
	if e.Errno == 0 && e.Code == fserr.NotFound {
		return int(syscall.ENOENT), fserr.ErrnoName(syscall.ENOENT)
	}
	return int(e.Errno), e.ErrnoName()
}

func statusOf(code fserr.Code) int {
	if s, ok := codeStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// plane says how failures are reported: v2 with HTTP statuses, v1 with 200.
type plane int

const (
	v1 plane = iota + 1
	v2
)

// failures documents how rt, served on plane p, answers the failures of
// its operation: under these statuses on v2, with 200 on v1.
func (p plane) failures(rt route, statuses ...int) route {
	if p == v1 {
		rt.FailOK = true
		return rt
	}
	rt.Statuses = statuses
	return rt
}

// fail writes the envelope for err. The message is the error's own, never
// a raw OS string; the hint says what to do.
func fail(w http.ResponseWriter, p plane, op, path string, err error) {
	e := fserr.From(op, path, err)
	if h := idleHint(err); h != "" { // the cause, whatever the operation guessed
		e.Hint, e.Retryable = h, true // nothing was written: send it again
	}
	status := http.StatusOK
	if p == v2 {
		status = statusOf(e.Code)
	}
	failWith(w, status, e)
}

// failWith writes e's envelope with status, and e's code in the
// client.ErrorHeader header.
func failWith(w http.ResponseWriter, status int, e *fserr.Error) {
	fe := client.FileError{
		ErrorType: string(e.Code), Message: e.Message, Operation: e.Op, Path: e.Path,
		Retryable: e.Retryable, Lines: e.Lines,
	}
	if n, name := errnoOf(e); n != 0 {
		fe.Errno, fe.ErrnoName = &n, &name
	}
	if x := exceptionOf(e); x != "" {
		fe.ExceptionType = &x
	}
	// The code in a header too: a HEAD response has no body to carry it.
	w.Header().Set(client.ErrorHeader, string(e.Code))
	env := envelope{Success: false, Message: e.Message, Data: fe}
	if e.Hint != "" {
		h := e.Hint
		env.Hint = &h
	}
	writeJSON(w, status, env)
}
