package mcpserver

import (
	"context"
	"fmt"

	"github.com/fsplane/fsplane/internal/ops"
)

type writeArgs struct {
	Path            string `json:"path" jsonschema:"the file to create or replace; missing parent directories are created"`
	Content         string `json:"content" jsonschema:"the whole new content of the file"`
	ExpectedVersion string `json:"expected_version,omitempty" jsonschema:"the version you last read; the write fails with stale_version if the file changed since"`
}

type writeResult struct {
	Path        string `json:"path" jsonschema:"absolute path of the file"`
	Version     string `json:"version" jsonschema:"the new content's version"`
	PrevVersion string `json:"prev_version,omitempty" jsonschema:"the replaced content's version; absent when the file was created"`
	Created     bool   `json:"created" jsonschema:"the file did not exist before"`
	Bytes       int    `json:"bytes" jsonschema:"bytes written"`
	Undoable    bool   `json:"undoable" jsonschema:"undo can revert this write (false when the previous content was too large for the undo journal)"`
	Notice      string `json:"notice,omitempty" jsonschema:"e.g. the file changed since your last read, so the write replaced content you had not seen"`
}

func writeFile(ctx context.Context, c *Call, in writeArgs) (string, writeResult, error) {
	p, err := c.Path("write", in.Path)
	if err != nil {
		return "", writeResult{}, err
	}
	r, err := c.srv.eng.Write(ctx, ops.WriteRequest{
		Path: p, Content: []byte(in.Content), ExpectedVersion: in.ExpectedVersion, Caller: c.Caller,
	})
	if err != nil {
		return "", writeResult{}, err
	}
	out := writeResult{Path: r.Path, Version: r.Version, PrevVersion: r.PrevVersion, Created: r.Created, Bytes: r.Bytes, Undoable: r.UndoRecorded, Notice: r.Notice}
	name := c.display(r.Path)
	if r.Created {
		return fmt.Sprintf("Created %s (%s), version %s", name, plural(r.Bytes, "byte", "bytes"), r.Version), out, nil
	}
	text := fmt.Sprintf("Wrote %s (%s), version %s", name, plural(r.Bytes, "byte", "bytes"), r.Version)
	if r.UndoRecorded {
		text += "; undo restores the previous content"
	} else {
		text += "; the previous content was too large for the undo journal, so undo cannot restore it"
	}
	if r.Notice != "" {
		// As edit and patch say it.
		text += ".\nNote: " + r.Notice + "."
	}
	return text, out, nil
}
