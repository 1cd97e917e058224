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

// TestTreeMergeRecordsEveryFile: a merge of a few hundred files records
// each of them, and the first one's undo works (records written before
// the transaction are not taken for a crash's leftovers).
func TestTreeMergeRecordsEveryFile(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	const n = 306
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
		t.Fatalf("Undo of the first file: %v", err)
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
		if e.hasBlob() {
			want = append(want, filepath.Base(blobName(e.Seq)))
		}
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, names, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("blobs (-want +got):\n%s", diff)
	}
}

// TestUndoEvictsOnlyWhenMade: the limits evict older records when a change
// is made, not when its record is written, so a change that fails, or
// that a crash stops before it is made, costs no history.
func TestUndoEvictsOnlyWhenMade(t *testing.T) {
	t.Parallel()
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			opts := Options{Roots: []string{root}, StateDir: t.TempDir(), Undo: UndoLimits{PerFile: 2}}
			w := openTestWorkspace(t, opts)
			for _, v := range []string{"v1", "v2"} {
				if err := write("f.txt", v)(w); err != nil {
					t.Fatal(err)
				}
			}
			if crash {
				w.hooks.crashAt = func(s string) bool { return s == "undo-pending" }
			} else {
				w.hooks.beforeApply = func(int) error { return errors.New("injected: disk full") }
			}
			if err := editAs("f.txt", "v3")(w); err == nil {
				t.Fatal("the change succeeded; want it to fail")
			}
			w.hooks = testHooks{}
			if crash {
				w = openTestWorkspace(t, opts)
			}
			checkFiles(t, root, map[string]string{"f.txt": "v2"})
			hist, err := w.UndoHistory("f.txt")
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) != 2 {
				t.Errorf("history has %d entries after a change that was not made, want 2", len(hist))
			}
			checkBlobs(t, w)
		})
	}
}

// TestSettleWaitsForBlockedTransaction: the pending record of a file of a
// transaction that this workspace cannot recover (it touched a root it
// lacks) is not judged from the half-applied file; the workspace that
// rolls the transaction back drops it.
func TestSettleWaitsForBlockedTransaction(t *testing.T) {
	t.Parallel()
	r1, r2, state := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(r1, "f.txt"), "v1", 0o644)
	a := openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: state})
	a.hooks.crashAt = func(s string) bool { return s == "apply/0" }
	_, err := a.Commit([]Change{{Path: filepath.Join(r1, "f.txt"), Content: []byte("v2")}, {Path: filepath.Join(r2, "g.txt"), Content: []byte("g")}}, CommitOptions{Op: "edit"})
	if !errors.Is(err, errCrashed) {
		t.Fatalf("commit = %v, want the simulated crash", err)
	}
	b := openTestWorkspace(t, Options{Roots: []string{r1}, StateDir: state})
	if b.blocked == nil {
		t.Fatal("the transaction is not blocked in the workspace without its second root")
	}
	if n := len(b.journal.pending); n != 2 {
		t.Errorf("%d entries pending in the workspace that cannot recover the transaction, want its 2", n)
	}
	a2 := openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: state})
	checkFiles(t, r1, map[string]string{"f.txt": "v1"})
	hist, err := a2.UndoHistory(filepath.Join(r1, "f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 0 {
		t.Errorf("history of a rolled-back change: %d entries, want 0", len(hist))
	}
}

