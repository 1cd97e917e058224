package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

func commit(t *testing.T, w *Workspace, op string, changes ...Change) []FileResult {
	t.Helper()
	res, err := w.Commit(changes, CommitOptions{Op: op})
	if err != nil {
		t.Fatalf("Commit %s: %v", op, err)
	}
	return res
}

// TestUndo walks a file's history back: delete, edit, create.
func TestUndo(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	name := filepath.Join(root, "f.txt")
	commit(t, w, "write", Change{Path: "f.txt", Content: []byte("v1"), Mode: 0o600})
	commit(t, w, "edit", Change{Path: "f.txt", Content: []byte("v2")})
	commit(t, w, "delete", Change{Path: "f.txt", Delete: true})

	steps := []struct {
		want    UndoResult
		content string // "" = absent
	}{
		{UndoResult{Op: "delete", Restored: true, Version: Version([]byte("v2"))}, "v2"},
		{UndoResult{Op: "edit", Restored: true, Version: Version([]byte("v1")), Replaced: Version([]byte("v2"))}, "v1"},
		{UndoResult{Op: "write", Deleted: true, Replaced: Version([]byte("v1"))}, ""},
	}
	for i, s := range steps {
		got, err := w.Undo("f.txt")
		if err != nil {
			t.Fatalf("undo %d: %v", i, err)
		}
		s.want.Path = got.Path
		if diff := cmp.Diff(&s.want, got); diff != "" {
			t.Errorf("undo %d mismatch (-want +got):\n%s", i, diff)
		}
		b, err := os.ReadFile(name)
		switch {
		case s.content == "" && !isNotExist(err):
			t.Errorf("undo %d: file exists (%q, %v)", i, b, err)
		case s.content != "" && string(b) != s.content:
			t.Errorf("undo %d: content %q, %v; want %q", i, b, err, s.content)
		case s.content != "":
			if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
				t.Errorf("undo %d: mode %v, want 0600", i, fi.Mode())
			}
		}
	}
	_, err := w.Undo("f.txt")
	e := wantCode(t, err, fserr.BadRequest)
	if e.Message != "no undo history for f.txt" {
		t.Errorf("message %q", e.Message)
	}
	assertNoStrays(t, root)
}

func TestUndoHardLinkAndSymlink(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "t.txt"), "old", 0o644)
	if err := os.Link(filepath.Join(root, "t.txt"), filepath.Join(root, "t2.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("t.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	ino := inode(t, filepath.Join(root, "t.txt"))
	commit(t, w, "edit", Change{Path: "link", Content: []byte("new")})
	// Recorded under the target's path, so undo by either name works.
	if _, err := w.Undo(filepath.Join(root, "t.txt")); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"t.txt", "t2.txt", "link"} {
		if got := readFile(t, filepath.Join(root, n)); got != "old" {
			t.Errorf("%s = %q", n, got)
		}
	}
	if inode(t, filepath.Join(root, "t2.txt")) != ino {
		t.Error("undo broke the hard link")
	}
}

// TestUndoConflict: undo refuses when the file changed since the recorded
// change, and changes nothing.
func TestUndoConflict(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change Change
		after  func(t *testing.T, name string)
	}{
		{"edited since", Change{Path: "f.txt", Content: []byte("v2")},
			func(t *testing.T, n string) { writeFile(t, n, "someone else", 0o644) }},
		{"deleted since", Change{Path: "f.txt", Content: []byte("v2")},
			func(t *testing.T, n string) { os.Remove(n) }},
		{"recreated since a delete", Change{Path: "f.txt", Delete: true},
			func(t *testing.T, n string) { writeFile(t, n, "again", 0o644) }},
		{"replaced by a directory", Change{Path: "f.txt", Delete: true},
			func(t *testing.T, n string) { os.Mkdir(n, 0o755) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			name := filepath.Join(root, "f.txt")
			writeFile(t, name, "v1", 0o644)
			commit(t, w, "edit", tc.change)
			tc.after(t, name)
			before := snapshot(t, root)
			_, err := w.Undo("f.txt")
			e := wantCode(t, err, fserr.Conflict)
			want := "f.txt changed since the recorded edit; undo would discard that change. Re-read the file and edit it instead."
			if e.Message != want {
				t.Errorf("message %q, want %q", e.Message, want)
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("tree changed (-before +after):\n%s", diff)
			}
			if w.journal.len() != 1 {
				t.Errorf("entry consumed by a refused undo")
			}
		})
	}
}

