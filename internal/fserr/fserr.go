// Package fserr defines fsplane's one error type and its stable codes.
//
// Every operation in fsplane fails with an *Error. Its Code is a stable,
// snake_case string that fronts map to their own conventions in one table
// each (HTTP status, MCP isError, connector frames). Message is written for
// the caller (a person or a model) and never contains raw file contents;
// Hint says what to do instead. The wrapped cause (Err) is for logs and
// errors.Is, never for clients.
package fserr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// Code is a stable error code. Codes are part of fsplane's API: they never
// change meaning, and new ones are only added.
type Code string

// The stable codes. AIO's error_type values are a subset.
const (
	// NotFound: the path does not exist. Check the path (list the parent).
	NotFound Code = "not_found"
	// PermissionDenied: the OS refused the access. Retrying will not help.
	PermissionDenied Code = "permission_denied"
	// AlreadyExists: the target exists and the operation would not replace it.
	AlreadyExists Code = "already_exists"
	// InvalidPath: the path is malformed (empty, NUL byte, too long, loop).
	InvalidPath Code = "invalid_path"
	// OutsideRoot: the path resolves outside every workspace root.
	OutsideRoot Code = "outside_root"
	// InvalidTarget: the path exists but is the wrong kind (a directory
	// read as a file, a file used as a directory).
	InvalidTarget Code = "invalid_target"
	// BadRequest: the request itself is wrong (arguments, patch syntax).
	BadRequest Code = "bad_request"
	// DecodeError: the file is not UTF-8 text (binary or another encoding).
	DecodeError Code = "decode_error"
	// TooLarge: the content exceeds a limit; use the streaming route.
	TooLarge Code = "too_large"
	// NoSpaceLeft: the disk or quota is full; nothing was written.
	NoSpaceLeft Code = "no_space_left"
	// ReadOnlyFilesystem: the file system is mounted read-only (EROFS).
	ReadOnlyFilesystem Code = "read_only_filesystem"
	// ReadOnly: the workspace or host is in Read-only mode.
	ReadOnly Code = "read_only"
	// NoMatch: the text to replace, or a patch hunk's context, was not found.
	NoMatch Code = "no_match"
	// AmbiguousMatch: the text matched in more than one place.
	AmbiguousMatch Code = "ambiguous_match"
	// StaleVersion: the file changed since the version the caller named.
	StaleVersion Code = "stale_version"
	// MustRead: a line-number edit needs a fresh read of the file first.
	MustRead Code = "must_read"
	// Conflict: the operation would discard a change made since (undo),
	// or the file kept changing under it until it gave up (Retryable).
	Conflict Code = "conflict"
	// IOError: any other I/O failure.
	IOError Code = "io_error"
	// Unavailable: the target (a connected host) is not there; retry when
	// it is.
	Unavailable Code = "unavailable"
	// Timeout: the target did not answer in time. The operation may still
	// have completed: re-read before retrying.
	Timeout Code = "timeout"
	// Busy: the target (a connected host) is running and holding as many
	// operations as it takes; this one was not run. Retry in a moment.
	Busy Code = "busy"
)

// stable holds every code above.
var stable = map[Code]bool{
	NotFound: true, PermissionDenied: true, AlreadyExists: true, InvalidPath: true,
	OutsideRoot: true, InvalidTarget: true, BadRequest: true, DecodeError: true,
	TooLarge: true, NoSpaceLeft: true, ReadOnlyFilesystem: true, ReadOnly: true,
	NoMatch: true, AmbiguousMatch: true, StaleVersion: true, MustRead: true,
	Conflict: true, IOError: true, Unavailable: true, Timeout: true, Busy: true,
}

// Stable reports whether c is one of the stable codes above: what another
// process (a connected host) sends may be any string, and fronts switch
// on the code.
func (c Code) Stable() bool { return stable[c] }

// Error is fsplane's error. The zero value is not useful; use New or FromOS.
type Error struct {
	Code      Code
	Op        string        // operation name, e.g. "read", "patch"
	Path      string        // the path as the caller named it, when there is one
	Message   string        // for the caller; no file contents, no secrets
	Errno     syscall.Errno // 0 unless the cause was an OS error
	Hint      string        // what to do instead; may be empty
	Retryable bool          // the same call may succeed later unchanged
	Lines     []int         // 1-based lines the error is about (ambiguous matches)
	Err       error         // cause; for logs and errors.Is, never sent to clients
}

func (e *Error) Error() string {
	if e.Hint != "" {
		return e.Message + " (" + e.Hint + ")"
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error with a formatted message.
func New(code Code, op, path, format string, args ...any) *Error {
	return &Error{Code: code, Op: op, Path: path, Message: fmt.Sprintf(format, args...)}
}

// WithHint sets the hint and returns e.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// WithErrno sets the errno the error stands for, when no system call
// failed but the condition is one (a directory where a file was meant:
// EISDIR; the reverse: ENOTDIR), so fronts that report errno and exception
// types (the AIO API) name it as the OS would. It returns e.
func (e *Error) WithErrno(errno syscall.Errno) *Error {
	e.Errno = errno
	return e
}

// ErrnoName returns the symbolic name of e.Errno ("ENOENT"), or "".
func (e *Error) ErrnoName() string { return ErrnoName(e.Errno) }

// JoinHints joins the non-empty hints and notices of one answer, in
// order, with "; ".
func JoinHints(hints ...string) string {
	var out []string
	for _, h := range hints {
		if h != "" {
			out = append(out, h)
		}
	}
	return strings.Join(out, "; ")
}

// As reports whether err is or wraps an *Error and returns it.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// CodeOf returns err's code: its *Error's code, or IOError for any other
// non-nil error, or "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	if e, ok := As(err); ok {
		return e.Code
	}
	return IOError
}

