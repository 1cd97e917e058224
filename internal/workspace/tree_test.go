package workspace

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

// The merge these tests make, into root/m: x.txt replaced (it was 0600),
// l2 (a link) replaced by a file, z.txt and sub/w.txt added, the link l
// added, empty/ created; keep.txt untouched. Its transaction is, in
// order: the new directories (empty, sub), l, l2, sub/w.txt, x.txt,
// z.txt. Four files are recorded in undo: all but the link l.
func mergeFixture(root string) error {
	m := filepath.Join(root, "m")
	if err := os.Mkdir(m, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(m, "x.txt"), []byte("old1"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(m, "keep.txt"), []byte("keep"), 0o644); err != nil {
		return err
	}
	return os.Symlink("keep.txt", filepath.Join(m, "l2"))
}

func mergeTree(w *Workspace) (TreeResult, error) {
	tw, err := w.CreateTree("m", nil)
	if err != nil {
		return TreeResult{}, err
	}
	defer tw.Abort()
	for name, content := range map[string]string{"x.txt": "new1", "z.txt": "new z", "sub/w.txt": "new w", "l2": "was a link"} {
		if _, err := tw.File(name, 0o644, strings.NewReader(content)); err != nil {
			return TreeResult{}, err
		}
	}
	if err := tw.Dir("empty", 0o755); err != nil {
		return TreeResult{}, err
	}
	if err := tw.Symlink("l", "x.txt"); err != nil {
		return TreeResult{}, err
	}
	return tw.Commit()
}

// mergeStates returns the snapshots of m before and after the merge.
func mergeStates(t *testing.T) (before, after map[string]string) {
	t.Helper()
	root := t.TempDir()
	if err := mergeFixture(root); err != nil {
		t.Fatal(err)
	}
	before = snapshot(t, filepath.Join(root, "m"))
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	if _, err := mergeTree(w); err != nil {
		t.Fatal(err)
	}
	return before, snapshot(t, filepath.Join(root, "m"))
}

// TestTreeMergeUndo: a merge records each file it replaces or adds, and
// Undo reverts it: the replaced file (or link) comes back, an added one
// goes. It used to be recorded nowhere: undo refused, and the old
// content was lost.
func TestTreeMergeUndo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path    string
		want    string // snapshot entry after the undo; "" absent
		deleted bool
	}{
		{path: "m/x.txt", want: "-rw------- old1"},
		{path: "m/l2", want: "link->keep.txt"},
		{path: "m/z.txt", deleted: true},
		{path: "m/sub/w.txt", deleted: true},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if err := mergeFixture(root); err != nil {
				t.Fatal(err)
			}
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
			res, err := mergeTree(w)
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode != TreeMerge || res.UndoRecorded != 4 {
				t.Errorf("merge: mode %s, %d undo records; want merge, 4", res.Mode, res.UndoRecorded)
			}
			u, err := w.Undo(tc.path)
			if err != nil {
				t.Fatalf("Undo(%s): %v", tc.path, err)
			}
			if u.Op != "tree" || u.Deleted != tc.deleted {
				t.Errorf("Undo(%s) = %+v", tc.path, u)
			}
			rel := strings.TrimPrefix(tc.path, "m/")
			if got := snapshot(t, filepath.Join(root, "m"))[rel]; got != tc.want {
				t.Errorf("%s after undo: %q, want %q", tc.path, got, tc.want)
			}
			assertNoStrays(t, root)
		})
	}
}

// TestTreeMergeUndoLimits: a merge records what the undo journal can
// keep, the first files in path order, and says how many; the merge
// itself is whole either way.
func TestTreeMergeUndoLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		limits   UndoLimits
		recorded int
		undoable []string
	}{
		{name: "entries", limits: UndoLimits{MaxEntries: 2}, recorded: 2, undoable: []string{"m/l2", "m/sub/w.txt"}},
		// "old1" and the link's target are larger: only the added files.
		{name: "bytes", limits: UndoLimits{TotalBytes: 3}, recorded: 2, undoable: []string{"m/sub/w.txt", "m/z.txt"}},
	}
	_, after := mergeStates(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if err := mergeFixture(root); err != nil {
				t.Fatal(err)
			}
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir(), Undo: tc.limits})
			res, err := mergeTree(w)
			if err != nil {
				t.Fatal(err)
			}
			if res.UndoRecorded != tc.recorded {
				t.Errorf("%d undo records, want %d", res.UndoRecorded, tc.recorded)
			}
			if diff := cmp.Diff(after, snapshot(t, filepath.Join(root, "m"))); diff != "" {
				t.Errorf("merged (-want +got):\n%s", diff)
			}
			for _, p := range []string{"m/l2", "m/sub/w.txt", "m/x.txt", "m/z.txt"} {
				h, err := w.UndoHistory(p)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := len(h) == 1, strings.Contains(strings.Join(tc.undoable, " "), p); got != want {
					t.Errorf("%s recorded: %v, want %v", p, got, want)
				}
			}
		})
	}
}