func TestUndoLimits(t *testing.T) {
	t.Parallel()
	t.Run("per file", func(t *testing.T) {
		t.Parallel()
		w := openTestWorkspace(t, Options{Roots: []string{t.TempDir()}, StateDir: t.TempDir(), Undo: UndoLimits{PerFile: 3}})
		for i := range 5 {
			commit(t, w, "write", Change{Path: "f", Content: fmt.Appendf(nil, "v%d", i)})
		}
		for i := range 3 {
			if _, err := w.Undo("f"); err != nil {
				t.Fatalf("undo %d: %v", i, err)
			}
		}
		_, err := w.Undo("f")
		wantCode(t, err, fserr.BadRequest)
		if tf, _ := w.ReadText("f"); string(tf.Content) != "v1" {
			t.Errorf("after three undos: %q, want v1", tf.Content)
		}
	})
	t.Run("total bytes, oldest first across files", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "a"), strings.Repeat("a", 60), 0o644)
		writeFile(t, filepath.Join(root, "b"), strings.Repeat("b", 60), 0o644)
		w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir(), Undo: UndoLimits{TotalBytes: 100}})
		if r := commit(t, w, "edit", Change{Path: "a", Content: []byte("A")}); !r[0].UndoRecorded {
			t.Error("a not recorded")
		}
		if r := commit(t, w, "edit", Change{Path: "b", Content: []byte("B")}); !r[0].UndoRecorded {
			t.Error("b not recorded")
		}
		_, err := w.Undo("a")
		wantCode(t, err, fserr.BadRequest) // evicted by b
		if _, err := w.Undo("b"); err != nil {
			t.Error(err)
		}
		if blobs, _ := os.ReadDir(filepath.Join(w.StateDir(), blobDir)); len(blobs) != 0 {
			t.Errorf("%d blobs left", len(blobs))
		}
	})
	t.Run("max entry bytes", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "big"), strings.Repeat("x", 20), 0o644)
		w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir(), Undo: UndoLimits{MaxEntryBytes: 10}})
		res := commit(t, w, "edit", Change{Path: "big", Content: []byte("small")}, Change{Path: "new", Content: []byte(strings.Repeat("y", 50))})
		if res[0].UndoRecorded || !res[1].UndoRecorded {
			t.Errorf("UndoRecorded = %v, %v; want false (previous too large), true (create)", res[0].UndoRecorded, res[1].UndoRecorded)
		}
		if res[0].PrevVersion != Version([]byte(strings.Repeat("x", 20))) {
			t.Error("PrevVersion of an unrecorded file is wrong")
		}
		_, err := w.Undo("big")
		wantCode(t, err, fserr.BadRequest)
	})
	// A group (a patch's move) whose source was too large to record: the
	// destination's undo would delete the only copy of the content.
	t.Run("group with an unrecorded member", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		big := strings.Repeat("x", 20)
		writeFile(t, filepath.Join(root, "src"), big, 0o644)
		w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir(), Undo: UndoLimits{MaxEntryBytes: 10}})
		commit(t, w, "patch", Change{Path: "src", Delete: true, ExpectedVersion: Version([]byte(big)), Group: "m"},
			Change{Path: "dst", Content: []byte(big), ExpectAbsent: true, Group: "m"})
		_, err := w.Undo("dst")
		wantCode(t, err, fserr.Conflict)
		if got, _ := os.ReadFile(filepath.Join(root, "dst")); string(got) != big {
			t.Errorf("dst = %q after the refused undo", got)
		}
	})
	t.Run("max entries", func(t *testing.T) {
		t.Parallel()
		w := openTestWorkspace(t, Options{Roots: []string{t.TempDir()}, StateDir: t.TempDir(), Undo: UndoLimits{MaxEntries: 2}})
		for _, n := range []string{"a", "b", "c"} {
			commit(t, w, "write", Change{Path: n, Content: []byte(n)})
		}
		_, err := w.Undo("a")
		wantCode(t, err, fserr.BadRequest)
		for _, n := range []string{"b", "c"} {
			if _, err := w.Undo(n); err != nil {
				t.Errorf("undo %s: %v", n, err)
			}
		}
	})
	t.Run("no undo", func(t *testing.T) {
		t.Parallel()
		w := openTestWorkspace(t, Options{Roots: []string{t.TempDir()}, StateDir: t.TempDir()})
		res, err := w.Commit([]Change{{Path: "a", Content: []byte("a")}}, CommitOptions{NoUndo: true})
		if err != nil || res[0].UndoRecorded {
			t.Fatalf("%v %+v", err, res)
		}
		_, err = w.Undo("a")
		wantCode(t, err, fserr.BadRequest)
	})
}

