package workspace

import (
	"errors"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
)

// osErr converts an error from a file operation on the caller's path into
// an *fserr.Error whose message names that path and never carries the OS's
// own text.
func osErr(op, given string, err error) *fserr.Error {
	if err == nil {
		return nil
	}
	if e, ok := fserr.As(err); ok {
		return fserr.From(op, given, e)
	}
	if errors.Is(err, errAppeared) {
		e := fserr.New(fserr.StaleVersion, op, given, "%s was created by another writer while this change was made; nothing was changed", given).
			WithHint("re-read the file and plan the change again")
		e.Retryable = true
		return e
	}
	if isEscape(err) {
		// The walk in resolve saw no escape, so a link was swapped in
		// meanwhile and the *os.Root refused it.
		e := fserr.New(fserr.OutsideRoot, op, given,
			"path %s leads outside its workspace root through a symbolic link", given).
			WithHint("use a path inside a root; a link on the way was changed meanwhile to lead out of it")
		e.Err = err
		return e
	}
	e := fserr.FromOS(op, given, err)
	e.Message = given + ": " + e.Message
	switch e.Code {
	case fserr.NotFound:
		e.Hint = "check the path; list the parent directory"
	case fserr.NoSpaceLeft:
		e.Hint = "free space on the device; nothing was changed"
	}
	return e
}

// errAppeared is a create refused because the file appeared since it
// was planned (renameNoReplace).
var errAppeared = errors.New("file created meanwhile")

// isEscape reports whether err is the *os.Root refusal of a path that
// leaves the root (fserr.IsRootEscape; a test pins the text).
func isEscape(err error) bool { return fserr.IsRootEscape(err) }

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