// TestTreeMergeFailureRollsBack: a merge that fails partway through its
// renames puts back what it had done: all old, nothing recorded, nothing
// left behind.
func TestTreeMergeFailureRollsBack(t *testing.T) {
	t.Parallel()
	for _, at := range []int{1, 3, 5} {
		t.Run("apply/"+strconv.Itoa(at), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if err := mergeFixture(root); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, filepath.Join(root, "m"))
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
			w.hooks.beforeApply = func(i int) error {
				if i == at {
					return syscall.EIO
				}
				return nil
			}
			_, err := mergeTree(w)
			wantCode(t, err, fserr.IOError)
			if diff := cmp.Diff(before, snapshot(t, filepath.Join(root, "m"))); diff != "" {
				t.Errorf("after the failed merge (-want +got):\n%s", diff)
			}
			if n := w.journal.len(); n != 0 {
				t.Errorf("%d undo records of a failed merge", n)
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
		})
	}
}

const treeChildEnv = "FSPLANE_WORKSPACE_TREE_CHILD" // the step to be killed at

// treeChild makes the merge of mergeTree into $R1/m (state $RSTATE) and
// blocks, to be killed, at the step of its transaction $treeChildEnv
// names (see testHooks.crashAt).
func treeChild() {
	w, err := Open(Options{Roots: []string{os.Getenv("R1")}, StateDir: os.Getenv("RSTATE")})
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		return
	}
	step := os.Getenv(treeChildEnv)
	w.hooks.crashAt = func(s string) bool {
		if s == step {
			os.Stdout.WriteString("ready\n")
			select {}
		}
		return false
	}
	_, err = mergeTree(w)
	os.Stdout.WriteString("error not blocked: " + errString(err) + "\n")
}

// TestTreeMergeKilled kills (SIGKILL) a process merging a tree at each
// step of the merge's transaction; the next Open leaves all old files
// before the commit point and all new ones after it, and no staged entry,
// backup or manifest. A merge used to rename file after file: killed
// midway, some files were new and the rest old.
func TestTreeMergeKilled(t *testing.T) {
	t.Parallel()
	before, after := mergeStates(t)
	steps := []struct {
		step  string
		after bool
	}{
		{"manifest", false},
		{"prepare/0", false}, {"prepare/2", false}, {"prepare/5", false},
		{"apply/0", false}, {"apply/1", false}, {"apply/4", false}, {"apply/5", false},
		{"synced", false},
		{"committed", true},
	}
	for _, s := range steps {
		t.Run(s.step, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), t.TempDir()
			if err := mergeFixture(root); err != nil {
				t.Fatal(err)
			}
			cmd := startChild(t, treeChildEnv+"="+s.step, "R1="+root, "RSTATE="+state)
			_ = cmd.Process.Signal(syscall.SIGKILL)
			if err := cmd.Wait(); err == nil || !errors.As(err, new(*exec.ExitError)) {
				t.Fatalf("child: %v", err)
			}
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			want := before
			if s.after {
				want = after
			}
			if diff := cmp.Diff(want, snapshot(t, filepath.Join(root, "m"))); diff != "" {
				t.Errorf("after recovery (-want +got):\n%s", diff)
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
		})
	}
}

// TestTreeMergeRefusalsSayWhatToDo: a merge that would replace a file by a
// directory, or a directory by a file, and a hard link to no earlier
// file, are refused with a hint naming the way out; nothing changes.
func TestTreeMergeRefusalsSayWhatToDo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		add  func(tw *TreeWriter) error
		code fserr.Code
		hint string
	}{
		{"directory over a file", func(tw *TreeWriter) error { return tw.Dir("x.txt", 0o755) }, fserr.InvalidTarget, "never replaces a file by a directory"},
		{"file over a directory", func(tw *TreeWriter) error {
			_, err := tw.File("d", 0o644, strings.NewReader("f"))
			return err
		}, fserr.InvalidTarget, "never replaces a directory by a file"},
		{"hard link to nothing earlier", func(tw *TreeWriter) error { return tw.Link("h", "later.txt") }, fserr.BadRequest, "after the file it links to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if err := mergeFixture(root); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(root, "m", "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, filepath.Join(root, "m"))
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
			tw, err := w.CreateTree("m", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tw.Abort()
			err = tc.add(tw)
			if err == nil {
				_, err = tw.Commit()
			}
			wantCode(t, err, tc.code)
			var fe *fserr.Error
			if !errors.As(err, &fe) || !strings.Contains(fe.Hint, tc.hint) {
				t.Errorf("%v: hint %q, want it to say %q", err, fe.Hint, tc.hint)
			}
			tw.Abort()
			if diff := cmp.Diff(before, snapshot(t, filepath.Join(root, "m"))); diff != "" {
				t.Errorf("after the refusal (-want +got):\n%s", diff)
			}
			assertNoStrays(t, root)
		})
	}
}
