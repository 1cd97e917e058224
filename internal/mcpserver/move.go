package mcpserver

import (
	"context"
	"fmt"

	"github.com/fsplane/fsplane/internal/ops"
)

type moveArgs struct {
	Source      string `json:"source" jsonschema:"the file, link or directory to move"`
	Destination string `json:"destination" jsonschema:"its new path; missing parent directories are created"`
	Overwrite   bool   `json:"overwrite,omitempty" jsonschema:"replace an existing destination (a file, a link, or an empty directory)"`
	// ExpectedVersion guards a file's move against a change since the
	// caller's read.
	ExpectedVersion string `json:"expected_version,omitempty" jsonschema:"a file's version you last read; the move fails with stale_version if it changed since"`
}

type moveResult struct {
	Source      string `json:"source" jsonschema:"absolute"`
	Destination string `json:"destination" jsonschema:"absolute"`
	IsDir       bool   `json:"is_dir,omitempty"`
	Version     string `json:"version,omitempty" jsonschema:"the moved file's version"`
}

func moveFile(ctx context.Context, c *Call, in moveArgs) (string, moveResult, error) {
	src, err := c.Path("move", in.Source)
	if err != nil {
		return "", moveResult{}, err
	}
	dst, err := c.Path("move", in.Destination)
	if err != nil {
		return "", moveResult{}, err
	}
	r, err := c.srv.eng.Move(ctx, ops.MoveRequest{Source: src, Destination: dst, Overwrite: in.Overwrite, ExpectedVersion: in.ExpectedVersion, Caller: c.Caller})
	if err != nil {
		return "", moveResult{}, err
	}
	out := moveResult{Source: r.Source, Destination: r.Destination, IsDir: r.IsDirectory, Version: r.Version}
	what := "Moved"
	if r.IsDirectory {
		what = "Moved directory"
	}
	text := fmt.Sprintf("%s %s to %s", what, c.display(r.Source), c.display(r.Destination))
	if r.UndoRecorded {
		text += fmt.Sprintf("; undo %s reverts it", c.display(r.Destination))
	}
	return text, out, nil
}
