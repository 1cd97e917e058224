package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

func TestCommitSingle(t *testing.T) {
	t.Parallel()
	type want struct {
		files   map[string]string // snapshot entries that must hold after
		gone    []string
		created bool
		deleted bool
		prev    string // previous content ("" = did not exist)
	}
	cases := []struct {
		name   string
		setup  map[string]string
		change Change
		want   want
	}{
		{"create", nil, Change{Path: "new.txt", Content: []byte("new")},
			want{files: map[string]string{"new.txt": "-rw-r--r-- new"}, created: true}},
		{"create with mode", nil, Change{Path: "secret", Content: []byte("s"), Mode: 0o600},
			want{files: map[string]string{"secret": "-rw------- s"}, created: true}},
		{"create executable", nil, Change{Path: "run.sh", Content: []byte("#!/bin/sh"), Mode: 0o755, ExpectAbsent: true},
			want{files: map[string]string{"run.sh": "-rwxr-xr-x #!/bin/sh"}, created: true}},
		{"create in missing dirs", nil, Change{Path: "x/y/z.txt", Content: []byte("z")},
			want{files: map[string]string{"x": "dir -rwxr-xr-x", "x/y": "dir -rwxr-xr-x", "x/y/z.txt": "-rw-r--r-- z"}, created: true}},
		{"replace", map[string]string{"f.txt": "old"}, Change{Path: "f.txt", Content: []byte("new content")},
			want{files: map[string]string{"f.txt": "-rw-r--r-- new content"}, prev: "old"}},
		{"replace with version", map[string]string{"f.txt": "old"}, Change{Path: "f.txt", Content: []byte("v2"), ExpectedVersion: Version([]byte("old"))},
			want{files: map[string]string{"f.txt": "-rw-r--r-- v2"}, prev: "old"}},
		{"replace with empty", map[string]string{"f.txt": "old"}, Change{Path: "f.txt"},
			want{files: map[string]string{"f.txt": "-rw-r--r-- "}, prev: "old"}},
		{"delete", map[string]string{"d/f.txt": "old"}, Change{Path: "d/f.txt", Delete: true},
			want{gone: []string{"d/f.txt"}, files: map[string]string{"d": "dir -rwxr-xr-x"}, deleted: true, prev: "old"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			for name, c := range tc.setup {
				writeFile(t, filepath.Join(root, name), c, 0o644)
			}
			res, err := w.Commit([]Change{tc.change}, CommitOptions{Op: "write"})
			if err != nil {
				t.Fatal(err)
			}
			snap := snapshot(t, root)
			for name, want := range tc.want.files {
				if snap[name] != want {
					t.Errorf("%s = %q, want %q", name, snap[name], want)
				}
			}
			for _, name := range tc.want.gone {
				if _, ok := snap[name]; ok {
					t.Errorf("%s still exists", name)
				}
			}
			wantRes := FileResult{
				Path:         res[0].Path,
				Created:      tc.want.created,
				Deleted:      tc.want.deleted,
				UndoRecorded: true,
			}
			if !tc.want.deleted {
				wantRes.Version = Version(tc.change.Content)
			}
			if tc.want.prev != "" {
				wantRes.PrevVersion = Version([]byte(tc.want.prev))
			}
			if diff := cmp.Diff([]FileResult{wantRes}, res); diff != "" {
				t.Errorf("results mismatch (-want +got):\n%s", diff)
			}
			if res[0].Path.Rel != filepath.Clean(tc.change.Path) {
				t.Errorf("Rel = %q", res[0].Path.Rel)
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
		})
	}
}

// TestCommitErrors checks each refusal: the right code, and nothing on
// disk changed, no temp file left.
func TestCommitErrors(t *testing.T) {
	t.Parallel()
	oldV := Version([]byte("old"))
	otherV := Version([]byte("other"))
	cases := []struct {
		name    string
		changes []Change
		code    fserr.Code
		message []string // substrings
		hint    string
	}{
		{"stale version", []Change{{Path: "f.txt", Content: []byte("x"), ExpectedVersion: otherV}},
			fserr.StaleVersion, []string{otherV, oldV}, "re-read the file"},
		{"expect absent but exists", []Change{{Path: "f.txt", Content: []byte("x"), ExpectAbsent: true}},
			fserr.StaleVersion, []string{"exists"}, "re-read the file"},
		{"expected version of missing file", []Change{{Path: "nope", Content: []byte("x"), ExpectedVersion: oldV}},
			fserr.StaleVersion, []string{"does not exist (expected version"}, "re-read"},
		{"stale in second of two", []Change{{Path: "new.txt", Content: []byte("x")}, {Path: "f.txt", Delete: true, ExpectedVersion: otherV}},
			fserr.StaleVersion, nil, ""},
		{"delete missing", []Change{{Path: "nope", Delete: true}}, fserr.NotFound, []string{"nope"}, ""},
		{"delete directory", []Change{{Path: "d", Delete: true}}, fserr.InvalidTarget, []string{"directory"}, ""},
		{"write onto directory", []Change{{Path: "d", Content: []byte("x")}}, fserr.InvalidTarget, []string{"directory"}, ""},
		{"write onto root", []Change{{Path: ".", Content: []byte("x")}}, fserr.InvalidTarget, nil, ""},
		{"parent is a file", []Change{{Path: "f.txt/child", Content: []byte("x")}}, fserr.InvalidTarget, []string{"not a directory"}, ""},
		{"special file", []Change{{Path: "fifo", Content: []byte("x")}}, fserr.InvalidTarget, nil, ""},
		{"bad version", []Change{{Path: "f.txt", Content: []byte("x"), ExpectedVersion: "v1"}}, fserr.BadRequest, nil, ""},
		{"bad mode", []Change{{Path: "g", Content: []byte("x"), Mode: fs.ModeDir | 0o755}}, fserr.BadRequest, nil, ""},
		{"delete expecting absent", []Change{{Path: "f.txt", Delete: true, ExpectAbsent: true}}, fserr.BadRequest, nil, ""},
		{"same file twice", []Change{{Path: "f.txt", Content: []byte("a")}, {Path: "./f.txt", Content: []byte("b")}}, fserr.BadRequest, nil, ""},
		{"same file via link", []Change{{Path: "f.txt", Content: []byte("a")}, {Path: "link", Content: []byte("b")}}, fserr.BadRequest, nil, ""},
		{"file and directory", []Change{{Path: "n", Content: []byte("a")}, {Path: "n/m", Content: []byte("b")}}, fserr.BadRequest, nil, ""},
		{"outside", []Change{{Path: "new.txt", Content: []byte("a")}, {Path: "../x", Content: []byte("b")}}, fserr.OutsideRoot, nil, ""},
		{"empty path", []Change{{Path: "", Content: []byte("a")}}, fserr.InvalidPath, nil, ""},
		{"nothing", nil, fserr.BadRequest, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, "f.txt"), "old", 0o644)
			if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("f.txt", filepath.Join(root, "link")); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, root)
			_, err := w.Commit(tc.changes, CommitOptions{Op: "edit"})
			e := wantCode(t, err, tc.code)
			for _, s := range tc.message {
				if !strings.Contains(e.Message, s) {
					t.Errorf("message %q does not contain %q", e.Message, s)
				}
			}
			if !strings.Contains(e.Hint, tc.hint) {
				t.Errorf("hint %q does not contain %q", e.Hint, tc.hint)
			}
			if e.Op != "edit" {
				t.Errorf("Op = %q", e.Op)
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("tree changed (-before +after):\n%s", diff)
			}
			assertNoManifests(t, w)
		})
	}
}

