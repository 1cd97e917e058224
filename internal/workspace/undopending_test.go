package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestUndoRecordedBeforeTheChange: a process killed right after a change
// and before anything else (the "undo-unconfirmed" crash point) used to
// leave the change with no undo record, its old content gone with the
// process's memory. The record is now written, pending, before the
// change: the next process confirms it from the file and Undo works. A
// process killed before the change was made ("undo-pending", or inside a
// transaction that recovery rolls back) leaves a record of a change that
// never happened: it is dropped, with its blob, and the history shows
// only what happened.
func TestUndoRecordedBeforeTheChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before map[string]string // files written (and recorded) first
		change func(w *Workspace) error
		crash  string
		// after: the root's files once reopened ("" absent); history:
		// the ops UndoHistory lists for path, newest first; undone: the
		// files after one Undo of path.
		path    string
		after   map[string]string
		history []string
		undone  map[string]string
	}{
		{
			name:   "replace",
			before: map[string]string{"f.txt": "v1"},
			change: editAs("f.txt", "v2"), crash: "undo-unconfirmed",
			path: "f.txt", after: map[string]string{"f.txt": "v2"}, history: []string{"edit", "write"},
			undone: map[string]string{"f.txt": "v1"},
		},
		{
			name:   "create",
			change: editAs("g.txt", "new"), crash: "undo-unconfirmed",
			path: "g.txt", after: map[string]string{"g.txt": "new"}, history: []string{"edit"},
			undone: map[string]string{"g.txt": ""},
		},
		{
			name:   "delete",
			before: map[string]string{"f.txt": "v1"},
			change: func(w *Workspace) error {
				_, err := w.Commit([]Change{{Path: "f.txt", Delete: true}}, CommitOptions{Op: "edit"})
				return err
			},
			crash: "undo-unconfirmed",
			path:  "f.txt", after: map[string]string{"f.txt": ""}, history: []string{"edit", "write"},
			undone: map[string]string{"f.txt": "v1"},
		},
		{
			name:   "transaction",
			before: map[string]string{"f.txt": "v1"},
			change: func(w *Workspace) error {
				_, err := w.Commit([]Change{{Path: "f.txt", Content: []byte("v2")}, {Path: "d/g.txt", Content: []byte("g")}}, CommitOptions{Op: "edit"})
				return err
			},
			crash: "undo-unconfirmed",
			path:  "f.txt", after: map[string]string{"f.txt": "v2", "d/g.txt": "g"}, history: []string{"edit", "write"},
			undone: map[string]string{"f.txt": "v1", "d/g.txt": "g"},
		},
		{
			name:   "move",
			before: map[string]string{"a.txt": "a", "b.txt": "b"},
			change: func(w *Workspace) error {
				_, err := w.Move("a.txt", "b.txt", true, "")
				return err
			},
			crash: "undo-unconfirmed",
			path:  "b.txt", after: map[string]string{"a.txt": "", "b.txt": "a"}, history: []string{"move", "write"},
			undone: map[string]string{"a.txt": "a", "b.txt": "b"},
		},
		{
			name:   "not made",
			before: map[string]string{"f.txt": "v1"},
			change: editAs("f.txt", "v2"), crash: "undo-pending",
			path: "f.txt", after: map[string]string{"f.txt": "v1"}, history: []string{"write"},
			undone: map[string]string{"f.txt": ""},
		},
		{
			name:   "rolled back",
			before: map[string]string{"f.txt": "v1"},
			change: func(w *Workspace) error {
				_, err := w.Commit([]Change{{Path: "f.txt", Content: []byte("v2")}, {Path: "g.txt", Content: []byte("g")}}, CommitOptions{Op: "edit"})
				return err
			},
			crash: "apply/1",
			path:  "f.txt", after: map[string]string{"f.txt": "v1", "g.txt": ""}, history: []string{"write"},
			undone: map[string]string{"f.txt": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			opts := Options{Roots: []string{root}, StateDir: t.TempDir()}
			w := openTestWorkspace(t, opts)
			for name, content := range tt.before {
				if err := write(name, content)(w); err != nil {
					t.Fatal(err)
				}
			}
			w.hooks.crashAt = func(step string) bool { return step == tt.crash }
			if err := tt.change(w); !errors.Is(err, errCrashed) {
				t.Fatalf("change = %v, want the simulated crash", err)
			}
			w2 := openTestWorkspace(t, opts) // the restarted process
			checkFiles(t, root, tt.after)
			if n := len(w2.journal.pending); n != 0 {
				t.Errorf("%d entries still pending after Open", n)
			}
			checkBlobs(t, w2)
			hist, err := w2.UndoHistory(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			var ops []string
			for _, e := range hist {
				ops = append(ops, e.Op)
			}
			if diff := cmp.Diff(tt.history, ops); diff != "" {
				t.Errorf("history of %s (-want +got):\n%s", tt.path, diff)
			}
			got, err := w2.Undo(tt.path)
			if err != nil {
				t.Fatalf("Undo: %v", err)
			}
			if got.AlreadyUndone {
				t.Errorf("Undo reported already undone: it undid the crashed change's phantom")
			}
			checkFiles(t, root, tt.undone)
			assertNoStrays(t, root)
		})
	}
}

