package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsplane/fsplane/internal/ops"
)

type undoArgs struct {
	Path string `json:"path" jsonschema:"the file whose last change to revert"`
}

type undoFileResult struct {
	Path    string `json:"path" jsonschema:"absolute"`
	Undone  string `json:"undone" jsonschema:"the operation reverted (write, edit, patch, move, delete…)"`
	Deleted bool   `json:"deleted,omitempty" jsonschema:"the reverted change had created the file, so it was removed"`
	Version string `json:"version,omitempty" jsonschema:"the restored content's version"`
	// AlreadyUndone: see ops.UndoResult.
	AlreadyUndone bool `json:"already_undone,omitempty" jsonschema:"the file was already as this undo would leave it (gone, for a change that created it; else its earlier content), so nothing changed; the change's record was consumed"`
}

type undoResult struct {
	undoFileResult
	Also []undoFileResult `json:"also,omitempty" jsonschema:"other files the same undo reverted (a move's other side)"`
}

func undoFile(ctx context.Context, c *Call, in undoArgs) (string, undoResult, error) {
	return undoIn(ctx, c.Caller, c.local(), in)
}

// undoIn reverts a file's last change in pl, as caller (the freshness
// context whose view the undo is held to and updates); the history is
// pl's (a connected host keeps its own).
func undoIn(ctx context.Context, caller string, pl place, in undoArgs) (string, undoResult, error) {
	p, err := pl.path("undo", in.Path)
	if err != nil {
		return "", undoResult{}, err
	}
	r, err := pl.eng.Undo(ctx, ops.UndoRequest{Path: p, Caller: caller})
	if err != nil {
		return "", undoResult{}, err
	}
	var b strings.Builder
	out := undoResult{undoFileResult: undone(&b, pl, r)}
	for i := range r.Also {
		out.Also = append(out.Also, undone(&b, pl, &r.Also[i]))
	}
	return b.String(), out, nil
}

func undone(b *strings.Builder, pl place, r *ops.UndoResult) undoFileResult {
	name, change := pl.display(r.Path), undoNoun(r.Op)
	switch {
	// Already undone: whoever put the file back (another program, an
	// interrupted earlier undo) is unknown, so only the state is told.
	case r.AlreadyUndone && r.Deleted:
		fmt.Fprintf(b, "Undid the %s of %s: it had created the file, which is already gone, as undoing it would leave it; nothing changed.\n", change, name)
	case r.AlreadyUndone:
		fmt.Fprintf(b, "Undid the %s of %s: the file already has the content it had before the %s (version %s); nothing changed.\n", change, name, change, r.Version)
	case r.Deleted:
		fmt.Fprintf(b, "Undid the %s of %s: it had created the file, so the file was removed.\n", change, name)
	case r.Version == "":
		// A symbolic link brought back: a link has no version.
		fmt.Fprintf(b, "Undid the %s of %s: restored it.\n", change, name)
	default:
		fmt.Fprintf(b, "Undid the %s of %s: restored version %s.\n", change, name, r.Version)
	}
	return undoFileResult{Path: r.Path, Undone: r.Op, Deleted: r.Deleted, Version: r.Version, AlreadyUndone: r.AlreadyUndone}
}

// undoNoun names the change an operation made, in the words a person
// uses ("Undid the line edit of …"), not by the operation's internal name;
// an operation not listed here reads as its name with spaces. The
// structured result keeps the name itself.
func undoNoun(op string) string {
	switch op {
	case "edit_lines":
		return "line edit"
	case "insert":
		return "insertion"
	case "delete":
		return "deletion"
	case "tree":
		return "archive extraction"
	case "mkdir":
		return "directory creation"
	}
	return strings.ReplaceAll(op, "_", " ")
}