func TestCommitKeepsMode(t *testing.T) {
	t.Parallel()
	modes := []fs.FileMode{0o755, 0o600, 0o640, 0o604}
	if os.Geteuid() == 0 {
		modes = append(modes, 0o444) // only root may replace it (TestReadOnlyRefused)
	}
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			name := filepath.Join(root, "f")
			writeFile(t, name, "old", mode)
			// Mode on an existing file is ignored: it keeps its own.
			if _, err := w.Commit([]Change{{Path: "f", Content: []byte("new"), Mode: 0o777}}, CommitOptions{}); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != mode || readFile(t, name) != "new" {
				t.Errorf("mode %v content %q; want %v new", fi.Mode(), readFile(t, name), mode)
			}
			assertNoStrays(t, root)
		})
	}
}

func TestCommitKeepsXattr(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	name := filepath.Join(root, "f")
	writeFile(t, name, "old", 0o644)
	const attr = "user.fsplane.test"
	if err := unix.Setxattr(name, attr, []byte("kept"), 0); err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			t.Skip("user xattrs not supported here")
		}
		t.Fatal(err)
	}
	for i, c := range [][]Change{
		{{Path: "f", Content: []byte("new")}},
		{{Path: "f", Content: []byte("newer")}, {Path: "other", Content: []byte("o")}}, // transaction path
	} {
		if _, err := w.Commit(c, CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, err := unix.Getxattr(name, attr, buf)
		if err != nil || string(buf[:n]) != "kept" {
			t.Errorf("commit %d: xattr = %q, %v; want kept", i, buf[:max(n, 0)], err)
		}
	}
	assertNoStrays(t, root)
}

func TestCommitKeepsOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file away")
	}
	w, root := newTestWorkspace(t)
	name := filepath.Join(root, "f")
	writeFile(t, name, "old", 0o755)
	if err := os.Chown(name, 1234, 1234); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, fs.ModeSetuid|0o755); err != nil { // after chown, which clears it
		t.Fatal(err)
	}
	if _, err := w.Commit([]Change{{Path: "f", Content: []byte("new")}}, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 1234 || st.Gid != 1234 || fi.Mode()&(fs.ModeSetuid|fs.ModePerm) != fs.ModeSetuid|0o755 {
		t.Errorf("owner %d:%d mode %v; want 1234:1234 setuid 0755", st.Uid, st.Gid, fi.Mode())
	}
}

// TestCommitHardLink: a file with two names is rewritten in place, so both
// names stay one file and show the new content.
func TestCommitHardLink(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		content string
		extra   []Change
	}{
		{"grow", strings.Repeat("new content ", 1000), nil},
		{"shrink", "n", nil},
		{"same size", "abc", nil},
		{"in a transaction", "tx", []Change{{Path: "other.txt", Content: []byte("o")}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			a, b := filepath.Join(root, "a.txt"), filepath.Join(root, "sub/b.txt")
			writeFile(t, a, "old", 0o640)
			if err := os.MkdirAll(filepath.Dir(b), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(a, b); err != nil {
				t.Fatal(err)
			}
			ino := inode(t, a)
			changes := append([]Change{{Path: "a.txt", Content: []byte(tc.content), ExpectedVersion: Version([]byte("old"))}}, tc.extra...)
			res, err := w.Commit(changes, CommitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if inode(t, a) != ino || inode(t, b) != ino {
				t.Errorf("inodes %d %d, want both %d", inode(t, a), inode(t, b), ino)
			}
			if readFile(t, a) != tc.content || readFile(t, b) != tc.content {
				t.Errorf("contents %q %q", readFile(t, a), readFile(t, b))
			}
			if fi, _ := os.Stat(a); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v", fi.Mode())
			}
			if res[0].Version != Version([]byte(tc.content)) || !res[0].UndoRecorded {
				t.Errorf("result %+v", res[0])
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
		})
	}
}

// TestCommitSymlink: editing a link edits its target; the link survives,
// and the temp file goes beside the target.
func TestCommitSymlink(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "real/target.txt"), "old", 0o600)
	if err := os.MkdirAll(filepath.Join(root, "links"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "links/l")
	if err := os.Symlink("../real/target.txt", link); err != nil {
		t.Fatal(err)
	}
	var tempDir string
	w.hooks.beforeApply = func(int) error {
		matches, _ := filepath.Glob(filepath.Join(root, "*/.*.fsplane-*.tmp"))
		if len(matches) == 1 {
			tempDir = filepath.Base(filepath.Dir(matches[0]))
		}
		return nil
	}
	res, err := w.Commit([]Change{{Path: "links/l", Content: []byte("new")}}, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tempDir != "real" {
		t.Errorf("temp file was in %q, want beside the target in real", tempDir)
	}
	if target, err := os.Readlink(link); err != nil || target != "../real/target.txt" {
		t.Errorf("link = %q, %v; want it unchanged", target, err)
	}
	if got := readFile(t, filepath.Join(root, "real/target.txt")); got != "new" {
		t.Errorf("target = %q", got)
	}
	if fi, _ := os.Stat(link); fi.Mode().Perm() != 0o600 {
		t.Errorf("target mode %v", fi.Mode())
	}
	if res[0].Path.Rel != "real/target.txt" {
		t.Errorf("Rel = %q", res[0].Path.Rel)
	}
	// A dangling link inside the root: writing creates its target.
	if err := os.Symlink("../real/created.txt", filepath.Join(root, "links/dangling")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit([]Change{{Path: "links/dangling", Content: []byte("c")}}, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(root, "real/created.txt")); got != "c" {
		t.Errorf("created = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(root, "links/dangling")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("dangling link replaced: %v %v", fi, err)
	}
	assertNoStrays(t, root)
}

// TestCommitSymlinkEscapes: links leading out of the root are refused for
// reads and writes, and nothing outside changes.
func TestCommitSymlinkEscapes(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret", 0o644)
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"etc":        "/etc",
		"hostname":   "/etc/hostname",
		"abs-secret": filepath.Join(outside, "secret.txt"),
		"rel-out":    "../outside",
		"sub/up":     "../../outside/secret.txt",
		"parentdir":  "../outside", // a link used as a parent directory
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	outsideBefore := snapshot(t, outside)
	for _, p := range []string{"etc/hostname", "etc/fsplane-new", "hostname", "abs-secret", "rel-out/secret.txt", "rel-out/new.txt", "sub/up", "parentdir/new.txt", "parentdir/secret.txt"} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			for _, c := range []Change{{Path: p, Content: []byte("pwned")}, {Path: p, Delete: true}} {
				_, err := w.Commit([]Change{c}, CommitOptions{})
				wantCode(t, err, fserr.OutsideRoot)
			}
			_, err := w.ReadText(p)
			wantCode(t, err, fserr.OutsideRoot)
		})
	}
	t.Cleanup(func() {
		if diff := cmp.Diff(outsideBefore, snapshot(t, outside)); diff != "" {
			t.Errorf("outside changed (-before +after):\n%s", diff)
		}
		assertNoStrays(t, root, outside)
	})
}

