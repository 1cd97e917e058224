package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsplane/fsplane/internal/fserr"
)

// crashMidPatch leaves an interrupted transaction over a.txt in x and
// b.txt in y (both applied, neither committed), as a SIGKILL would.
func crashMidPatch(t *testing.T, roots []string, a, b, state string) {
	t.Helper()
	w, err := Open(Options{Roots: roots, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	w.hooks.crashAt = func(step string) bool { return step == "apply/1" }
	if _, err := w.Commit([]Change{{Path: a, Content: []byte("new-a\n")}, {Path: b, Content: []byte("new-b\n")}}, CommitOptions{Op: "patch"}); err == nil {
		t.Fatal("the simulated crash did not stop the commit")
	}
	w.Close()
}

// TestInterruptedTxOfAForeignRootBlocksItsFiles: a workspace opened with
// only some of the roots an interrupted transaction touched cannot recover
// it, and used to let its half-applied files be changed; the other
// workspace's recovery then overwrote that later work. Those files are now
// refused (conflict) until a workspace with all the roots recovers them;
// other files work as ever.
func TestInterruptedTxOfAForeignRootBlocksItsFiles(t *testing.T) {
	t.Parallel()
	x, y, state := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(x, "sub", "a.txt"), "old-a\n", 0o644)
	writeFile(t, filepath.Join(x, "c.txt"), "c\n", 0o644)
	writeFile(t, filepath.Join(y, "b.txt"), "old-b\n", 0o644)
	crashMidPatch(t, []string{x, y}, filepath.Join(x, "sub", "a.txt"), filepath.Join(y, "b.txt"), state)

	w := openTestWorkspace(t, Options{Roots: []string{x}, StateDir: state})
	for name, err := range map[string]error{
		"write": func() error {
			_, err := w.Commit([]Change{{Path: "sub/a.txt", Content: []byte("later\n")}}, CommitOptions{Op: "write"})
			return err
		}(),
		"delete":         func() error { _, err := w.Remove("sub/a.txt", false, ""); return err }(),
		"move":           func() error { _, err := w.Move("sub/a.txt", "moved.txt", false, ""); return err }(),
		"move its dir":   func() error { _, err := w.Move("sub", "sub2", false, ""); return err }(),
		"remove its dir": func() error { _, err := w.Remove("sub", true, ""); return err }(),
		"copy over it":   func() error { _, err := w.Copy("c.txt", "sub/a.txt", true, nil); return err }(),
	} {
		if fe, ok := fserr.As(err); !ok || fe.Code != fserr.Conflict || !strings.Contains(fe.Message, "interrupted change") {
			t.Errorf("%s of a file of the interrupted transaction: %v, want conflict", name, err)
		}
	}
	if _, err := w.Commit([]Change{{Path: "c.txt", Content: []byte("c2\n")}}, CommitOptions{Op: "write"}); err != nil {
		t.Fatalf("an unrelated file: %v", err)
	}
	w.Close()

	w2 := openTestWorkspace(t, Options{Roots: []string{x, y}, StateDir: state})
	w2.Close()
	if a, b := readFile(t, filepath.Join(x, "sub", "a.txt")), readFile(t, filepath.Join(y, "b.txt")); a != "old-a\n" || b != "old-b\n" {
		t.Fatalf("after recovery with both roots: a=%q b=%q", a, b)
	}
	assertNoStrays(t, x, y)
}

// TestRecoveryFindsRootsByIdentity: a transaction written by a process
// that named its root through a link is recovered by one naming it by its
// real path (it was skipped as another workspace's, leaving a half-applied
// patch and its backups).
func TestRecoveryFindsRootsByIdentity(t *testing.T) {
	t.Parallel()
	base, state := t.TempDir(), t.TempDir()
	x := filepath.Join(base, "real")
	if err := os.Mkdir(x, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(x, link); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(x, "a.txt"), "old-a\n", 0o644)
	writeFile(t, filepath.Join(x, "b.txt"), "old-b\n", 0o644)
	crashMidPatch(t, []string{link}, "a.txt", "b.txt", state)

	w := openTestWorkspace(t, Options{Roots: []string{x}, StateDir: state})
	w.Close()
	if a, b := readFile(t, filepath.Join(x, "a.txt")), readFile(t, filepath.Join(x, "b.txt")); a != "old-a\n" || b != "old-b\n" {
		t.Fatalf("after Open by the real path: a=%q b=%q", a, b)
	}
	assertNoStrays(t, x)
}

// TestCopyBackupsAreNamedWhenComplete: where hard links are impossible the
// backup of a replaced file is a copy. It used to be written under the
// backup's own name, so a crash while copying left part of the file where
// recovery renames it over the intact original; the copy now gets that
// name only once complete (a temp until then). Here: the copy path, a
// crash after applying, and a recovery that must bring back every byte.
func TestCopyBackupsAreNamedWhenComplete(t *testing.T) {
	// Not parallel: it replaces linkBackup for the package.
	saved := linkBackup
	t.Cleanup(func() { linkBackup = saved })
	var copied []string
	linkBackup = func(root *os.Root, oldname, newname string) error {
		copied = append(copied, newname)
		return syscall.EPERM
	}
	root, state := t.TempDir(), t.TempDir()
	orig := strings.Repeat("abcdefghijklmnopqrstuvwxyz\n", 40000)
	writeFile(t, filepath.Join(root, "a.txt"), orig, 0o644)
	writeFile(t, filepath.Join(root, "b.txt"), "b\n", 0o644)
	crashMidPatch(t, []string{root}, "a.txt", "b.txt", state)
	if len(copied) != 2 {
		t.Fatalf("%d backups took the copy path, want 2", len(copied))
	}
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	w.Close()
	if got := readFile(t, filepath.Join(root, "a.txt")); got != orig {
		t.Fatalf("a.txt has %d bytes after recovery, want %d", len(got), len(orig))
	}
	assertNoStrays(t, root)
}

// TestAnotherProcessCrashIsRecoveredBeforeTheNextChange: two workspaces
// share a state directory (two fsplane processes, say); one dies in the
// middle of a patch. The other's next change first recovers that patch;
// it used to write over the half-applied file, and the recovery at the
// next Open then put the old content back over that later work.
func TestAnotherProcessCrashIsRecoveredBeforeTheNextChange(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(root, "a.txt"), "old-a\n", 0o644)
	writeFile(t, filepath.Join(root, "b.txt"), "old-b\n", 0o644)
	live := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	crashMidPatch(t, []string{root}, "a.txt", "b.txt", state)

	if _, err := live.Commit([]Change{{Path: "a.txt", Content: []byte("later\n")}}, CommitOptions{Op: "write"}); err != nil {
		t.Fatal(err)
	}
	live.Close()
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	w.Close()
	if a, b := readFile(t, filepath.Join(root, "a.txt")), readFile(t, filepath.Join(root, "b.txt")); a != "later\n" || b != "old-b\n" {
		t.Fatalf("a=%q b=%q, want the later write and b rolled back", a, b)
	}
	assertNoStrays(t, root)
}