// TestUndoPendingOutsideRoots: a pending entry of a file this workspace
// cannot see (another process's root, same state directory) stays pending
// and live, and the workspace that can see it settles it.
func TestUndoPendingOutsideRoots(t *testing.T) {
	t.Parallel()
	rootA, rootB, state := t.TempDir(), t.TempDir(), t.TempDir()
	a := openTestWorkspace(t, Options{Roots: []string{rootA}, StateDir: state})
	if err := write("f.txt", "v1")(a); err != nil {
		t.Fatal(err)
	}
	a.hooks.crashAt = func(step string) bool { return step == "undo-unconfirmed" }
	if err := write("f.txt", "v2")(a); !errors.Is(err, errCrashed) {
		t.Fatalf("write = %v, want the simulated crash", err)
	}
	b := openTestWorkspace(t, Options{Roots: []string{rootB}, StateDir: state})
	if err := write("other.txt", "x")(b); err != nil {
		t.Fatal(err)
	}
	if n := len(b.journal.pending); n != 1 {
		t.Errorf("%d entries pending in the workspace that cannot see f.txt, want 1", n)
	}
	a2 := openTestWorkspace(t, Options{Roots: []string{rootA}, StateDir: state})
	if n := len(a2.journal.pending); n != 0 {
		t.Errorf("%d entries pending in the workspace that sees f.txt, want 0", n)
	}
	if _, err := a2.Undo("f.txt"); err != nil {
		t.Fatal(err)
	}
	checkFiles(t, rootA, map[string]string{"f.txt": "v1"})
}

// TestTreeMergeRecordsEveryBatch: a merge records its undo entries in
// batches before its transaction; settling the journal for a later batch
// must not take an earlier batch of the same merge for a crash's leftover
// (its files are not changed yet) and drop it.
func TestTreeMergeRecordsEveryBatch(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	const n = undoBatch + 50
	if err := os.Mkdir(filepath.Join(root, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		writeFile(t, filepath.Join(root, "m", fmt.Sprintf("f%03d.txt", i)), "old", 0o644)
	}
	tw, err := w.CreateTree("m", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Abort()
	for i := range n {
		if _, err := tw.File(fmt.Sprintf("f%03d.txt", i), 0o644, strings.NewReader("new")); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tw.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if res.UndoRecorded != n {
		t.Errorf("%d undo records, want %d", res.UndoRecorded, n)
	}
	if _, err := w.Undo("m/f000.txt"); err != nil {
		t.Fatalf("Undo of the first batch's file: %v", err)
	}
	checkFiles(t, root, map[string]string{"m/f000.txt": "old", "m/f001.txt": "new"})
	if k := len(w.journal.pending); k != 0 {
		t.Errorf("%d entries still pending", k)
	}
}

// write and editAs commit content to name, recorded as op "write" and
// "edit".
func write(name, content string) func(w *Workspace) error  { return commitAs("write", name, content) }
func editAs(name, content string) func(w *Workspace) error { return commitAs("edit", name, content) }

func commitAs(op, name, content string) func(w *Workspace) error {
	return func(w *Workspace) error {
		_, err := w.Commit([]Change{{Path: name, Content: []byte(content)}}, CommitOptions{Op: op})
		return err
	}
}

// checkFiles checks root's files against want ("" absent).
func checkFiles(t *testing.T, root string, want map[string]string) {
	t.Helper()
	for name, w := range want {
		b, err := os.ReadFile(filepath.Join(root, name))
		if w == "" && !isNotExist(err) || w != "" && string(b) != w {
			t.Errorf("%s: %q, %v; want %q", name, b, err, w)
		}
	}
}

// checkBlobs checks that the blobs are exactly those of live entries that
// need one.
func checkBlobs(t *testing.T, w *Workspace) {
	t.Helper()
	names, err := sortedNames(w.journal.state, blobDir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for e := range w.journal.live() {
		if e.Existed {
			want = append(want, filepath.Base(blobName(e.Seq)))
		}
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, names, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("blobs (-want +got):\n%s", diff)
	}
}
