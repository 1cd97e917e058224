package httpapi

import (
	"github.com/fsplane/fsplane/client"
	"net/http"

	"github.com/fsplane/fsplane/internal/fserr"
)

// codeStatus is the one table mapping fsplane's error codes to v2 HTTP
// statuses: AIO's for its error types, and the nearest meaning for ours.
var codeStatus = map[fserr.Code]int{
	fserr.NotFound:           http.StatusNotFound,
	fserr.PermissionDenied:   http.StatusForbidden,
	fserr.OutsideRoot:        http.StatusForbidden,
	fserr.ReadOnly:           http.StatusForbidden,
	fserr.ReadOnlyFilesystem: http.StatusForbidden,
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
}

// exceptionType names the Python exception AIO reports for a code, so
// clients that switch on it keep working.
var exceptionType = map[fserr.Code]string{
	fserr.NotFound:           "FileNotFoundError",
	fserr.PermissionDenied:   "PermissionError",
	fserr.OutsideRoot:        "PermissionError",
	fserr.AlreadyExists:      "FileExistsError",
	fserr.InvalidTarget:      "IsADirectoryError",
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

// fail writes the envelope for err. The message is the error's own, never
// a raw OS string; the hint says what to do.
func fail(w http.ResponseWriter, p plane, op, path string, err error) {
	e := fserr.From(op, path, err)
	fe := client.FileError{
		ErrorType: string(e.Code), Message: e.Message, Operation: e.Op, Path: e.Path,
		Retryable: e.Retryable, Lines: e.Lines,
	}
	if e.Errno != 0 {
		n, name := int(e.Errno), e.ErrnoName()
		fe.Errno, fe.ErrnoName = &n, &name
	}
	if x, ok := exceptionType[e.Code]; ok {
		fe.ExceptionType = &x
	}
	env := envelope{Success: false, Message: e.Message, Data: fe}
	if e.Hint != "" {
		h := e.Hint
		env.Hint = &h
	}
	status := http.StatusOK
	if p == v2 {
		status = statusOf(e.Code)
	}
	writeJSON(w, status, env)
}