// TestUndoRecreatesWithTheOwner: an undo that brings back a deleted or
// moved-away file gives it its owner again (it came back owned by the
// daemon, which the owner may not be able to write).
func TestUndoRecreatesWithTheOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files away")
	}
	root := t.TempDir()
	for _, n := range []string{"del.txt", "etc/mv.txt"} {
		writeFile(t, filepath.Join(root, n), "x\n", 0o640)
		if err := os.Chown(filepath.Join(root, n), 1234, 2345); err != nil {
			t.Fatal(err)
		}
	}
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	if _, err := w.Remove("del.txt", false, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Move("etc/mv.txt", "moved.txt", false, ""); err != nil {
		t.Fatal(err)
	}
	// The emptied directory goes too: the undo re-creates it, as the
	// daemon's, not as the file's owner's.
	if _, err := w.Remove("etc", false, ""); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"del.txt", "etc/mv.txt"} {
		if _, err := w.Undo(n); err != nil {
			t.Fatalf("undo %s: %v", n, err)
		}
		fi, err := os.Stat(filepath.Join(root, n))
		if err != nil {
			t.Fatal(err)
		}
		if uid, gid, _ := fileOwner(fi); uid != 1234 || gid != 2345 || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s came back as %d:%d %v, want 1234:2345 -rw-r-----", n, uid, gid, fi.Mode().Perm())
		}
	}
	fi, err := os.Stat(filepath.Join(root, "etc"))
	if err != nil {
		t.Fatal(err)
	}
	if uid, gid, _ := fileOwner(fi); uid != os.Geteuid() || gid != os.Getegid() {
		t.Errorf("the re-created directory etc is owned by %d:%d, want the daemon's", uid, gid)
	}
}

// TestCopyOverAPrivateFileKeepsItPrivate: copying a world-readable file
// over a 0600 one used to give the result the source's mode, exposing
// what the private file then held; like cp, the overwritten file keeps
// its mode and extended attributes.
func TestCopyOverAPrivateFileKeepsItPrivate(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "public.txt"), "new secret\n", 0o644)
	writeFile(t, filepath.Join(root, "private.txt"), "secret\n", 0o600)
	xattr := unix.Setxattr(filepath.Join(root, "private.txt"), "user.tag", []byte("keep"), 0) == nil
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	if _, err := w.Copy("public.txt", "private.txt", true, nil); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, "private.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || readFile(t, filepath.Join(root, "private.txt")) != "new secret\n" {
		t.Fatalf("private.txt is %v %q after the copy", fi.Mode().Perm(), readFile(t, filepath.Join(root, "private.txt")))
	}
	if xattr {
		buf := make([]byte, 16)
		if n, err := unix.Getxattr(filepath.Join(root, "private.txt"), "user.tag", buf); err != nil || string(buf[:n]) != "keep" {
			t.Errorf("user.tag after the copy: %q %v", buf[:max(n, 0)], err)
		}
	}
}

