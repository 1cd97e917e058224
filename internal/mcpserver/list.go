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
	Dirs      int         `json:"dirs" jsonschema:"directories among the entries shown"`
	Files     int         `json:"files" jsonschema:"files among the entries shown"`
	Truncated bool        `json:"truncated" jsonschema:"more entries exist than the 2000 shown; shallower entries are kept before deeper ones"`
	// WholeDepth is ops.ListResult.WholeDepth.
	WholeDepth int `json:"whole_depth,omitempty" jsonschema:"when truncated: every entry down to this depth is shown (1: the directory's own entries)"`
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
	out := listResult{
		Path: r.Path, Entries: make([]listEntry, 0, len(r.Entries)), Dirs: r.Dirs, Files: r.Files,
		Truncated: r.Truncated, WholeDepth: r.WholeDepth,
	}
	var b strings.Builder
	b.Grow(len(r.Entries) * 40)
	fmt.Fprintf(&b, "%s: %s, %s", pl.display(r.Path), plural(r.Dirs, "directory", "directories"), plural(r.Files, "file", "files"))
	if depth > 1 {
		fmt.Fprintf(&b, " (depth %d)", depth)
	}
	if r.Truncated {
		// The counts are of what is shown: without this they read as
		// the directory's totals.
		fmt.Fprintf(&b, ", cut at %d entries: more exist", listMaxEntries)
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
		b.WriteString(listCutNote(r))
	}
	return b.String(), out, nil
}

// listCutNote says what a listing cut at listMaxEntries shows: ops cuts
// shallowest first, so it names the depth down to which the listing is
// whole and how much of the next level is shown. A host from before
// shallow-first cuts reports no WholeDepth and may show deeper entries;
// its note says only that more exist.
func listCutNote(r *ops.ListResult) string {
	const more = "List a subdirectory, or use a smaller depth or glob."
	deepest, next := 0, 0
	for _, e := range r.Entries {
		d := listDepth(r.Path, e.Path)
		deepest = max(deepest, d)
		if d == r.WholeDepth+1 {
			next++
		}
	}
	switch {
	case deepest <= 1:
		return fmt.Sprintf("[Truncated at %d entries: these are the directory's first %d entries by name; more exist. Use glob to find files by name.]\n",
			listMaxEntries, len(r.Entries))
	case r.WholeDepth >= 1 && next == 0 && deepest == r.WholeDepth:
		return fmt.Sprintf("[Truncated at %d entries: every entry down to depth %d is shown; deeper ones are not. %s]\n",
			listMaxEntries, r.WholeDepth, more)
	case r.WholeDepth >= 1 && deepest == r.WholeDepth+1:
		return fmt.Sprintf("[Truncated at %d entries: every entry down to depth %d is shown, then the first %d at depth %d; more exist. %s]\n",
			listMaxEntries, r.WholeDepth, next, r.WholeDepth+1, more)
	}
	return fmt.Sprintf("[Truncated at %d entries; more exist. %s]\n", listMaxEntries, more)
}

// listDepth is the depth of the entry at p in the listing of dir: 1 for
// dir's own entries. A host's paths are its own: a backslash separates
// only in a Windows path, and is part of a name in a Unix one.
func listDepth(dir, p string) int {
	seps := "/"
	if !strings.HasPrefix(dir, "/") {
		seps = `/\`
	}
	rel := strings.TrimLeft(strings.TrimPrefix(p, dir), seps)
	n := 1
	for _, c := range seps {
		n += strings.Count(rel, string(c))
	}
	return n
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
