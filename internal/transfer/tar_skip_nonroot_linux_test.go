package transfer

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/testenv"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestWriteTreeSkipsUnreadableNonRoot: a file the server cannot open
// (mode 000, for a server that is not root) no longer cuts the tree
// download at that file, which left the client a truncated archive and
// nothing of the files after it. It is left out, nothing of it written,
// the rest of the tree follows, the archive ends properly, and its last
// member, a PAX global header, names every file left out with
// permission_denied, so the tree is never taken for whole.
func TestWriteTreeSkipsUnreadableNonRoot(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "a\n", "locked.txt": "secret\n", "sub/b.txt": "b\n", "sub/locked": "x\n", "z.txt": "z\n"}
	for _, tc := range []struct {
		name      string
		locked    []string
		wantFiles map[string]string
		wantSkips []string
	}{
		{"none unreadable", nil, files, nil},
		{"one unreadable", []string{"locked.txt"},
			map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", "sub/locked": "x\n", "z.txt": "z\n"}, []string{"locked.txt"}},
		{"two, one in a subdirectory", []string{"locked.txt", "sub/locked"},
			map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", "z.txt": "z\n"}, []string{"locked.txt", "sub/locked"}},
		{"all unreadable", []string{"a.txt", "locked.txt", "sub/b.txt", "sub/locked", "z.txt"},
			map[string]string{}, []string{"a.txt", "locked.txt", "sub/b.txt", "sub/locked", "z.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dirs := testenv.NobodyDirs()
			if !testenv.InNobodyChild(t) {
				dirs = []string{t.TempDir(), t.TempDir()}
				testenv.WriteTree(t, filepath.Join(dirs[0], "t"), files)
				for _, l := range tc.locked {
					if err := os.Chmod(filepath.Join(dirs[0], "t", l), 0); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !asNonRoot(t, dirs...) {
				return
			}
			ws, err := workspace.Open(workspace.Options{Roots: []string{dirs[0]}, StateDir: dirs[1]})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.Close() })
			var b bytes.Buffer
			n, err := WriteTree(&b, ws, filepath.Join(dirs[0], "t"))
			if err != nil {
				t.Fatalf("WriteTree: %v (%d bytes written)", err, n)
			}
			got := listArchive(t, b.Bytes())
			if diff := cmp.Diff(tc.wantFiles, got.files); diff != "" {
				t.Errorf("files archived (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]byte{"sub/": tar.TypeDir}, got.others); diff != "" {
				t.Errorf("other members (-want +got):\n%s", diff)
			}
			var paths []string
			for _, s := range got.skipped {
				paths = append(paths, s.Path)
				if s.Code != "permission_denied" || s.Message != "permission denied" {
					t.Errorf("skipped %+v, want code permission_denied, message \"permission denied\" (no server path)", s)
				}
			}
			if diff := cmp.Diff(tc.wantSkips, paths); diff != "" {
				t.Errorf("skipped paths noted (-want +got):\n%s", diff)
			}
			wantCount := ""
			if len(tc.wantSkips) > 0 {
				wantCount = strconv.Itoa(len(tc.wantSkips))
			}
			if got.count != wantCount {
				t.Errorf("FSPLANE.skipped.count %q, want %q", got.count, wantCount)
			}
		})
	}
}

// TestWriteTreeSkipsUnlistableDirNonRoot: a directory the server may not
// list or search no longer cuts the tree download there. Its header is
// archived, as GNU tar archives it, without what it holds; the rest of
// the tree follows, and the note names the directory with
// permission_denied. A tree whose top cannot be listed is still refused
// whole, with nothing written.
func TestWriteTreeSkipsUnlistableDirNonRoot(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", "sub/deep/c.txt": "c\n", "z.txt": "z\n"}
	for _, tc := range []struct {
		name string
		dir  string // made unlistable
		mode os.FileMode
		ok   bool
	}{
		{"neither readable nor searchable", "sub", 0, true},
		{"readable, not searchable", "sub", 0o400, true},
		{"searchable, not readable", "sub", 0o100, true},
		{"the top itself", ".", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dirs := testenv.NobodyDirs()
			if !testenv.InNobodyChild(t) {
				dirs = []string{t.TempDir(), t.TempDir()}
				testenv.WriteTree(t, filepath.Join(dirs[0], "t"), files)
			}
			if !asNonRoot(t, dirs...) {
				return
			}
			// Made unlistable by the process that lists it: asNonRoot
			// hands the tree over to nobody with its modes.
			if err := os.Chmod(filepath.Join(dirs[0], "t", tc.dir), tc.mode); err != nil {
				t.Fatal(err)
			}
			defer os.Chmod(filepath.Join(dirs[0], "t", tc.dir), 0o755)
			ws, err := workspace.Open(workspace.Options{Roots: []string{dirs[0]}, StateDir: dirs[1]})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.Close() })
			var b bytes.Buffer
			n, err := WriteTree(&b, ws, filepath.Join(dirs[0], "t"))
			if !tc.ok {
				if err == nil || n != 0 {
					t.Fatalf("WriteTree of an unlistable top: %v, %d bytes written; want an error and nothing written", err, n)
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteTree: %v (%d bytes written)", err, n)
			}
			got := listArchive(t, b.Bytes())
			if diff := cmp.Diff(map[string]string{"a.txt": "a\n", "z.txt": "z\n"}, got.files); diff != "" {
				t.Errorf("files archived (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]byte{"sub/": tar.TypeDir}, got.others); diff != "" {
				t.Errorf("other members (-want +got):\n%s", diff)
			}
			if len(got.skipped) != 1 || got.skipped[0].Path != "sub" || got.skipped[0].Code != "permission_denied" || got.count != "1" {
				t.Errorf("note: count %q, %+v; want sub, permission_denied, once", got.count, got.skipped)
			}
		})
	}
}