// TestRollbackKeepsAConcurrentAppend: a program appends to a file while a
// commit of it is under way, and the commit fails: the rollback must give
// back the file as it is now (the backup is a link to it), not drop that
// backup for not matching the version the commit planned from — which
// left the commit's half-applied content in place.
func TestRollbackKeepsAConcurrentAppend(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.txt"), "old-a\n", 0o644)
	writeFile(t, filepath.Join(root, "b.txt"), "old-b\n", 0o644)
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	w.hooks.afterPlan = func() {
		f, err := os.OpenFile(filepath.Join(root, "a.txt"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteString("appended by another program\n")
		f.Close()
	}
	w.hooks.beforeApply = func(i int) error {
		if i == 1 {
			return syscall.EIO
		}
		return nil
	}
	if _, err := w.Commit([]Change{{Path: "a.txt", Content: []byte("new-a\n")}, {Path: "b.txt", Content: []byte("new-b\n")}}, CommitOptions{Op: "patch"}); err == nil {
		t.Fatal("the commit succeeded despite the injected failure")
	}
	if a, b := readFile(t, filepath.Join(root, "a.txt")), readFile(t, filepath.Join(root, "b.txt")); a != "old-a\nappended by another program\n" || b != "old-b\n" {
		t.Fatalf("after the rollback: a=%q b=%q", a, b)
	}
}

// TestNestedRootsAreBlocked: the block covers a workspace whose root lies
// inside the crashed one's root, or holds it, not only the same root.
func TestNestedRootsAreBlocked(t *testing.T) {
	t.Parallel()
	for _, live := range []string{"inside", "holding"} {
		t.Run(live, func(t *testing.T) {
			t.Parallel()
			base, y, state := t.TempDir(), t.TempDir(), t.TempDir()
			inner := filepath.Join(base, "in")
			writeFile(t, filepath.Join(inner, "a.txt"), "old-a\n", 0o644)
			writeFile(t, filepath.Join(y, "b.txt"), "old-b\n", 0o644)
			crashed, mine, rel := base, inner, "a.txt"
			if live == "holding" {
				crashed, mine, rel = inner, base, "in/a.txt"
			}
			crashMidPatch(t, []string{crashed, y}, filepath.Join(inner, "a.txt"), filepath.Join(y, "b.txt"), state)

			w := openTestWorkspace(t, Options{Roots: []string{mine}, StateDir: state})
			_, err := w.Commit([]Change{{Path: rel, Content: []byte("later\n")}}, CommitOptions{Op: "write"})
			if fe, ok := fserr.As(err); !ok || fe.Code != fserr.Conflict {
				t.Fatalf("a write from a root %s the crashed one: %v, want conflict", live, err)
			}
			w.Close()
			w = openTestWorkspace(t, Options{Roots: []string{crashed, y}, StateDir: state})
			w.Close()
			if a := readFile(t, filepath.Join(inner, "a.txt")); a != "old-a\n" {
				t.Fatalf("a.txt = %q after recovery", a)
			}
		})
	}
}

// TestAsideMoveKeepsTheOnlyNameOfTheDestination: killed between renaming
// the old destination aside (no hard links) and installing the copy, with
// the source changed or removed before recovery: the backup is then the
// only name of the old destination, and goes back (it was deleted as if
// the move had happened).
func TestAsideMoveKeepsTheOnlyNameOfTheDestination(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"edited", "removed"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			r1, r2, state := t.TempDir(), t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(r1, "f"), "source\n", 0o644)
			writeFile(t, filepath.Join(r2, "f"), "old destination\n", 0o644)
			w := openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: state})
			sfi, err := os.Lstat(filepath.Join(r1, "f"))
			if err != nil {
				t.Fatal(err)
			}
			rec := &moveRecord{ID: randomTag(), SrcRoot: r1, SrcRel: "f", DstRoot: r2, DstRel: "f",
				Backup: siblingName("f", randomTag(), "bak"), SrcVersion: Version([]byte("source\n"))}
			rec.SrcDev, rec.SrcIno = fileKey(sfi)
			if err := w.writeMoveRecord(rec); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(r2, "f"), filepath.Join(r2, rec.Backup)); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if how == "edited" {
				writeFile(t, filepath.Join(r1, "f"), "source edited\n", 0o644)
			} else if err := os.Remove(filepath.Join(r1, "f")); err != nil {
				t.Fatal(err)
			}
			w = openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: state})
			w.Close()
			if got := readFile(t, filepath.Join(r2, "f")); got != "old destination\n" {
				t.Fatalf("destination %q after recovery, want the old destination back", got)
			}
			assertNoStrays(t, r2)
		})
	}
}

