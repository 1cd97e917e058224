package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"golang.org/x/sys/unix"
)

// TestDirLockAcrossStateDirs: writers in two workspaces with their own
// state directories (so no shared state lock) on the same files, by the
// same root or nested roots, each appending a line guarded by the version
// it read. Every acknowledged append must be in the final file.
func TestDirLockAcrossStateDirs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		nested bool // the second workspace's root is a directory of the first's
	}{
		{name: "same root"},
		{name: "nested roots", nested: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "proj", "f.txt"), "HEAD\n", 0o644)
			root2, path2 := root, "proj/f.txt"
			if tt.nested {
				root2, path2 = filepath.Join(root, "proj"), "f.txt"
			}
			ws := []*Workspace{
				openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()}),
				openTestWorkspace(t, Options{Roots: []string{root2}, StateDir: t.TempDir()}),
			}
			paths := []string{"proj/f.txt", path2}
			const writers, rounds = 8, 25
			var (
				wg    sync.WaitGroup
				mu    sync.Mutex
				acked []string
			)
			for g := range writers {
				wg.Go(func() {
					w, p := ws[g%2], paths[g%2]
					for r := range rounds {
						tf, err := w.ReadText(p)
						if err != nil {
							t.Error(err)
							return
						}
						line := fmt.Sprintf("w%d r%d", g, r)
						_, err = w.Commit([]Change{{Path: p, Content: []byte(string(tf.Content) + line + "\n"), ExpectedVersion: tf.Version}},
							CommitOptions{NoUndo: r%2 == 0})
						if fserr.Is(err, fserr.StaleVersion) {
							continue
						}
						if err != nil {
							t.Errorf("writer %d: %v", g, err)
							return
						}
						mu.Lock()
						acked = append(acked, line)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			final := strings.Split(strings.TrimSuffix(readFile(t, filepath.Join(root, "proj", "f.txt")), "\n"), "\n")
			have := map[string]bool{}
			for _, l := range final[1:] {
				have[l] = true
			}
			lost := 0
			for _, l := range acked {
				if !have[l] {
					lost++
				}
			}
			if lost > 0 || len(final)-1 != len(acked) {
				t.Errorf("%d of %d acknowledged writes lost; the file has %d lines after its head", lost, len(acked), len(final)-1)
			}
			assertNoStrays(t, root)
		})
	}
}

// TestDirLockHoldsOtherStateDir: a commit holds the file's directory from
// its version check to its rename, so a commit from a workspace with
// another state directory, against the same version, waits for it and
// then finds the version stale, instead of both succeeding.
func TestDirLockHoldsOtherStateDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "d", "f.txt"), "v1", 0o644)
	w1 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	v1 := Version([]byte("v1"))
	other := make(chan error, 1)
	w1.hooks.afterPlan = func() {
		go func() {
			_, err := w2.Commit([]Change{{Path: "d/f.txt", Content: []byte("from w2"), ExpectedVersion: v1}}, CommitOptions{})
			other <- err
		}()
		select {
		case err := <-other:
			t.Errorf("the other workspace's commit ran while this one held the directory: %v", err)
			other <- err
		case <-time.After(200 * time.Millisecond):
		}
	}
	if _, err := w1.Commit([]Change{{Path: "d/f.txt", Content: []byte("from w1"), ExpectedVersion: v1}}, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, <-other, fserr.StaleVersion)
	if got := readFile(t, filepath.Join(root, "d", "f.txt")); got != "from w1" {
		t.Errorf("content %q, want w1's", got)
	}
}