// TestUndoPersists: a new workspace on the same state directory sees the
// journal, and Open removes blobs no entry refers to and tolerates a torn
// last line.
func TestUndoPersists(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	w1 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	commit(t, w1, "write", Change{Path: "f", Content: []byte("v1")})
	commit(t, w1, "edit", Change{Path: "f", Content: []byte("v2")})
	w1.Close()

	orphan := filepath.Join(state, blobDir, "999")
	writeFile(t, orphan, "orphan", 0o600)
	log, err := os.OpenFile(filepath.Join(state, undoLog), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	log.WriteString(`{"add":{"seq":1000,"key":"/x","op":"to`) // a crash mid-append
	log.Close()

	w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	if _, err := os.Stat(orphan); !isNotExist(err) {
		t.Errorf("orphan blob kept: %v", err)
	}
	commit(t, w2, "edit", Change{Path: "g", Content: []byte("g")}) // appends after the cut
	for _, want := range []string{"v1", ""} {
		res, err := w2.Undo("f")
		if err != nil {
			t.Fatal(err)
		}
		if want == "" && !res.Deleted || want != "" && res.Version != Version([]byte(want)) {
			t.Errorf("undo: %+v, want %q", res, want)
		}
	}
	if _, err := w2.Undo("g"); err != nil {
		t.Error(err)
	}
}

// TestUndoSharedStateDir: two workspaces (as two processes would) share a
// state directory; their commits interleave under the flock and each sees
// the other's journal.
func TestUndoSharedStateDir(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	ws := []*Workspace{
		openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state}),
		openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state}),
	}
	const rounds = 15
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				name := fmt.Sprintf("f%d", i)
				if _, err := w.Commit([]Change{{Path: name, Content: fmt.Appendf(nil, "%d", r)}}, CommitOptions{Op: "write"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	// Each undoes the other's file all the way back.
	for i, w := range ws {
		other := fmt.Sprintf("f%d", 1-i)
		for r := range rounds {
			if _, err := w.Undo(other); err != nil {
				t.Fatalf("workspace %d undo %s #%d: %v", i, other, r, err)
			}
		}
		if _, err := os.Stat(filepath.Join(root, other)); !isNotExist(err) {
			t.Errorf("%s exists after undoing its creation", other)
		}
	}
}

func TestUndoCompaction(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state, Undo: UndoLimits{PerFile: 2}})
	w.journal.compactAt = 2 << 10
	for i := range 60 {
		commit(t, w, "write", Change{Path: "f", Content: fmt.Appendf(nil, "v%d", i)})
	}
	fi, err := os.Stat(filepath.Join(state, undoLog))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 4<<10 {
		t.Errorf("log is %d bytes after compaction", fi.Size())
	}
	w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	for _, want := range []string{"v58", "v57"} {
		if _, err := w2.Undo("f"); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(root, "f")); got != want {
			t.Errorf("after undo: %q, want %q", got, want)
		}
	}
	_, err = w2.Undo("f")
	wantCode(t, err, fserr.BadRequest)
}
