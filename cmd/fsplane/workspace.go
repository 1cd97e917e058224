package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// openWorkspace opens a command's workspace over roots, with its undo
// history and journals in stateDir (default workspace.DefaultStateDir).
// source(i) names where roots[i] came from ("--root", "--allow"), so a
// root that cannot be opened is reported as the user gave it. Failures
// come back as errors worded for a terminal: exit 2 for a root that is no
// path at all (""), which no file system change could fix, else 1.
func openWorkspace(roots []string, source func(i int) string, stateDir string) (*workspace.Workspace, error) {
	if stateDir == "" {
		var err error
		if stateDir, err = workspace.DefaultStateDir(); err != nil {
			return nil, &exitError{code: 1, err: describe(err)}
		}
	}
	ws, err := workspace.Open(workspace.Options{Roots: roots, StateDir: stateDir})
	if err != nil {
		if fe, ok := fserr.As(err); ok && fe.Op == "open" {
			for i, r := range roots {
				if fe.Path == r {
					code := 1
					if fe.Code == fserr.InvalidPath {
						code = 2
					}
					return nil, &exitError{code: code, err: describe(rootError(source(i), r, fe))}
				}
			}
		}
		return nil, &exitError{code: 1, err: describe(err)}
	}
	return ws, nil
}

// rootError rewords the workspace's error about a root for the flag (or
// variable) that named it.
func rootError(source, root string, fe *fserr.Error) *fserr.Error {
	e := *fe
	switch {
	case fe.Err != nil:
		e.Message = fmt.Sprintf("cannot open the %s directory %s: %s", source, root, fserr.FromOS(fe.Op, root, fe.Err).Message)
		e.Hint = fmt.Sprintf("give %s an existing directory this user can read (create a new one first with mkdir -p)", source)
		if errors.Is(fe.Err, fs.ErrPermission) {
			e.Hint = fmt.Sprintf("give %s a directory this user can read and enter, or run as a user who can", source)
		}
	case fe.Code == fserr.InvalidTarget:
		e.Message = fmt.Sprintf("the %s directory %s is not a directory", source, root)
		e.Hint = fmt.Sprintf("give %s a directory: %s holds this file", source, filepath.Dir(root))
	default:
		e.Message = fmt.Sprintf("%s %q: %s", source, root, fe.Message)
	}
	return &e
}

// sameSource is a source for openWorkspace that names one flag for every
// root.
func sameSource(s string) func(int) string { return func(int) string { return s } }