// TestUndoOfAMoveOverAFileRestoresItsOwner: a move over an existing file
// gave it the moved file's owner; undo brings back its content, mode and
// owner.
func TestUndoOfAMoveOverAFileRestoresItsOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files away")
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "src.txt"), "src\n", 0o644)
	writeFile(t, filepath.Join(root, "over.txt"), "over\n", 0o600)
	if err := os.Chown(filepath.Join(root, "src.txt"), 1234, 2345); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(root, "over.txt"), 3456, 4567); err != nil {
		t.Fatal(err)
	}
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	if _, err := w.Move("src.txt", "over.txt", true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Undo("over.txt"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, "over.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if uid, gid, _ := fileOwner(fi); uid != 3456 || gid != 4567 || fi.Mode().Perm() != 0o600 || readFile(t, filepath.Join(root, "over.txt")) != "over\n" {
		t.Fatalf("over.txt after undo: %d:%d %v %q", uid, gid, fi.Mode().Perm(), readFile(t, filepath.Join(root, "over.txt")))
	}
}

// TestUnrecoverableTransactionBlocksOnlyItsFiles: when an interrupted
// transaction cannot be rolled back (here a directory took the place of
// one of its backups, which cannot be renamed over the file), Open used
// to fail, and with it every operation on the workspace. Now its files
// are refused, with the cause, and the rest of the workspace works.
func TestUnrecoverableTransactionBlocksOnlyItsFiles(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(root, "a.txt"), "old-a\n", 0o644)
	writeFile(t, filepath.Join(root, "b.txt"), "old-b\n", 0o644)
	crashMidPatch(t, []string{root}, "a.txt", "b.txt", state)
	baks, _ := filepath.Glob(filepath.Join(root, ".a.txt.*.bak"))
	if len(baks) != 1 {
		t.Fatalf("backups of a.txt: %v", baks)
	}
	if err := os.Remove(baks[0]); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(baks[0], "x"), "x\n", 0o644)

	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	if _, err := w.Commit([]Change{{Path: "c.txt", Content: []byte("c\n")}}, CommitOptions{Op: "write"}); err != nil {
		t.Fatalf("a file outside the transaction: %v", err)
	}
	_, err := w.Commit([]Change{{Path: "b.txt", Content: []byte("later\n")}}, CommitOptions{Op: "write"})
	if fe, ok := fserr.As(err); !ok || fe.Code != fserr.Conflict || !strings.Contains(fe.Message, "recovery failed") {
		t.Fatalf("a file of the unrecoverable transaction: %v, want conflict naming the failed recovery", err)
	}
}

// TestTransactionOfAVanishedRootWaitsForIt: a root missing at recovery
// (an unmounted disk) used to make recovery drop the manifest after
// settling the other roots, leaving that root's files half changed with
// their backups for good. Its part of the manifest now waits for it.
func TestTransactionOfAVanishedRootWaitsForIt(t *testing.T) {
	t.Parallel()
	x, base, state := t.TempDir(), t.TempDir(), t.TempDir()
	y := filepath.Join(base, "disk")
	writeFile(t, filepath.Join(x, "a.txt"), "old-a\n", 0o644)
	writeFile(t, filepath.Join(y, "b.txt"), "old-b\n", 0o644)
	crashMidPatch(t, []string{x, y}, filepath.Join(x, "a.txt"), filepath.Join(y, "b.txt"), state)
	away := filepath.Join(base, "away")
	if err := os.Rename(y, away); err != nil { // unmounted
		t.Fatal(err)
	}
	w := openTestWorkspace(t, Options{Roots: []string{x}, StateDir: state})
	w.Close()
	if a := readFile(t, filepath.Join(x, "a.txt")); a != "old-a\n" {
		t.Fatalf("a.txt = %q, want rolled back", a)
	}
	if err := os.Rename(away, y); err != nil { // back
		t.Fatal(err)
	}
	w = openTestWorkspace(t, Options{Roots: []string{x, y}, StateDir: state})
	w.Close()
	if b := readFile(t, filepath.Join(y, "b.txt")); b != "old-b\n" {
		t.Fatalf("b.txt = %q after the disk came back, want rolled back", b)
	}
	assertNoStrays(t, x, y)
}