// TestCreateRefusedWhenBeaten: a create into a directory the commit makes
// is covered by the lock of the nearest existing ancestor only; another
// workspace that creates the same file in the new directory before the
// rename wins, and the create is refused (stale_version), not applied
// over it.
func TestCreateRefusedWhenBeaten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		changes []Change // the beaten commit's; the other creates new/dir/f.txt
	}{
		{"single", []Change{{Path: "new/dir/f.txt", Content: []byte("mine"), ExpectAbsent: true}}},
		{"no expectation", []Change{{Path: "new/dir/f.txt", Content: []byte("mine")}}},
		{"transaction", []Change{{Path: "new/dir/f.txt", Content: []byte("mine")}, {Path: "g.txt", Content: []byte("g")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			w1 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
			w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
			w1.hooks.beforeApply = func(i int) error {
				if i == 0 {
					_, err := w2.Commit([]Change{{Path: "new/dir/f.txt", Content: []byte("theirs"), ExpectAbsent: true}}, CommitOptions{})
					if err != nil {
						t.Errorf("the other create: %v", err)
					}
				}
				return nil
			}
			_, err := w1.Commit(tt.changes, CommitOptions{})
			wantCode(t, err, fserr.StaleVersion)
			if got := readFile(t, filepath.Join(root, "new", "dir", "f.txt")); got != "theirs" {
				t.Errorf("content %q, want the other writer's", got)
			}
			if _, err := os.Stat(filepath.Join(root, "g.txt")); !isNotExist(err) {
				t.Errorf("g.txt: %v, want absent (all or nothing)", err)
			}
			assertNoStrays(t, root)
		})
	}
}

// TestDirLocksDoNotDeadlock: transactions over the same two directories,
// named in either order, from two workspaces with their own state
// directories, all finish.
func TestDirLocksDoNotDeadlock(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "f"), "", 0o644)
	writeFile(t, filepath.Join(root, "b", "g"), "", 0o644)
	ws := []*Workspace{
		openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()}),
		openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()}),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for r := range 10 {
					c := []Change{{Path: "a/f", Content: fmt.Appendf(nil, "%d %d", g, r)}, {Path: "b/g", Content: fmt.Appendf(nil, "%d %d", g, r)}}
					if g%2 == 1 {
						c[0], c[1] = c[1], c[0]
					}
					if _, err := ws[g%2].Commit(c, CommitOptions{NoUndo: true}); err != nil {
						t.Errorf("writer %d: %v", g, err)
						return
					}
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("commits over the same directories deadlocked")
	}
	if a, b := readFile(t, filepath.Join(root, "a", "f")), readFile(t, filepath.Join(root, "b", "g")); a != b {
		t.Errorf("a/f %q and b/g %q: transactions interleaved", a, b)
	}
}

// BenchmarkDirLock is what the directory lock adds to a write (open,
// flock and look up the file's directory again, then unlock and close),
// and the read-only check (checkWritable); commit is a whole write
// (NoUndo, with both) to compare with.
func BenchmarkDirLock(b *testing.B) {
	root := b.TempDir()
	w, err := Open(Options{Roots: []string{root}, StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("x"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("lock", func(b *testing.B) {
		res, err := w.resolve("bench", "f.txt")
		if err != nil {
			b.Fatal(err)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		for b.Loop() {
			if err := w.lockDirs("bench", "f.txt", targetOf(res)); err != nil {
				b.Fatal(err)
			}
			w.releaseDirs(0)
		}
	})
	b.Run("writable", func(b *testing.B) {
		fi, err := os.Lstat(filepath.Join(root, "f.txt"))
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := checkWritable("bench", "f.txt", w.roots[0].root, "f.txt", fi); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("commit", func(b *testing.B) {
		for b.Loop() {
			if _, err := w.Commit([]Change{{Path: "f.txt", Content: []byte("x")}}, CommitOptions{NoUndo: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestRecoveryHoldsDirLocks: a rollback checks a file, then restores it;
// another process (another state directory) must not write between the
// two, so recovery holds the directory locks a commit would, and gives
// them back when the manifest is settled.
func TestRecoveryHoldsDirLocks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	busy := func() bool {
		f, err := os.Open(filepath.Join(root, "d"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		}
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	m := &manifest{ID: "t", Files: []txFile{{Root: root, Rel: "d/a.txt"}}}
	called := false
	w.mu.Lock()
	err := w.settleFiles(m, func(*os.Root, txFile, func(string)) error {
		called = true
		if !busy() {
			t.Error("d is not locked while its file is settled")
		}
		return nil
	})
	w.mu.Unlock()
	if err != nil || !called {
		t.Fatalf("settleFiles = %v, called %v", err, called)
	}
	if busy() {
		t.Error("d is still locked after the manifest was settled")
	}
}