// Is reports whether err carries code.
func Is(err error, code Code) bool { return CodeOf(err) == code }

// Coded is implemented by the errors of fsplane's pure public packages
// (edit, edit/patch), which cannot depend on this internal package. Their
// codes are the same stable strings as Code.
type Coded interface {
	error
	ErrorCode() string
	ErrorHint() string
	ErrorLines() []int
}

// From converts any error into an *Error. An *Error passes through with Op
// and Path filled in when they were empty; a Coded error keeps its code,
// message and hint; anything else is classified by its errno (FromOS).
func From(op, path string, err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := As(err); ok {
		if e.Op == "" {
			e.Op = op
		}
		if e.Path == "" {
			e.Path = path
		}
		return e
	}
	var c Coded
	if errors.As(err, &c) {
		return &Error{Code: Code(c.ErrorCode()), Op: op, Path: path, Message: c.Error(), Hint: c.ErrorHint(), Lines: c.ErrorLines(), Err: err}
	}
	return FromOS(op, path, err)
}

// FromOS converts an error from the os package (or a syscall) into an
// *Error, choosing the code from the errno.
func FromOS(op, path string, err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := As(err); ok {
		return From(op, path, e)
	}
	var errno syscall.Errno
	errors.As(err, &errno)
	code, retry, msg := classify(errno, err)
	return &Error{Code: code, Op: op, Path: path, Message: msg, Errno: errno, Retryable: retry, Err: err}
}

func classify(errno syscall.Errno, err error) (Code, bool, string) {
	switch {
	case errno == syscall.ENOENT || (errno == 0 && errors.Is(err, fs.ErrNotExist)):
		return NotFound, false, "no such file or directory"
	case errno == syscall.EACCES || errno == syscall.EPERM || (errno == 0 && errors.Is(err, fs.ErrPermission)):
		return PermissionDenied, false, "permission denied"
	case errno == syscall.EEXIST || (errno == 0 && errors.Is(err, fs.ErrExist)):
		return AlreadyExists, false, "file already exists"
	case errno == syscall.ENOTEMPTY:
		return AlreadyExists, false, "directory not empty"
	case errno == syscall.EISDIR:
		return InvalidTarget, false, "is a directory"
	case errno == syscall.ENOTDIR:
		return InvalidTarget, false, "not a directory"
	case errno == syscall.ENOSPC || errno == syscall.EDQUOT:
		return NoSpaceLeft, false, "no space left on device"
	case errno == syscall.EROFS:
		return ReadOnlyFilesystem, false, "read-only file system"
	case errno == syscall.ENAMETOOLONG:
		return InvalidPath, false, "file name too long"
	case errno == syscall.ELOOP:
		return InvalidPath, false, "too many levels of symbolic links"
	case errno == syscall.EFBIG:
		return TooLarge, false, "file too large"
	case errno == syscall.EXDEV:
		return InvalidTarget, false, "cross-device link"
	case errno == syscall.EAGAIN || errno == syscall.EINTR || errno == syscall.EBUSY || errno == syscall.ETXTBSY:
		return IOError, true, errno.Error()
	case errno == syscall.EINVAL:
		return InvalidPath, false, "invalid argument"
	case errno != 0:
		return IOError, false, errno.Error()
	}
	if IsRootEscape(err) {
		// A link swapped in after the caller checked the path.
		return OutsideRoot, false, "the path leads outside its root through a symbolic link"
	}
	return IOError, false, "i/o error"
}

// IsRootEscape reports whether err is an *os.Root's refusal of a path
// that leaves the root. The os package does not export that error, so its
// text is the only handle; a workspace test pins it.
func IsRootEscape(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return err != nil && err.Error() == "path escapes from parent"
}

var errnoNames = map[syscall.Errno]string{
	syscall.ENOENT: "ENOENT", syscall.EACCES: "EACCES", syscall.EPERM: "EPERM",
	syscall.EEXIST: "EEXIST", syscall.ENOTEMPTY: "ENOTEMPTY", syscall.EISDIR: "EISDIR",
	syscall.ENOTDIR: "ENOTDIR", syscall.ENOSPC: "ENOSPC", syscall.EDQUOT: "EDQUOT",
	syscall.EROFS: "EROFS", syscall.ENAMETOOLONG: "ENAMETOOLONG", syscall.ELOOP: "ELOOP",
	syscall.EFBIG: "EFBIG", syscall.EXDEV: "EXDEV", syscall.EAGAIN: "EAGAIN",
	syscall.EINTR: "EINTR", syscall.EBUSY: "EBUSY", syscall.ETXTBSY: "ETXTBSY",
	syscall.EINVAL: "EINVAL", syscall.EIO: "EIO", syscall.EMFILE: "EMFILE",
}

// ErrnoName returns the symbolic name of errno ("ENOENT"), or "".
func ErrnoName(e syscall.Errno) string {
	if e == 0 {
		return ""
	}
	if n, ok := errnoNames[e]; ok {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}
