package workspace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestUndoRemovesTheDirectoriesACreateMade: undo of a change that created
// a file also removes the parent directories that change created, deepest
// first, while they are empty; never one that existed before the change,
// nor one that holds anything now.
func TestUndoRemovesTheDirectoriesACreateMade(t *testing.T) {
	t.Parallel()
	write := func(p string) func(t *testing.T, w *Workspace) {
		return func(t *testing.T, w *Workspace) {
			commit(t, w, "write", Change{Path: p, Content: []byte("new")})
		}
	}
	tests := []struct {
		name   string
		before func(t *testing.T, root string) // the tree before the change
		change func(t *testing.T, w *Workspace)
		undo   string
		after  func(t *testing.T, root string) // others' work after the change
		want   map[string]string               // snapshot after the undo
	}{
		{
			name:   "write into an empty root",
			change: write("a/b/c.txt"),
			undo:   "a/b/c.txt",
			want:   map[string]string{".": "dir"},
		},
		{
			name:   "a parent that existed stays",
			before: func(t *testing.T, root string) { mkdir(t, filepath.Join(root, "a")) },
			change: write("a/b/c.txt"),
			undo:   "a/b/c.txt",
			want:   map[string]string{".": "dir", "a": "dir"},
		},
		{
			name:   "a parent holding another's file stays",
			change: write("a/b/c.txt"),
			undo:   "a/b/c.txt",
			after:  func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "a/other.txt"), "x", 0o644) },
			want: map[string]string{".": "dir", "a": "dir",
				"a/other.txt": "-rw-r--r-- x"},
		},
		{
			name:   "a directory made inside it since keeps it",
			change: write("a/b/c.txt"),
			undo:   "a/b/c.txt",
			after:  func(t *testing.T, root string) { mkdir(t, filepath.Join(root, "a/b/d")) },
			want: map[string]string{".": "dir", "a": "dir",
				"a/b": "dir", "a/b/d": "dir"},
		},
		{
			name:   "a file already in place: no directory made",
			before: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "a/b/c.txt"), "old", 0o644) },
			change: write("a/b/c.txt"),
			undo:   "a/b/c.txt",
			want: map[string]string{".": "dir", "a": "dir",
				"a/b": "dir", "a/b/c.txt": "-rw-r--r-- old"},
		},
		{
			name:   "move",
			before: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "x.txt"), "x", 0o644) },
			change: func(t *testing.T, w *Workspace) {
				if _, err := w.Move("x.txt", "n/m/x.txt", false, ""); err != nil {
					t.Fatal(err)
				}
			},
			undo: "n/m/x.txt",
			want: map[string]string{".": "dir", "x.txt": "-rw-r--r-- x"},
		},
		{
			name:   "copy",
			before: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "x.txt"), "x", 0o644) },
			change: func(t *testing.T, w *Workspace) {
				if _, err := w.Copy("x.txt", "n/m/x.txt", false, nil); err != nil {
					t.Fatal(err)
				}
			},
			undo: "n/m/x.txt",
			want: map[string]string{".": "dir", "x.txt": "-rw-r--r-- x"},
		},
		{
			name:   "tree merge",
			before: func(t *testing.T, root string) { mkdir(t, filepath.Join(root, "d")) },
			change: func(t *testing.T, w *Workspace) {
				tw, err := w.CreateTree("d", nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tw.File("n/m/f.txt", 0o644, bytes.NewReader([]byte("f"))); err != nil {
					t.Fatal(err)
				}
				if _, err := tw.Commit(); err != nil {
					t.Fatal(err)
				}
			},
			undo: "d/n/m/f.txt",
			want: map[string]string{".": "dir", "d": "dir"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			if tt.before != nil {
				tt.before(t, root)
			}
			tt.change(t, w)
			if tt.after != nil {
				tt.after(t, root)
			}
			if _, err := w.Undo(tt.undo); err != nil {
				t.Fatalf("Undo: %v", err)
			}
			if diff := cmp.Diff(tt.want, shape(t, root)); diff != "" {
				t.Errorf("tree after the undo (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUndoRemovesOnlyTheDirectoriesItsChangeMade: of two creates in new
// directories, undoing the second leaves the directories the first made,
// and undoing the first then removes them.
func TestUndoRemovesOnlyTheDirectoriesItsChangeMade(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	commit(t, w, "write", Change{Path: "a/one.txt", Content: []byte("1")})
	commit(t, w, "write", Change{Path: "a/b/two.txt", Content: []byte("2")})
	if _, err := w.Undo("a/b/two.txt"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{".": "dir", "a": "dir", "a/one.txt": "-rw-r--r-- 1"}
	if diff := cmp.Diff(want, shape(t, root)); diff != "" {
		t.Errorf("after undoing two.txt (-want +got):\n%s", diff)
	}
	if _, err := w.Undo("a/one.txt"); err != nil {
		t.Fatal(err)
	}
	want = map[string]string{".": "dir"}
	if diff := cmp.Diff(want, shape(t, root)); diff != "" {
		t.Errorf("after undoing one.txt (-want +got):\n%s", diff)
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// shape is snapshot with directories' permissions left out: those
// fsplane makes depend on the process's umask.
func shape(t *testing.T, root string) map[string]string {
	t.Helper()
	out := snapshot(t, root)
	for k, v := range out {
		if strings.HasPrefix(v, "dir ") {
			out[k] = "dir"
		}
	}
	return out
}

// TestUndoDirsInterrupted: an undo of a create in new directories killed
// after deleting the file (before or after removing the directories, and
// before dropping the record) is finished by the next Undo, which finds
// the file already gone (AlreadyUndone) and removes the directories the
// create made that are still empty.
func TestUndoDirsInterrupted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		step  string
		after func(t *testing.T, root string) // between the crash and the restart
		want  map[string]string
	}{
		{step: "undone", want: map[string]string{".": "dir"}},
		{step: "undone-dirs", want: map[string]string{".": "dir"}},
		{
			step:  "undone",
			after: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "a/other.txt"), "x", 0o644) },
			want:  map[string]string{".": "dir", "a": "dir", "a/other.txt": "-rw-r--r-- x"},
		},
	}
	for _, tt := range tests {
		name := tt.step
		if tt.after != nil {
			name += " then another's file"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), t.TempDir()
			opts := Options{Roots: []string{root}, StateDir: state}
			w := openTestWorkspace(t, opts)
			commit(t, w, "write", Change{Path: "a/b/c.txt", Content: []byte("c")})
			w.hooks.crashAt = func(step string) bool { return step == tt.step }
			if _, err := w.Undo("a/b/c.txt"); !errors.Is(err, errCrashed) {
				t.Fatalf("Undo = %v, want the simulated crash", err)
			}
			if tt.after != nil {
				tt.after(t, root)
			}
			w2 := openTestWorkspace(t, opts) // the restarted process
			got, err := w2.Undo("a/b/c.txt")
			if err != nil {
				t.Fatalf("Undo after the crash: %v", err)
			}
			if !got.AlreadyUndone || !got.Deleted {
				t.Errorf("Undo after the crash = %+v, want AlreadyUndone and Deleted", got)
			}
			if diff := cmp.Diff(tt.want, shape(t, root)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			_, err = w2.Undo("a/b/c.txt")
			wantCode(t, err, fserr.BadRequest) // the record is gone
		})
	}
}
