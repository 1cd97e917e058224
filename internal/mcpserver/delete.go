package mcpserver

import (
	"context"
	"fmt"

	"github.com/fsplane/fsplane/internal/ops"
)

type deleteArgs struct {
	Path      string `json:"path" jsonschema:"the file, link (never its target) or empty directory to delete"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"also delete a non-empty directory and everything in it"`
	// ExpectedVersion guards a file's deletion against a change since
	// the caller's read.
	ExpectedVersion string `json:"expected_version,omitempty" jsonschema:"a file's version you last read; the delete fails with stale_version if it changed since"`
}

type deleteResult struct {
	Path     string `json:"path" jsonschema:"absolute path of what was deleted"`
	IsDir    bool   `json:"is_dir,omitempty"`
	Undoable bool   `json:"undoable" jsonschema:"undo can bring it back (regular files within the undo journal's size limit, and links)"`
}

func deleteFile(ctx context.Context, c *Call, in deleteArgs) (string, deleteResult, error) {
	p, err := c.Path("delete", in.Path)
	if err != nil {
		return "", deleteResult{}, err
	}
	r, err := c.srv.eng.Delete(ctx, ops.DeleteRequest{Path: p, Recursive: in.Recursive, ExpectedVersion: in.ExpectedVersion, Caller: c.Caller})
	if err != nil {
		return "", deleteResult{}, err
	}
	out := deleteResult{Path: r.Path, IsDir: r.IsDirectory, Undoable: r.UndoRecorded}
	name := c.display(r.Path)
	switch {
	case r.IsDirectory:
		return fmt.Sprintf("Deleted directory %s (undo cannot restore directories)", name), out, nil
	case r.UndoRecorded:
		return fmt.Sprintf("Deleted %s; undo %s restores it", name, name), out, nil
	}
	return fmt.Sprintf("Deleted %s (undo cannot restore it: special files and files over the undo journal's size limit are not kept)", name), out, nil
}
