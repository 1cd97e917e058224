package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

type statArgs struct {
	Path string `json:"path" jsonschema:"the file or directory to describe"`
}

type statResult struct {
	Path        string    `json:"path" jsonschema:"absolute path (a symbolic link's target)"`
	Type        string    `json:"type" jsonschema:"file, directory, other, or symlink for a symbolic link whose target does not exist"`
	Size        int64     `json:"size" jsonschema:"bytes"`
	Permissions string    `json:"permissions" jsonschema:"octal, e.g. 644"`
	Modified    time.Time `json:"modified"`
	Symlink     bool      `json:"symlink,omitempty" jsonschema:"the path given is a symbolic link"`
	Version     string    `json:"version,omitempty" jsonschema:"content version of a regular file up to 16 MiB"`
	LinkTarget  string    `json:"link_target,omitempty" jsonschema:"for a symbolic link whose target does not exist: what it points to; the rest describes the link itself"`
}

func statFile(ctx context.Context, c *Call, in statArgs) (string, statResult, error) {
	p, err := c.Path("stat", in.Path)
	if err != nil {
		return "", statResult{}, err
	}
	r, err := c.srv.eng.Stat(ctx, ops.StatRequest{Path: p, FollowSymlinks: true})
	if fserr.Is(err, fserr.NotFound) {
		// A link whose target is missing still exists: describe the
		// link, as lstat would, rather than call the path missing.
		if l, lerr := c.srv.eng.Stat(ctx, ops.StatRequest{Path: p}); lerr == nil && l.IsSymlink && l.LinkTarget != "" {
			return danglingLink(c, l)
		}
	}
	if err != nil {
		return "", statResult{}, err
	}
	typ := "other"
	switch {
	case r.IsDirectory:
		typ = "directory"
	case r.Mode.IsRegular():
		typ = "file"
	}
	out := statResult{Path: r.Path, Type: typ, Size: r.Size, Permissions: r.Permissions,
		Modified: r.ModTime.UTC().Truncate(time.Second), Symlink: r.IsSymlink, Version: r.Version}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", c.display(r.Path), typ)
	if r.IsSymlink {
		b.WriteString(" (through a symbolic link)")
	}
	if !r.IsDirectory {
		fmt.Fprintf(&b, ", %s", plural(int(r.Size), "byte", "bytes"))
	}
	fmt.Fprintf(&b, ", permissions %s, modified %s", r.Permissions, out.Modified.Format(time.RFC3339))
	if r.Version != "" {
		fmt.Fprintf(&b, ", version %s", r.Version)
	}
	return b.String(), out, nil
}

// danglingLink describes r, a symbolic link whose target does not exist.
func danglingLink(c *Call, r *ops.StatResult) (string, statResult, error) {
	out := statResult{Path: r.Path, Type: "symlink", Size: r.Size, Permissions: r.Permissions,
		Modified: r.ModTime.UTC().Truncate(time.Second), Symlink: true, LinkTarget: r.LinkTarget}
	text := fmt.Sprintf("%s: symbolic link to %s, which does not exist, permissions %s, modified %s",
		c.display(r.Path), r.LinkTarget, r.Permissions, out.Modified.Format(time.RFC3339))
	return text, out, nil
}
