package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

// resolveFixture builds, under one temp dir:
//
//	real/            the first root, opened through the alias "alias"
//	two/two.txt      the second root
//	outside/secret.txt
//
// with links inside real/ that stay inside and links that leave.
func resolveFixture(t *testing.T) (w *Workspace, base string) {
	t.Helper()
	base = t.TempDir()
	real := filepath.Join(base, "real")
	writeFile(t, filepath.Join(real, "a/b/c.txt"), "c", 0o644)
	writeFile(t, filepath.Join(base, "two/two.txt"), "two", 0o644)
	writeFile(t, filepath.Join(base, "outside/secret.txt"), "secret", 0o644)
	if err := os.Mkdir(filepath.Join(real, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"link-rel":       "a/b/c.txt",
		"link-abs-in":    filepath.Join(real, "a/b/c.txt"),
		"link-dir":       "a",
		"link-etc":       "/etc",
		"link-out":       "../outside",
		"a/link-up":      "../a/b",
		"a/link-up-out":  "../../outside/secret.txt",
		"a/b/dot":        ".",
		"loop1":          "loop2",
		"loop2":          "loop1",
		"l1":             "l2",
		"l2":             "l3",
		"l3":             "a/b/c.txt",
		"dangling":       "missing/new.txt",
		"dangling-out":   "/nonexistent-fsplane/x",
		"link-abs-root":  real,
		"link-parentdir": "../outside",
		"a/deep":         "b/dot/dot",
		"link-via-deep":  "a/deep/../../a/b/c.txt", // ".." applies after deep is followed
		"link-deep-out":  "a/deep/../../../outside",
		"link-via-nope":  "nope/../a/link-up/c.txt", // back out of a missing directory, then links again
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(real, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(real, filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	w = openTestWorkspace(t, Options{
		Roots:    []string{filepath.Join(base, "alias"), filepath.Join(base, "two")},
		StateDir: t.TempDir(),
	})
	return w, base
}

// TestResolve follows syncthing's TestRooted: valid cases, oddly formatted
// paths, and escape attempts, plus symbolic links in both directions.
func TestResolve(t *testing.T) {
	t.Parallel()
	w, base := resolveFixture(t)
	real := filepath.Join(base, "real")
	alias := filepath.Join(base, "alias")
	two := filepath.Join(base, "two")

	type want struct {
		root int
		rel  string
		code fserr.Code // "" for success
	}
	cases := []struct {
		section, given string
		want           want
	}{
		// Valid cases.
		{"valid", "a/b/c.txt", want{0, "a/b/c.txt", ""}},
		{"valid", ".", want{0, ".", ""}},
		{"valid", "a", want{0, "a", ""}},
		{"valid", "new/file.txt", want{0, "new/file.txt", ""}},
		{"valid", alias + "/a/b/c.txt", want{0, "a/b/c.txt", ""}},
		{"valid", real + "/a/b/c.txt", want{0, "a/b/c.txt", ""}},
		{"valid", alias, want{0, ".", ""}},
		{"valid", two + "/two.txt", want{1, "two.txt", ""}},
		{"valid", "link-rel", want{0, "a/b/c.txt", ""}},
		{"valid", "link-abs-in", want{0, "a/b/c.txt", ""}},
		{"valid", "link-abs-root/a", want{0, "a", ""}},
		{"valid", "link-dir/b/c.txt", want{0, "a/b/c.txt", ""}},
		{"valid", "a/link-up/c.txt", want{0, "a/b/c.txt", ""}},
		{"valid", "a/b/dot/dot/c.txt", want{0, "a/b/c.txt", ""}},
		{"valid", "l1", want{0, "a/b/c.txt", ""}},
		{"valid", "dangling", want{0, "missing/new.txt", ""}},
		{"valid", "a/b/c.txt/x", want{0, "a/b/c.txt/x", ""}},
		{"valid", "link-via-deep", want{0, "a/b/c.txt", ""}},
		{"valid", "link-via-nope", want{0, "a/b/c.txt", ""}},
		{"valid", "nope/a/link-up/c.txt", want{0, "nope/a/link-up/c.txt", ""}},

		// Not escape attempts, but oddly formatted relative paths.
		{"odd", "./a/b/c.txt", want{0, "a/b/c.txt", ""}},
		{"odd", "a//b///c.txt", want{0, "a/b/c.txt", ""}},
		{"odd", "a/./b/./c.txt", want{0, "a/b/c.txt", ""}},
		{"odd", "a/b/../b/c.txt", want{0, "a/b/c.txt", ""}},
		{"odd", "a/b/", want{0, "a/b", ""}},
		{"odd", "a/new/", want{0, "a/new", ""}},
		{"invalid", "a/b/c.txt/", want{code: fserr.InvalidTarget}}, // a slash names a directory
		{"odd", "dir/../a/b/c.txt", want{0, "a/b/c.txt", ""}},
		{"odd", "a/..", want{0, ".", ""}},
		{"odd", alias + "/dir/../a//b/c.txt", want{0, "a/b/c.txt", ""}},
		{"odd", "./", want{0, ".", ""}},

		// Escape attempts.
		{"escape", "..", want{code: fserr.OutsideRoot}},
		{"escape", "../outside/secret.txt", want{code: fserr.OutsideRoot}},
		{"escape", "a/../../outside/secret.txt", want{code: fserr.OutsideRoot}},
		{"escape", "a/b/../../../outside", want{code: fserr.OutsideRoot}},
		{"escape", "/etc/passwd", want{code: fserr.OutsideRoot}},
		{"escape", "/", want{code: fserr.OutsideRoot}},
		{"escape", base + "/outside/secret.txt", want{code: fserr.OutsideRoot}},
		{"escape", alias + "/../outside/secret.txt", want{code: fserr.OutsideRoot}},
		{"escape", alias + "x/file", want{code: fserr.OutsideRoot}},
		{"escape", real + "x", want{code: fserr.OutsideRoot}},
		{"escape", "link-etc", want{code: fserr.OutsideRoot}},
		{"escape", "link-etc/passwd", want{code: fserr.OutsideRoot}},
		{"escape", "link-out/secret.txt", want{code: fserr.OutsideRoot}},
		{"escape", "link-parentdir/new.txt", want{code: fserr.OutsideRoot}},
		{"escape", "a/link-up-out", want{code: fserr.OutsideRoot}},
		{"escape", "link-dir/link-up-out", want{code: fserr.OutsideRoot}},
		{"escape", "dangling-out", want{code: fserr.OutsideRoot}},
		{"escape", "link-rel/../../..", want{code: fserr.OutsideRoot}},
		{"escape", "link-deep-out", want{code: fserr.OutsideRoot}},

		// Invalid.
		{"invalid", "", want{code: fserr.InvalidPath}},
		{"invalid", "a\x00b", want{code: fserr.InvalidPath}},
		{"invalid", "loop1", want{code: fserr.InvalidPath}},
		{"invalid", "loop1/x", want{code: fserr.InvalidPath}},
		{"invalid", strings.Repeat("a/", maxPathLen/2) + "x", want{code: fserr.InvalidPath}},
	}
	for _, tc := range cases {
		t.Run(tc.section+"/"+tc.given, func(t *testing.T) {
			t.Parallel()
			got, err := w.Resolve(tc.given)
			if tc.want.code != "" {
				e := wantCode(t, err, tc.want.code)
				if tc.want.code == fserr.OutsideRoot && !strings.Contains(e.Message+" ("+e.Hint+")", alias+", "+two) {
					t.Errorf("message %q (hint %q) does not name the roots", e.Message, e.Hint)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.given, err)
			}
			rootPath := []string{alias, two}[tc.want.root]
			want := Path{Given: tc.given, Root: tc.want.root, Rel: tc.want.rel, Abs: filepath.Join(rootPath, tc.want.rel)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Resolve(%q) mismatch (-want +got):\n%s", tc.given, diff)
			}
		})
	}
}

func TestResolveOutsideMessage(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	_, err := w.Resolve("/etc/passwd")
	e := wantCode(t, err, fserr.OutsideRoot)
	want := "path /etc/passwd is outside the workspace roots (" + root + ")"
	if e.Message != want {
		t.Errorf("message = %q, want %q", e.Message, want)
	}
	// What to do is the hint, which fronts show on its own.
	if hint := "use a path inside one of the roots; relative paths start at " + root; e.Hint != hint {
		t.Errorf("hint = %q, want %q", e.Hint, hint)
	}
}

// TestEscapeErrorText pins the text of os.Root's unexported escape error,
// which isEscape recognises.
func TestEscapeErrorText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Symlink("/", filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, name := range []string{"../x", "up/etc/passwd"} {
		_, err := r.Open(name)
		if !isEscape(err) {
			t.Errorf("Open(%q) = %v; isEscape does not recognise it", name, err)
		}
	}
}

func TestStat(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "f.txt"), "hello", 0o640)
	if err := os.Symlink("f.txt", filepath.Join(root, "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "f.txt"), filepath.Join(root, "h")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	type got struct {
		Rel                      string
		Exists, IsDir, IsSymlink bool
		Size                     int64
		Perm                     os.FileMode
		Nlink                    uint64
	}
	cases := []struct {
		path string
		want got
	}{
		{"f.txt", got{"f.txt", true, false, false, 5, 0o640, 2}},
		{"l", got{"f.txt", true, false, true, 5, 0o640, 2}},
		{"d", got{"d", true, true, false, 0, 0o755, 2}},
		{"missing", got{"missing", false, false, false, 0, 0, 0}},
		{"d/missing/x", got{"d/missing/x", false, false, false, 0, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			info, err := w.Stat(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			g := got{info.Path.Rel, info.Exists, info.IsDir, info.IsSymlink, info.Size, info.Mode.Perm(), info.Nlink}
			if tc.want.IsDir {
				g.Size = 0
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("Stat(%q) mismatch (-want +got):\n%s", tc.path, diff)
			}
			if info.Exists && (info.UID != os.Geteuid() || info.ModTime.IsZero()) {
				t.Errorf("Stat(%q): uid %d, mtime %v", tc.path, info.UID, info.ModTime)
			}
		})
	}
	_, err := w.Stat("../x")
	wantCode(t, err, fserr.OutsideRoot)
}

// TestStateDirInsideRoot: the state directory is not part of the
// workspace even when it lies inside a root.
func TestStateDirInsideRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: filepath.Join(root, ".state")})
	if err := os.Symlink(".state/tx", filepath.Join(root, "sneaky")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".state", ".state/lock", ".state/tx/0123456789abcdef.json", "sneaky/x.json", filepath.Join(root, ".state/undo/log")} {
		_, err := w.Resolve(p)
		wantCode(t, err, fserr.OutsideRoot)
		_, err = w.Commit([]Change{{Path: p, Content: []byte("{}")}}, CommitOptions{})
		wantCode(t, err, fserr.OutsideRoot)
	}
	if _, err := w.Commit([]Change{{Path: "ok.txt", Content: []byte("ok")}}, CommitOptions{}); err != nil {
		t.Error(err)
	}
}

// TestResolveCostIsTheWalk: resolving a path walks it once (follow: an
// Lstat per component, each through the root) and recognises the state
// directory on the way. Statting each prefix again, a walk from the root
// per prefix, doubled the cost of every operation. Allocations measure
// that work deterministically: beyond the walk, resolve may cost only a
// little, and resolveEntry one Lstat of the entry itself.
func TestResolveCostIsTheWalk(t *testing.T) {
	// Not parallel: AllocsPerRun counts every goroutine's allocations.
	root := t.TempDir()
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	const depth = 32
	rel := strings.Repeat("d/", depth) + "f.txt"
	writeFile(t, filepath.Join(root, rel), "x", 0o644)
	r := w.roots[0]
	allocs := func(fn func() error) float64 {
		t.Helper()
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(20, func() { _ = fn() })
	}
	walk := allocs(func() error { _, _, _, err := w.follow("resolve", rel, r, rel); return err })
	walkDir := allocs(func() error { _, _, _, err := w.follow("resolve", rel, r, path.Dir(rel)); return err })
	resolve := allocs(func() error { _, err := w.resolve("resolve", rel); return err })
	entry := allocs(func() error { _, err := w.resolveEntry("resolve", rel); return err })
	t.Logf("depth %d: walk %v, resolve %v; walk of the parent %v, resolveEntry %v", depth, walk, resolve, walkDir, entry)
	if resolve-walk > walk/4 {
		t.Errorf("resolve at depth %d allocates %v beyond its walk's %v: the path is walked again", depth, resolve-walk, walk)
	}
	if entry-walkDir > walkDir/4 {
		t.Errorf("resolveEntry at depth %d allocates %v beyond its walk's %v: the path is walked again", depth, entry-walkDir, walkDir)
	}
}

// BenchmarkResolveDeep resolves a file 8 and 16 directories below the
// root, as a path (Resolve) and as an entry (Lstat), with the state
// directory elsewhere: the cost every operation pays before it touches a
// file, which checking for the state directory must not multiply.
func BenchmarkResolveDeep(b *testing.B) {
	for _, depth := range []int{8, 16} {
		root := b.TempDir()
		w, err := Open(Options{Roots: []string{root}, StateDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { w.Close() })
		dir := strings.Repeat("d/", depth)
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			b.Fatal(err)
		}
		rel := dir + "f.txt"
		if err := os.WriteFile(filepath.Join(root, rel), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("depth=%d/resolve", depth), func(b *testing.B) {
			for b.Loop() {
				if _, err := w.Resolve(rel); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("depth=%d/entry", depth), func(b *testing.B) {
			for b.Loop() {
				if _, err := w.Lstat(rel); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPathTooLong: a path longer than the system takes, as given or
// joined to its root, is invalid_path (ENAMETOOLONG) for every operation,
// before anything is looked up or made.
func TestPathTooLong(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	long := strings.Repeat("q/", maxPathLen/2) + "x" // over the limit as given
	// Under it as given, over it joined to the root.
	joined := strings.Repeat("q/", (maxPathLen-len(root))/2) + "xyz"
	if len(joined) > maxPathLen || len(filepath.Join(root, joined)) <= maxPathLen {
		t.Fatalf("joined is %d bytes, %d with the root", len(joined), len(filepath.Join(root, joined)))
	}
	ops := []struct {
		name string
		fn   func(p string) error
	}{
		{"resolve", func(p string) error { _, err := w.Resolve(p); return err }},
		{"lexical key", func(p string) error { _, err := w.LexicalKey(p); return err }},
		{"stat", func(p string) error { _, err := w.Stat(p); return err }},
		{"lstat", func(p string) error { _, err := w.Lstat(p); return err }},
		{"read", func(p string) error { _, err := w.ReadText(p); return err }},
		{"write", func(p string) error {
			_, err := w.Commit([]Change{{Path: p, Content: []byte("x")}}, CommitOptions{Op: "write"})
			return err
		}},
		{"mkdir", func(p string) error { _, err := w.Mkdir(p, true, nil); return err }},
	}
	for _, p := range []string{long, root + "/" + long, joined} {
		for _, op := range ops {
			e := wantCode(t, op.fn(p), fserr.InvalidPath)
			if e.Errno != syscall.ENAMETOOLONG || !strings.Contains(e.Message, fmt.Sprintf("the longest path this system takes is %d", maxPathLen)) {
				t.Errorf("%s of %d bytes: errno %v, message %q", op.name, len(p), e.Errno, e.Message)
			}
		}
	}
	if ents, err := os.ReadDir(root); err != nil || len(ents) != 0 {
		t.Errorf("root holds %v (%v), want nothing", ents, err)
	}
}

// TestFollowCostIsLinear: a path of many components costs a few lookups
// per component, each in the directory reached (not a walk from the root
// per component, quadratic in the depth), and none below the first
// missing one; mkdir -p makes each missing directory once.
func TestFollowCostIsLinear(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	const n = 1000
	deep := strings.Repeat("q/", n)
	if err := os.MkdirAll(filepath.Join(root, deep), 0o755); err != nil {
		t.Fatal(err)
	}
	r := w.roots[0]
	// Each component costs an Lstat and, for a directory with more below
	// it, opening it.
	tests := []struct {
		name, rel string
		max       int
	}{
		{"existing", deep + "f", 2*n + 1},
		{"missing below existing", deep + strings.Repeat("m/", n) + "f", 2*n + 1},
		{"missing at once", strings.Repeat("m/", n) + "f", 1},
		{"through a link", "up/" + deep + "f", 2*n + 4},
	}
	// up -> q/..: back to the root, with the whole path walked again.
	if err := os.Symlink("q/..", filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		dw := dirWalk{root: r.root}
		rel, _, _, err := w.followIn(&dw, "resolve", tt.rel, r, tt.rel)
		dw.close()
		if err != nil || rel != path.Clean(strings.TrimPrefix(tt.rel, "up/")) || dw.lookups > tt.max {
			t.Errorf("%s: %.20q…, %v after %d lookups, want at most %d", tt.name, rel, err, dw.lookups, tt.max)
		}
	}

	made := strings.Repeat("p/", n-1) + "p"
	if created, err := w.Mkdir(made, true, nil); err != nil || !created {
		t.Fatalf("Mkdir -p of %d levels: %v, %v", n, created, err)
	}
	dirs := 0
	err := filepath.WalkDir(filepath.Join(root, "p"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs++
		}
		return err
	})
	if err != nil || dirs != n {
		t.Errorf("Mkdir -p made %d directories (%v), want %d", dirs, err, n)
	}
}
