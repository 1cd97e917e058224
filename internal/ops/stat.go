package ops

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// StatRequest asks for a file's metadata.
type StatRequest struct {
	Path string
	// FollowSymlinks describes what a link points to (AIO's default);
	// false describes the link itself.
	FollowSymlinks bool
}

// StatResult describes a file.
type StatResult struct {
	Path        string // absolute; the link's target when following
	Size        int64
	Mode        fs.FileMode
	Permissions string // Linux octal: "644", "755"; "4755" when setuid, setgid or sticky is set
	IsDirectory bool
	IsSymlink   bool // the path itself is a symbolic link
	// LinkTarget is the link's text (what it points to, as written) when
	// the path itself is a symbolic link and links are not followed.
	LinkTarget string
	ModTime    time.Time
	// Version is the content's version for a regular file up to
	// workspace.TextLimit (16 MiB) that could be read; "" otherwise, and
	// when the file changed while it was hashed. It is the download ETag.
	Version string
}

// Stat describes a file. Unlike workspace.Stat, a missing file is
// not_found. Stat does not count as a read for freshness: it shows no
// content.
func (e *Engine) Stat(_ context.Context, req StatRequest) (*StatResult, error) {
	const op = "stat"
	var (
		info workspace.Info
		err  error
	)
	if req.FollowSymlinks {
		info, err = e.ws.Stat(req.Path)
	} else {
		info, err = e.ws.Lstat(req.Path)
	}
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	if !info.Exists {
		if req.FollowSymlinks && info.IsSymlink {
			// The path may be a link whose target is missing: say so, or
			// the caller, who can see the link, is told it is not there.
			if l, err := e.ws.Lstat(req.Path); err == nil && l.Exists && l.IsSymlink {
				return nil, fserr.New(fserr.NotFound, op, req.Path, "%s is a symbolic link to %s, which does not exist", req.Path, l.LinkTarget).
					WithHint("stat without following links describes the link itself; create the target or remove the link")
			}
		}
		return nil, fserr.New(fserr.NotFound, op, req.Path, "%s does not exist", req.Path).
			WithHint("check the path; list the parent directory")
	}
	res := &StatResult{
		Path: info.Path.Abs, Size: info.Size, Mode: info.Mode, Permissions: Permissions(info.Mode),
		IsDirectory: info.IsDir, IsSymlink: info.IsSymlink, ModTime: info.ModTime,
	}
	if !req.FollowSymlinks {
		res.LinkTarget = info.LinkTarget
	}
	if info.Mode.IsRegular() && info.Size <= workspace.TextLimit {
		res.Version = e.statVersion(req.Path, info)
	}
	return res, nil
}

// statVersion is the version of the regular file p that info describes,
// or "" when it cannot be read or is not the file info describes. It goes
// through the download ETag cache: an unchanged file is hashed once, and
// never held in memory whole.
func (e *Engine) statVersion(p string, info workspace.Info) string {
	f, _, err := e.ws.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	v, fi, err := e.versions.FileVersion(f)
	if err != nil || fi.Size() != info.Size || !fi.ModTime().Equal(info.ModTime) {
		// Replaced or changed since the Stat: the version would not
		// describe the size and time reported with it.
		return ""
	}
	return v
}

// Permissions renders m's permission bits in octal as Linux tools do:
// three digits, or four when setuid, setgid or sticky is set.
func Permissions(m fs.FileMode) string {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	if p > 0o777 {
		return fmt.Sprintf("%04o", p)
	}
	return fmt.Sprintf("%03o", p)
}

// ListRequest lists a directory.
type ListRequest struct {
	Path       string
	Recursive  bool
	MaxDepth   int  // with Recursive: 1 = the directory's own entries; 0 = unlimited
	ShowHidden bool // include dot-prefixed names (AIO's default is true; fronts set it)
	// FileTypes keeps only files whose name ends with one of these
	// extensions (".py", or "py"), compared case-insensitively;
	// directories are always listed.
	FileTypes []string
	Limit     int // 0 = workspace.DefaultListLimit (10,000)
}

// Entry is one listed file.
type Entry struct {
	Name      string
	Path      string // absolute
	IsDir     bool   // a link to a directory counts as a directory
	IsSymlink bool
	Hidden    bool
	Size      int64
	ModTime   time.Time
	Mode      fs.FileMode
	Extension string // with the dot, as named (".py"); "" for none and for directories
}

// ListResult is a directory listing: sorted by name, each subdirectory's
// entries right after it.
type ListResult struct {
	Path    string
	Entries []Entry
	Dirs    int
	Files   int // everything that is not a directory
	// Truncated reports that more entries exist than Limit. A recursive
	// listing is cut shallowest first: every entry down to WholeDepth is
	// listed, then as many of the next level as fit, in listing order.
	Truncated bool
	// WholeDepth, with Truncated, is the depth down to which the listing
	// is whole: 1 when all of the directory's own entries are listed, 2
	// when theirs are too, and so on; 0 when not even the directory's own
	// entries all fit. 0 when not Truncated.
	WholeDepth int
}

// List lists a directory (workspace.List). Listing a file is
// invalid_target, a missing directory not_found.
func (e *Engine) List(_ context.Context, req ListRequest) (*ListResult, error) {
	const op = "list"
	var types []string
	for _, t := range req.FileTypes {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || t == "." {
			continue
		}
		if t[0] != '.' {
			t = "." + t
		}
		types = append(types, t)
	}
	opts := workspace.ListOptions{
		Recursive: req.Recursive, MaxDepth: req.MaxDepth, SkipHidden: !req.ShowHidden, Limit: req.Limit,
	}
	if len(types) > 0 {
		opts.Include = func(en *workspace.Entry) bool {
			return en.IsDir || slices.ContainsFunc(types, func(t string) bool { return hasExtension(en.Name, t) })
		}
	}
	l, err := e.ws.List(req.Path, opts)
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	res := &ListResult{Path: l.Path.Abs, Truncated: l.Truncated, WholeDepth: l.WholeDepth, Entries: make([]Entry, 0, len(l.Entries))}
	for _, en := range l.Entries {
		out := Entry{
			Name: en.Name, Path: en.Path, IsDir: en.IsDir, IsSymlink: en.IsSymlink, Hidden: en.Hidden,
			Size: en.Size, ModTime: en.ModTime, Mode: en.Mode,
		}
		if en.IsDir {
			res.Dirs++
		} else {
			res.Files++
			out.Extension = extension(en.Name)
		}
		res.Entries = append(res.Entries, out)
	}
	return res, nil
}

// extension is name's extension with its dot; a name's leading dots do
// not start one (".bashrc" has none).
func extension(name string) string {
	return filepath.Ext(strings.TrimLeft(name, "."))
}

// hasExtension reports whether name ends with ext (lower case, with its
// dot) after something other than leading dots.
func hasExtension(name, ext string) bool {
	base := strings.ToLower(strings.TrimLeft(name, "."))
	return len(base) > len(ext) && strings.HasSuffix(base, ext)
}
