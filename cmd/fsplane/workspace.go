package main

import (
	"github.com/fsplane/fsplane/internal/workspace"
)

// openWorkspace opens a command's workspace over roots, with its undo
// history and journals in stateDir (default workspace.DefaultStateDir).
// Failures come back as exit-1 errors worded for a terminal.
func openWorkspace(roots []string, stateDir string) (*workspace.Workspace, error) {
	if stateDir == "" {
		var err error
		if stateDir, err = workspace.DefaultStateDir(); err != nil {
			return nil, &exitError{code: 1, err: describe(err)}
		}
	}
	ws, err := workspace.Open(workspace.Options{Roots: roots, StateDir: stateDir})
	if err != nil {
		return nil, &exitError{code: 1, err: describe(err)}
	}
	return ws, nil
}