// TestCommitSwapAfterResolve swaps a directory for a link to the outside
// after the commit resolved and validated its paths: the *os.Root
// operations must refuse, and nothing outside may change.
func TestCommitSwapAfterResolve(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		changes []Change
		link    func(outside string) string // the link's target
	}{
		{"create", []Change{{Path: "sub/new.txt", Content: []byte("pwned")}}, func(o string) string { return o }},
		{"replace", []Change{{Path: "sub/f.txt", Content: []byte("pwned")}}, func(o string) string { return o }},
		{"replace, relative link", []Change{{Path: "sub/f.txt", Content: []byte("pwned")}}, func(string) string { return "../outside" }},
		{"delete", []Change{{Path: "sub/f.txt", Delete: true}}, func(o string) string { return o }},
		{"in place", []Change{{Path: "sub/h.txt", Content: []byte("pwned")}}, func(o string) string { return o }},
		{"transaction", []Change{{Path: "top.txt", Content: []byte("t")}, {Path: "sub/f.txt", Content: []byte("pwned")}, {Path: "sub/new.txt", Content: []byte("pwned")}}, func(o string) string { return o }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
			for _, dir := range []string{filepath.Join(root, "sub"), outside} {
				writeFile(t, filepath.Join(dir, "f.txt"), "original", 0o644)
				writeFile(t, filepath.Join(dir, "h.txt"), "original", 0o644)
			}
			// h.txt has a second name, so it is rewritten in place.
			if err := os.Link(filepath.Join(root, "sub/h.txt"), filepath.Join(root, "h2.txt")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "top.txt"), "top", 0o644)
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
			outsideBefore := snapshot(t, outside)
			w.hooks.afterPlan = func() {
				if err := os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "moved")); err != nil {
					t.Error(err)
				}
				if err := os.Symlink(tc.link(outside), filepath.Join(root, "sub")); err != nil {
					t.Error(err)
				}
			}
			_, err := w.Commit(tc.changes, CommitOptions{})
			if err == nil {
				t.Fatal("commit through a swapped-in link succeeded")
			}
			if diff := cmp.Diff(outsideBefore, snapshot(t, outside)); diff != "" {
				t.Errorf("outside changed (-before +after):\n%s", diff)
			}
			if got := readFile(t, filepath.Join(root, "moved/f.txt")); got != "original" {
				t.Errorf("moved/f.txt = %q", got)
			}
			if got := readFile(t, filepath.Join(root, "top.txt")); got != "top" {
				t.Errorf("top.txt = %q; the transaction was not rolled back", got)
			}
			assertNoStrays(t, root, outside)
			assertNoManifests(t, w)
		})
	}
}

