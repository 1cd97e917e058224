package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// listMaxEntries caps the entries one list call shows.
const listMaxEntries = 2000

type listArgs struct {
	Path  string `json:"path" jsonschema:"the directory to list; \".\" is the first root"`
	Depth int    `json:"depth,omitempty" jsonschema:"levels to descend: 1 (default) lists the directory's own entries, 2 also their children, and so on"`
}

type listEntry struct {
	Path  string `json:"path" jsonschema:"relative to the first root when inside it, else absolute"`
	IsDir bool   `json:"is_dir,omitempty"`
	Link  bool   `json:"symlink,omitempty"`
	Size  int64  `json:"size,omitempty" jsonschema:"bytes; files only"`
}

type listResult struct {
	Path      string      `json:"path" jsonschema:"absolute path of the directory"`
	Entries   []listEntry `json:"entries"`
	Dirs      int         `json:"dirs"`
	Files     int         `json:"files"`
	Truncated bool        `json:"truncated" jsonschema:"more entries exist than the 2000 shown"`
}

func listDir(ctx context.Context, c *Call, in listArgs) (string, listResult, error) {
	return listIn(ctx, c.local(), in)
}

// listIn lists a directory in pl.
func listIn(ctx context.Context, pl place, in listArgs) (string, listResult, error) {
	const op = "list"
	if in.Depth < 0 {
		return "", listResult{}, fserr.New(fserr.BadRequest, op, in.Path, "depth must be 1 or more (got %d)", in.Depth)
	}
	depth := max(in.Depth, 1)
	dir := in.Path
	if dir == "" {
		dir = pl.base
	}
	p, err := pl.path(op, dir)
	if err != nil {
		return "", listResult{}, err
	}
	r, err := pl.eng.List(ctx, ops.ListRequest{
		Path: p, Recursive: depth > 1, MaxDepth: depth, ShowHidden: true, Limit: listMaxEntries,
	})
	if err != nil {
		return "", listResult{}, err
	}
	out := listResult{Path: r.Path, Entries: make([]listEntry, 0, len(r.Entries)), Dirs: r.Dirs, Files: r.Files, Truncated: r.Truncated}
	var b strings.Builder
	b.Grow(len(r.Entries) * 40)
	fmt.Fprintf(&b, "%s: %s, %s", pl.display(r.Path), plural(r.Dirs, "directory", "directories"), plural(r.Files, "file", "files"))
	if depth > 1 {
		fmt.Fprintf(&b, " (depth %d)", depth)
	}
	b.WriteByte('\n')
	for _, e := range r.Entries {
		name := pl.display(e.Path)
		out.Entries = append(out.Entries, listEntry{Path: name, IsDir: e.IsDir, Link: e.IsSymlink, Size: sizeOf(e)})
		b.WriteString(textName(name))
		switch {
		case e.IsDir:
			b.WriteByte('/')
		default:
			fmt.Fprintf(&b, "  %s", humanSize(e.Size))
		}
		if e.IsSymlink {
			b.WriteString("  (symlink)")
		}
		b.WriteByte('\n')
	}
	if r.Truncated {
		fmt.Fprintf(&b, "[Truncated at %d entries: list a subdirectory, or use a smaller depth or glob.]\n", listMaxEntries)
	}
	return b.String(), out, nil
}

func sizeOf(e ops.Entry) int64 {
	if e.IsDir {
		return 0
	}
	return e.Size
}

// humanSize renders a byte count for a model: exact below 10 KiB, else
// rounded with a unit.
func humanSize(n int64) string {
	switch {
	case n < 10<<10:
		return plural(int(n), "byte", "bytes")
	case n < 10<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 10<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
