package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestUndoRefusesAChownSince: the record of a change keeps the owner the
// change left the file with, so a chown (or chgrp) made since is a
// conflict, as a chmod is, rather than silently reverted by undo; nothing
// changes. Without a chown since, undo goes ahead.
func TestUndoRefusesAChownSince(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown files")
	}
	tests := []struct {
		name string
		do   func(t *testing.T, w *Workspace)
		dst  string // the file chowned and undone
	}{
		{"edit", func(t *testing.T, w *Workspace) {
			commit(t, w, "edit", Change{Path: "old.txt", Content: []byte("new")})
		}, "old.txt"},
		{"create", func(t *testing.T, w *Workspace) {
			commit(t, w, "write", Change{Path: "b.txt", Content: []byte("new")})
		}, "b.txt"},
		{"move", func(t *testing.T, w *Workspace) {
			if _, err := w.Move("a.txt", "b.txt", false, ""); err != nil {
				t.Fatal(err)
			}
		}, "b.txt"},
		{"copy over a file", func(t *testing.T, w *Workspace) {
			if _, err := w.Copy("a.txt", "old.txt", true, nil); err != nil {
				t.Fatal(err)
			}
		}, "old.txt"},
		{"tree merge", func(t *testing.T, w *Workspace) {
			if err := mergeFile(w, "old.txt", 0o644); err != nil {
				t.Fatal(err)
			}
		}, "old.txt"},
	}
	chowns := []struct {
		name     string
		uid, gid int // -1: unchanged
	}{
		{"owner", unprivUID, -1},
		{"group", -1, unprivUID},
		{"none", -1, -1},
	}
	for _, tc := range tests {
		for _, ch := range chowns {
			t.Run(tc.name+"/"+ch.name, func(t *testing.T) {
				t.Parallel()
				w, root := newTestWorkspace(t)
				writeFile(t, filepath.Join(root, "a.txt"), "a", 0o644)
				writeFile(t, filepath.Join(root, "old.txt"), "old", 0o644)
				tc.do(t, w)
				dst := filepath.Join(root, tc.dst)
				if err := os.Lchown(dst, ch.uid, ch.gid); err != nil {
					t.Fatal(err)
				}
				before := snapshot(t, root)
				_, err := w.Undo(tc.dst)
				if ch.uid < 0 && ch.gid < 0 {
					if err != nil {
						t.Fatalf("Undo without a chown since: %v", err)
					}
					return
				}
				e := wantCode(t, err, fserr.Conflict)
				if !strings.Contains(e.Message, "owner changed") || !strings.Contains(e.Hint, "chown") {
					t.Errorf("message %q, hint %q: want what changed (owner) and what to do (chown)", e.Message, e.Hint)
				}
				if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
					t.Errorf("tree changed (-before +after):\n%s", diff)
				}
				fi, err := os.Lstat(dst)
				if err != nil {
					t.Fatal(err)
				}
				uid, gid, _ := fileOwner(fi)
				if (ch.uid >= 0 && uid != ch.uid) || (ch.gid >= 0 && gid != ch.gid) {
					t.Errorf("owner %d:%d, want the chown's %d:%d kept", uid, gid, ch.uid, ch.gid)
				}
			})
		}
	}
}

// TestUndoRestoresThePreviousOwner: what a change itself did to the owner
// is undone with it, by design: a move over a file gave the file the
// moved file's owner, and undo gives the overwritten file its own back.
func TestUndoRestoresThePreviousOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown files")
	}
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a", 0o644)
	writeFile(t, filepath.Join(root, "old.txt"), "old", 0o644)
	if err := os.Chown(filepath.Join(root, "old.txt"), unprivUID, unprivUID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Move("a.txt", "old.txt", true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Undo("old.txt"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(root, "old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if uid, gid, _ := fileOwner(fi); uid != unprivUID || gid != unprivUID {
		t.Errorf("old.txt owned by %d:%d after the undo, want %d:%d", uid, gid, unprivUID, unprivUID)
	}
}

// TestUndoOwnerRecordSurvives: the owner a change left comes with its
// confirm record, so another process sharing the state directory, or one
// reading a compacted log, refuses a chown since too. A confirm lost in a
// crash leaves the owner unknown: the entry is settled from the file, and
// undo checks content and mode only.
func TestUndoOwnerRecordSurvives(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown files")
	}
	tests := []struct {
		name    string
		compact bool   // the log is compacted after the change
		crash   string // crash point of the write
		code    fserr.Code
	}{
		{name: "another process", code: fserr.Conflict},
		{name: "compacted log", compact: true, code: fserr.Conflict},
		{name: "confirm lost in a crash", crash: "undo-unconfirmed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), t.TempDir()
			opts := Options{Roots: []string{root}, StateDir: state}
			w := openTestWorkspace(t, opts)
			for _, c := range []string{"v1", "v2", "v3"} {
				commit(t, w, "write", Change{Path: "f.txt", Content: []byte(c)})
			}
			if tt.crash != "" {
				w.hooks.crashAt = func(step string) bool { return step == tt.crash }
			}
			_, err := w.Commit([]Change{{Path: "f.txt", Content: []byte("v4")}}, CommitOptions{Op: "write"})
			if tt.crash != "" && err == nil {
				t.Fatal("no simulated crash")
			}
			if tt.crash == "" && err != nil {
				t.Fatal(err)
			}
			if tt.compact {
				// Records of g.txt made and undone: a log mostly dead,
				// which the next change's confirm compacts.
				w.journal.compactAt = 1
				for range 32 {
					commit(t, w, "write", Change{Path: "g.txt", Content: []byte("g")})
					if _, err := w.Undo("g.txt"); err != nil {
						t.Fatal(err)
					}
				}
				commit(t, w, "write", Change{Path: "h.txt", Content: []byte("h")})
				log, err := os.ReadFile(filepath.Join(state, undoLog))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(log, []byte(`{"next":`)) {
					t.Fatalf("the log was not compacted:\n%s", log)
				}
			}
			if err := os.Chown(filepath.Join(root, "f.txt"), unprivUID, unprivUID); err != nil {
				t.Fatal(err)
			}
			w2 := openTestWorkspace(t, opts) // another process, or the restarted one
			_, err = w2.Undo("f.txt")
			if tt.code != "" {
				wantCode(t, err, tt.code)
				return
			}
			if err != nil {
				t.Fatalf("Undo: %v", err)
			}
			if got := readFile(t, filepath.Join(root, "f.txt")); got != "v3" {
				t.Errorf("f.txt = %q after the undo, want v3", got)
			}
		})
	}
}

// TestUndoNamesModeAndOwnerTogether: when both the permissions and the
// owner changed since the change, the refusal names both and says to
// put both back; it named the permissions only, and following its hint
// met a second refusal.
func TestUndoNamesModeAndOwnerTogether(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown files")
	}
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "old.txt"), "old", 0o644)
	commit(t, w, "edit", Change{Path: "old.txt", Content: []byte("new")})
	dst := filepath.Join(root, "old.txt")
	if err := os.Chmod(dst, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(dst, unprivUID, -1); err != nil {
		t.Fatal(err)
	}
	_, err := w.Undo("old.txt")
	e := wantCode(t, err, fserr.Conflict)
	for _, s := range []string{"permissions changed", "owner changed"} {
		if !strings.Contains(e.Message, s) {
			t.Errorf("message %q lacks %q", e.Message, s)
		}
	}
	for _, s := range []string{"chmod", "chown"} {
		if !strings.Contains(e.Hint, s) {
			t.Errorf("hint %q lacks %q", e.Hint, s)
		}
	}
}