// TestCommitTransaction applies a mix of changes as one transaction.
func TestCommitTransaction(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "mod.txt"), "m1", 0o600)
	writeFile(t, filepath.Join(root, "del.txt"), "d1", 0o644)
	writeFile(t, filepath.Join(root, "hl.txt"), "h1", 0o644)
	if err := os.Link(filepath.Join(root, "hl.txt"), filepath.Join(root, "hl2.txt")); err != nil {
		t.Fatal(err)
	}
	res, err := w.Commit([]Change{
		{Path: "mod.txt", Content: []byte("m2"), ExpectedVersion: Version([]byte("m1"))},
		{Path: "new/dir/add.txt", Content: []byte("a2"), ExpectAbsent: true},
		{Path: "del.txt", Delete: true},
		{Path: "hl.txt", Content: []byte("h2")},
	}, CommitOptions{Op: "patch"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		".":               "dir -rwx------",
		"mod.txt":         "-rw------- m2",
		"new":             "dir -rwxr-xr-x",
		"new/dir":         "dir -rwxr-xr-x",
		"new/dir/add.txt": "-rw-r--r-- a2",
		"hl.txt":          "-rw-r--r-- h2",
		"hl2.txt":         "-rw-r--r-- h2",
	}
	got := snapshot(t, root)
	got["."] = want["."] // t.TempDir's own mode is not ours
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tree mismatch (-want +got):\n%s", diff)
	}
	var flags []string
	for _, r := range res {
		flags = append(flags, r.Path.Rel+map[bool]string{true: " created", false: ""}[r.Created]+map[bool]string{true: " deleted", false: ""}[r.Deleted])
	}
	if diff := cmp.Diff([]string{"mod.txt", "new/dir/add.txt created", "del.txt deleted", "hl.txt"}, flags); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}
	assertNoStrays(t, root)
	assertNoManifests(t, w)
}

