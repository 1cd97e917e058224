package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

// TestUndoInterruptedBeforeDrop: an undo killed after restoring the file
// but before dropping its record (the "undone" crash point) leaves the
// record behind. The next Undo finds the file already as the record
// would restore it: it drops the record and reports the undo done
// (AlreadyUndone), and the file's older history stays reachable. A file
// changed after the crash, in content or mode, is still a conflict.
func TestUndoInterruptedBeforeDrop(t *testing.T) {
	t.Parallel()
	v := func(s string) string { return Version([]byte(s)) }
	tests := []struct {
		name    string
		history func(t *testing.T, w *Workspace)
		undo    string // the path undone
		after   func(t *testing.T, root string)
		// want is the first Undo after the crash; wantCode, when set,
		// is its error instead.
		want     UndoResult
		wantCode fserr.Code
		// files are the root's files after it ("" absent).
		files map[string]string
		// next is the content of undo after one more Undo ("" absent);
		// nextCode its error instead.
		next     string
		nextCode fserr.Code
	}{
		{
			name: "edit",
			history: func(t *testing.T, w *Workspace) {
				commit(t, w, "write", Change{Path: "f.txt", Content: []byte("v1")})
				commit(t, w, "edit", Change{Path: "f.txt", Content: []byte("v2")})
				commit(t, w, "edit", Change{Path: "f.txt", Content: []byte("v3")})
			},
			undo:  "f.txt",
			want:  UndoResult{Op: "edit", Restored: true, Version: v("v2"), AlreadyUndone: true},
			files: map[string]string{"f.txt": "v2"},
			next:  "v1",
		},
		{
			name: "create",
			history: func(t *testing.T, w *Workspace) {
				commit(t, w, "write", Change{Path: "f.txt", Content: []byte("v1")})
			},
			undo:     "f.txt",
			want:     UndoResult{Op: "write", Deleted: true, AlreadyUndone: true},
			files:    map[string]string{"f.txt": ""},
			nextCode: fserr.BadRequest, // no history left
		},
		{
			name: "delete",
			history: func(t *testing.T, w *Workspace) {
				commit(t, w, "write", Change{Path: "f.txt", Content: []byte("v1")})
				commit(t, w, "delete", Change{Path: "f.txt", Delete: true})
			},
			undo:  "f.txt",
			want:  UndoResult{Op: "delete", Restored: true, Version: v("v1"), AlreadyUndone: true},
			files: map[string]string{"f.txt": "v1"},
			next:  "",
		},
		{
			name: "move",
			history: func(t *testing.T, w *Workspace) {
				commit(t, w, "write", Change{Path: "a.txt", Content: []byte("a")})
				commit(t, w, "write", Change{Path: "b.txt", Content: []byte("b")})
				if _, err := w.Move("a.txt", "b.txt", true, ""); err != nil {
					t.Fatal(err)
				}
			},
			undo: "b.txt",
			want: UndoResult{Op: "move", Restored: true, Version: v("b"), AlreadyUndone: true,
				Also: []UndoResult{{Op: "move", Restored: true, Version: v("a"), AlreadyUndone: true}}},
			files: map[string]string{"a.txt": "a", "b.txt": "b"},
			next:  "",
		},
		{
			name: "changed after the crash",
			history: func(t *testing.T, w *Workspace) {
				commit(t, w, "write", Change{Path: "f.txt", Content: []byte("v1")})
				commit(t, w, "edit", Change{Path: "f.txt", Content: []byte("v2")})
			},
			undo:     "f.txt",
			after:    func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "f.txt"), "other", 0o644) },
			wantCode: fserr.Conflict,
			files:    map[string]string{"f.txt": "other"},
		},
		{
			name: "mode changed after the crash",
			history: func(t *testing.T, w *Workspace) {
				commit(t, w, "write", Change{Path: "f.txt", Content: []byte("v1")})
				commit(t, w, "edit", Change{Path: "f.txt", Content: []byte("v2")})
			},
			undo: "f.txt",
			after: func(t *testing.T, root string) {
				if err := os.Chmod(filepath.Join(root, "f.txt"), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			wantCode: fserr.Conflict,
			files:    map[string]string{"f.txt": "v1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), t.TempDir()
			opts := Options{Roots: []string{root}, StateDir: state}
			w := openTestWorkspace(t, opts)
			tt.history(t, w)
			w.hooks.crashAt = func(step string) bool { return step == "undone" }
			if _, err := w.Undo(tt.undo); !errors.Is(err, errCrashed) {
				t.Fatalf("Undo = %v, want the simulated crash", err)
			}
			if tt.after != nil {
				tt.after(t, root)
			}
			w2 := openTestWorkspace(t, opts) // the restarted process
			got, err := w2.Undo(tt.undo)
			if tt.wantCode != "" {
				wantCode(t, err, tt.wantCode)
			} else {
				if err != nil {
					t.Fatalf("Undo after the crash: %v", err)
				}
				tt.want.Path = got.Path
				for i := range tt.want.Also {
					if i < len(got.Also) {
						tt.want.Also[i].Path = got.Also[i].Path
					}
				}
				if diff := cmp.Diff(&tt.want, got); diff != "" {
					t.Errorf("Undo after the crash (-want +got):\n%s", diff)
				}
			}
			for name, want := range tt.files {
				b, err := os.ReadFile(filepath.Join(root, name))
				if want == "" && !isNotExist(err) || want != "" && string(b) != want {
					t.Errorf("%s: %q, %v; want %q", name, b, err, want)
				}
			}
			if tt.wantCode != "" {
				return
			}
			_, err = w2.Undo(tt.undo)
			if tt.nextCode != "" {
				wantCode(t, err, tt.nextCode)
				return
			}
			if err != nil {
				t.Fatalf("the older history: %v", err)
			}
			b, err := os.ReadFile(filepath.Join(root, tt.undo))
			if tt.next == "" && !isNotExist(err) || tt.next != "" && string(b) != tt.next {
				t.Errorf("after the next Undo %s: %q, %v; want %q", tt.undo, b, err, tt.next)
			}
			assertNoStrays(t, root)
		})
	}
}