// TestSettleJudgesALinkItself: the record of a link's removal is judged on
// the link, not on the file it points to: a removal a crash stopped
// before it was made leaves no record (which would let Undo re-create the
// link after a person removed it).
func TestSettleJudgesALinkItself(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	opts := Options{Roots: []string{root}, StateDir: t.TempDir()}
	writeFile(t, filepath.Join(root, "real.txt"), "keep", 0o644)
	if err := os.Symlink("real.txt", filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	w := openTestWorkspace(t, opts)
	w.hooks.crashAt = func(s string) bool { return s == "undo-pending" }
	if _, err := w.Commit([]Change{{Path: "alias", Delete: true, Entry: true}}, CommitOptions{Op: "remove"}); !errors.Is(err, errCrashed) {
		t.Fatalf("remove = %v, want the simulated crash", err)
	}
	w2 := openTestWorkspace(t, opts)
	if n := w2.journal.len(); n != 0 {
		t.Errorf("%d live entries for a change never made, want 0", n)
	}
	if err := os.Remove(filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	if res, err := w2.Undo("alias"); err == nil {
		t.Errorf("Undo re-created a link a person removed: %+v", res)
	}
}

// TestFailureAfterTheChangeKeepsItsRecord: a change that failed after it
// was made (its directory fsync) keeps its undo record: finishUndo judges
// the file rather than dropping the record of a change that happened.
func TestFailureAfterTheChangeKeepsItsRecord(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	if err := write("f.txt", "v1")(w); err != nil {
		t.Fatal(err)
	}
	err := w.locked("edit", "f.txt", func() error {
		pl, err := w.plan("edit", []*request{{Change: Change{Path: "f.txt", Content: []byte("v2")}}}, true)
		defer pl.close()
		if err != nil {
			return err
		}
		_, err = w.executeRecorded("edit", "", pl, func() error {
			if err := w.execute("edit", "", pl); err != nil {
				return err
			}
			return errors.New("injected: the directory fsync failed")
		})
		return err
	})
	if err == nil || errors.Is(err, errCrashed) {
		t.Fatalf("the change = %v, want the injected failure", err)
	}
	if n := len(w.journal.pending); n != 0 {
		t.Errorf("%d entries still pending", n)
	}
	if _, err := w.Undo("f.txt"); err != nil {
		t.Fatalf("Undo: %v", err)
	}
	checkFiles(t, root, map[string]string{"f.txt": "v1"})
}

// TestSettleMoveAcrossKilledBeforeSourceRemoval: a move to another root
// (a copy, then the source's removal) killed in between leaves both
// files; the move did not happen, so both its records go, rather than the
// destination's alone staying to make Undo claim the source is gone.
func TestSettleMoveAcrossKilledBeforeSourceRemoval(t *testing.T) {
	t.Parallel()
	r1, r2 := t.TempDir(), t.TempDir()
	opts := Options{Roots: []string{r1, r2}, StateDir: t.TempDir()}
	writeFile(t, filepath.Join(r1, "a.txt"), "a", 0o644)
	w := openTestWorkspace(t, opts)
	w.hooks.crashAt = func(s string) bool { return s == "move-installed" }
	if _, err := w.Move(filepath.Join(r1, "a.txt"), filepath.Join(r2, "b.txt"), false, ""); !errors.Is(err, errCrashed) {
		t.Fatalf("move = %v, want the simulated crash", err)
	}
	w2 := openTestWorkspace(t, opts)
	checkFiles(t, r1, map[string]string{"a.txt": "a"})
	checkFiles(t, r2, map[string]string{"b.txt": "a"})
	if n := w2.journal.len(); n != 0 {
		t.Errorf("%d live entries for a move that did not happen, want 0", n)
	}
	checkBlobs(t, w2)
}

// TestSettleTransactionTogether: a file whose new content equals its old
// looks both as before and as after its change; when a crash stopped the
// change it belonged to (a merge rolled back, a move not made), its record
// goes with the others of that change instead of staying as a phantom —
// which, for a move, would block the file's older history.
func TestSettleTransactionTogether(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(w *Workspace) error
		crash  string
	}{
		{"merge rolled back", func(w *Workspace) error {
			tw, err := w.CreateTree("m", nil)
			if err != nil {
				return err
			}
			defer tw.Abort()
			for name, content := range map[string]string{"a.txt": "new", "same.txt": "same"} {
				if _, err := tw.File(name, 0o644, strings.NewReader(content)); err != nil {
					return err
				}
			}
			_, err = tw.Commit()
			return err
		}, "apply/0"},
		{"move not made", func(w *Workspace) error {
			_, err := w.Move("m/a.txt", "m/same.txt", true, "")
			return err
		}, "undo-pending"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			opts := Options{Roots: []string{root}, StateDir: t.TempDir()}
			w := openTestWorkspace(t, opts)
			for _, c := range []struct{ name, content string }{{"m/a.txt", "same"}, {"m/same.txt", "v0"}, {"m/same.txt", "same"}} {
				if err := write(c.name, c.content)(w); err != nil {
					t.Fatal(err)
				}
			}
			w.hooks.crashAt = func(s string) bool { return s == tt.crash }
			if err := tt.change(w); !errors.Is(err, errCrashed) {
				t.Fatalf("change = %v, want the simulated crash", err)
			}
			w2 := openTestWorkspace(t, opts)
			checkFiles(t, root, map[string]string{"m/a.txt": "same", "m/same.txt": "same"})
			hist, err := w2.UndoHistory("m/same.txt")
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) != 2 {
				t.Fatalf("history of m/same.txt has %d entries (%+v), want its 2 writes", len(hist), hist)
			}
			if _, err := w2.Undo("m/same.txt"); err != nil {
				t.Fatalf("Undo of the older history: %v", err)
			}
			checkFiles(t, root, map[string]string{"m/same.txt": "v0"})
		})
	}
}

// TestLargeCommitGroupsWhole: the records of one commit are one set, however
// many files it has: a group (a move's two sides) whose files lie far apart
// in the plan records its whole size on each side, which is what keeps
// Undo from undoing one side alone. Records made in batches of 256 gave
// each side GroupSize 1.
func TestLargeCommitGroupsWhole(t *testing.T) {
	t.Parallel()
	w, _ := newTestWorkspace(t)
	var changes []Change
	for i := range 300 {
		c := Change{Path: fmt.Sprintf("f%03d.txt", i), Content: []byte("x")}
		if i == 0 || i == 299 {
			c.Group = "pair"
		}
		changes = append(changes, c)
	}
	if _, err := w.Commit(changes, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"f000.txt", "f299.txt"} {
		res, err := w.resolve("test", name)
		if err != nil {
			t.Fatal(err)
		}
		e := w.journal.newest(res.canonKey)
		if e == nil || e.GroupSize != 2 {
			t.Errorf("%s: record %+v, want GroupSize 2", name, e)
		}
	}
}