// TestCommitRollback fails the i-th change of a transaction during apply
// (EACCES, as a permission change by someone else would): every file is as
// before, created files and directories are gone, nothing is left over.
func TestCommitRollback(t *testing.T) {
	t.Parallel()
	for failAt := range 5 {
		t.Run(string(rune('0'+failAt)), func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, "a.txt"), "a1", 0o600)
			writeFile(t, filepath.Join(root, "b.txt"), "b1", 0o644)
			writeFile(t, filepath.Join(root, "c.txt"), "c1", 0o644)
			writeFile(t, filepath.Join(root, "h.txt"), "h1", 0o644)
			if err := os.Link(filepath.Join(root, "h.txt"), filepath.Join(root, "h2.txt")); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, root)
			hIno := inode(t, filepath.Join(root, "h.txt"))
			w.hooks.beforeApply = func(i int) error {
				if i == failAt {
					return &os.PathError{Op: "rename", Path: "x", Err: syscall.EACCES}
				}
				return nil
			}
			_, err := w.Commit([]Change{
				{Path: "a.txt", Content: []byte("a2")},
				{Path: "new/sub/b.txt", Content: []byte("new")},
				{Path: "b.txt", Delete: true},
				{Path: "h.txt", Content: []byte("h2 longer")},
				{Path: "c.txt", Content: []byte("c2")},
			}, CommitOptions{})
			wantCode(t, err, fserr.PermissionDenied)
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("tree not rolled back (-before +after):\n%s", diff)
			}
			if inode(t, filepath.Join(root, "h.txt")) != hIno || inode(t, filepath.Join(root, "h2.txt")) != hIno {
				t.Error("hard links broken by the rollback")
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
			if j := w.journal; j.len() != 0 {
				t.Errorf("undo recorded for a failed commit: %d entries", j.len())
			}
		})
	}
}

// TestCommitCrashPoints stops a transaction at each step as if the process
// died there, then opens a new workspace on the same state directory:
// recovery must leave all old files (before the commit point) or all new
// ones (after it), and nothing else.
func TestCommitCrashPoints(t *testing.T) {
	t.Parallel()
	steps := []struct {
		step   string
		newSet bool
	}{
		{"manifest", false},
		{"prepare/0", false}, {"prepare/1", false}, {"prepare/2", false}, {"prepare/3", false}, {"prepare/4", false},
		{"apply/0", false}, {"apply/1", false}, {"apply/2", false}, {"apply/3", false}, {"apply/4", false},
		{"synced", false},
		{"committed", true},
	}
	for _, s := range steps {
		t.Run(s.step, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(root, "a.txt"), "a1", 0o600)
			writeFile(t, filepath.Join(root, "b.txt"), "b1", 0o644)
			writeFile(t, filepath.Join(root, "h.txt"), "h1", 0o644)
			if err := os.Link(filepath.Join(root, "h.txt"), filepath.Join(root, "h2.txt")); err != nil {
				t.Fatal(err)
			}
			old := snapshot(t, root)
			changes := []Change{
				{Path: "a.txt", Content: []byte("a2")},
				{Path: "new/sub/c.txt", Content: []byte("c2")},
				{Path: "b.txt", Delete: true},
				{Path: "h.txt", Content: []byte("h2 is longer")},
				{Path: "d.txt", Content: []byte("d2")},
			}
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			w.hooks.crashAt = func(step string) bool { return step == s.step }
			if _, err := w.Commit(changes, CommitOptions{}); !errors.Is(err, errCrashed) {
				t.Fatalf("Commit = %v, want the simulated crash", err)
			}
			// The "dead" workspace keeps its roots open; recovery is by a
			// new one, as after a restart.
			w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			got := snapshot(t, root)
			want := old
			if s.newSet {
				want = map[string]string{
					".": old["."], "a.txt": "-rw------- a2", "new": "dir -rwxr-xr-x", "new/sub": "dir -rwxr-xr-x",
					"new/sub/c.txt": "-rw-r--r-- c2", "h.txt": "-rw-r--r-- h2 is longer", "h2.txt": "-rw-r--r-- h2 is longer",
					"d.txt": "-rw-r--r-- d2",
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("after recovery (-want +got):\n%s", diff)
			}
			if inode(t, filepath.Join(root, "h.txt")) != inode(t, filepath.Join(root, "h2.txt")) {
				t.Error("hard links broken")
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w2)
		})
	}
}

// TestConcurrentCommits: writers racing on one file with versions from
// their reads; each version is consumed exactly once.
func TestConcurrentCommits(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "counter"), "0", 0o644)
	const writers, rounds = 8, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				tf, err := w.ReadText("counter")
				if err != nil {
					t.Error(err)
					return
				}
				next := string(tf.Content) + "+"
				_, err = w.Commit([]Change{{Path: "counter", Content: []byte(next), ExpectedVersion: tf.Version}}, CommitOptions{NoUndo: r%2 == 0})
				if fserr.Is(err, fserr.StaleVersion) {
					continue
				}
				if err != nil {
					t.Errorf("writer %d: %v", g, err)
					return
				}
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got := readFile(t, filepath.Join(root, "counter")); len(got) != 1+wins {
		t.Errorf("counter has %d increments, %d commits won", len(got)-1, wins)
	}
	assertNoStrays(t, root)
}

// TestRecoveryKeepsAFileWhereADirWasPlanned: a transaction killed after
// its manifest named a directory it would create, but before it made it,
// is rolled back at the next open; a file someone put at that name since
// is theirs, and the rollback's removal of the directory must not unlink
// it.
func TestRecoveryKeepsAFileWhereADirWasPlanned(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(root, "other.txt"), "o1", 0o644)
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	w.hooks.crashAt = func(s string) bool { return s == "manifest" }
	changes := []Change{{Path: "newdir/f.txt", Content: []byte("f")}, {Path: "other.txt", Content: []byte("o2")}}
	if _, err := w.Commit(changes, CommitOptions{}); !errors.Is(err, errCrashed) {
		t.Fatalf("Commit = %v, want the simulated crash", err)
	}
	writeFile(t, filepath.Join(root, "newdir"), "someone's file", 0o644)
	openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	if b, err := os.ReadFile(filepath.Join(root, "newdir")); err != nil || string(b) != "someone's file" {
		t.Fatalf("newdir after recovery: %q %v", b, err)
	}
}

// TestRecoveryKeepsLaterWrites: a transaction killed before its commit
// point is rolled back when the workspace next opens, but a file someone
// else wrote in between (another process on the same root, a person's
// editor) is newer than the original and the rolled-back change both: it
// is kept, not overwritten by the original.
func TestRecoveryKeepsLaterWrites(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"apply/0", "apply/1", "synced"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(root, "a.txt"), "a1", 0o644)
			writeFile(t, filepath.Join(root, "b.txt"), "b1", 0o644)
			writeFile(t, filepath.Join(root, "c.txt"), "c1", 0o644)
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			w.hooks.crashAt = func(s string) bool { return s == step }
			changes := []Change{{Path: "a.txt", Content: []byte("a2")}, {Path: "b.txt", Delete: true}, {Path: "c.txt", Content: []byte("c2")}}
			if _, err := w.Commit(changes, CommitOptions{}); !errors.Is(err, errCrashed) {
				t.Fatalf("Commit = %v, want the simulated crash", err)
			}
			// Another writer, after the crash: a.txt replaced, b.txt made
			// anew; c.txt left as the crash left it.
			writeFile(t, filepath.Join(root, "a.txt.later"), "a from someone else", 0o644)
			if err := os.Rename(filepath.Join(root, "a.txt.later"), filepath.Join(root, "a.txt")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "b.txt"), "b from someone else", 0o644)
			w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			want := map[string]string{".": snapshot(t, root)["."],
				"a.txt": "-rw-r--r-- a from someone else", "b.txt": "-rw-r--r-- b from someone else", "c.txt": "-rw-r--r-- c1"}
			if diff := cmp.Diff(want, snapshot(t, root)); diff != "" {
				t.Errorf("after recovery (-want +got):\n%s", diff)
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w2)
		})
	}
}
