package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	writeFile(t, filepath.Join(base, "file"), "x", 0o644)
	cases := []struct {
		name string
		opts Options
		code fserr.Code
	}{
		{"no roots", Options{StateDir: base}, fserr.BadRequest},
		{"missing root", Options{Roots: []string{filepath.Join(base, "nope")}, StateDir: base}, fserr.NotFound},
		{"root is a file", Options{Roots: []string{filepath.Join(base, "file")}, StateDir: base}, fserr.InvalidTarget},
		{"empty root", Options{Roots: []string{""}, StateDir: base}, fserr.InvalidPath},
		{"NUL in root", Options{Roots: []string{base + "/\x00"}, StateDir: base}, fserr.InvalidPath},
		{"negative limit", Options{Roots: []string{base}, StateDir: base, Undo: UndoLimits{PerFile: -1}}, fserr.BadRequest},
		{"state dir is a file", Options{Roots: []string{base}, StateDir: filepath.Join(base, "file")}, fserr.InvalidTarget},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, err := Open(tc.opts)
			if err == nil {
				w.Close()
			}
			wantCode(t, err, tc.code)
		})
	}
}

func TestRootsAndClose(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	w, err := Open(Options{Roots: []string{a + "/./", b + "//"}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{a, b}, w.Roots()); diff != "" {
		t.Errorf("Roots mismatch (-want +got):\n%s", diff)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = w.ReadText("x")
	wantCode(t, err, fserr.IOError)
	_, err = w.Commit([]Change{{Path: "x", Content: []byte("x")}}, CommitOptions{})
	wantCode(t, err, fserr.IOError)
	_, err = w.Undo("x")
	wantCode(t, err, fserr.IOError)
}

// TestDefaultStateDir sets the environment, so it cannot run in parallel.
func TestDefaultStateDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	if got, err := DefaultStateDir(); err != nil || got != filepath.Join(dir, "fsplane") {
		t.Errorf("with XDG_STATE_HOME: %q, %v", got, err)
	}
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", home)
	if got, err := DefaultStateDir(); err != nil || got != filepath.Join(home, ".local/state/fsplane") {
		t.Errorf("with HOME: %q, %v", got, err)
	}
}

// TestRecoverEdgeCases: manifests Open cannot act on.
func TestRecoverEdgeCases(t *testing.T) {
	t.Parallel()
	t.Run("unreadable manifest fails Open", func(t *testing.T) {
		t.Parallel()
		state := t.TempDir()
		writeFile(t, filepath.Join(state, txDir, "0123456789abcdef.json"), "{torn", 0o600)
		_, err := Open(Options{Roots: []string{t.TempDir()}, StateDir: state})
		wantCode(t, err, fserr.IOError)
	})
	t.Run("manifest of a vanished root is kept for its return", func(t *testing.T) {
		t.Parallel()
		state := t.TempDir()
		m := `{"id":"0123456789abcdef","state":"pending","files":[{"root":"/nonexistent-fsplane-root","rel":"a","kind":"create","existed":false}]}`
		writeFile(t, filepath.Join(state, txDir, "0123456789abcdef.json"), m, 0o600)
		writeFile(t, filepath.Join(state, txDir, "fedcba9876543210.json.tmp"), "{", 0o600)
		openTestWorkspace(t, Options{Roots: []string{t.TempDir()}, StateDir: state})
		if _, err := os.Stat(filepath.Join(state, txDir, "0123456789abcdef.json")); err != nil {
			t.Errorf("the manifest of a vanished root was dropped: %v", err)
		}
		if _, err := os.Stat(filepath.Join(state, txDir, "fedcba9876543210.json.tmp")); !isNotExist(err) {
			t.Errorf("a torn manifest write survived: %v", err)
		}
	})
	t.Run("manifest of another workspace's root is left alone", func(t *testing.T) {
		t.Parallel()
		state, other := t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(other, "a"), "theirs", 0o644)
		m := `{"id":"0123456789abcdef","state":"pending","files":[{"root":"` + other + `","rel":"a","kind":"create","new_version":"` + Version([]byte("theirs")) + `"}]}`
		writeFile(t, filepath.Join(state, txDir, "0123456789abcdef.json"), m, 0o600)
		openTestWorkspace(t, Options{Roots: []string{t.TempDir()}, StateDir: state})
		if got := readFile(t, filepath.Join(other, "a")); got != "theirs" {
			t.Errorf("a file in a foreign root was touched: %q", got)
		}
		if _, err := os.Stat(filepath.Join(state, txDir, "0123456789abcdef.json")); err != nil {
			t.Errorf("foreign manifest removed: %v", err)
		}
		// The workspace that has the root settles it.
		openTestWorkspace(t, Options{Roots: []string{other}, StateDir: state})
		if _, err := os.Stat(filepath.Join(other, "a")); !isNotExist(err) {
			t.Errorf("the file the transaction created survived its rollback: %v", err)
		}
	})
	t.Run("committed manifest is finished", func(t *testing.T) {
		t.Parallel()
		root, state := t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(root, "a"), "new", 0o644)
		writeFile(t, filepath.Join(root, ".a.fsplane-0123456789abcdef.bak"), "old", 0o644)
		m := `{"id":"0123456789abcdef","state":"committed","files":[{"root":"` + root + `","rel":"a","kind":"replace","backup":".a.fsplane-0123456789abcdef.bak","existed":true}]}`
		writeFile(t, filepath.Join(state, txDir, "0123456789abcdef.json"), m, 0o600)
		w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
		assertNoManifests(t, w)
		assertNoStrays(t, root)
		if got := readFile(t, filepath.Join(root, "a")); got != "new" {
			t.Errorf("a = %q", got)
		}
	})
}

// TestOpenWaitsForLiveTransaction: a workspace opened while another holds
// the state lock waits instead of rolling back the live transaction.
func TestOpenWaitsForLiveTransaction(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	w1 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	opened := make(chan *Workspace, 1)
	hooked := false
	w1.hooks.crashAt = func(step string) bool {
		if step == "apply/0" {
			hooked = true
			go func() {
				w2, err := Open(Options{Roots: []string{root}, StateDir: state})
				if err != nil {
					t.Error(err)
				}
				opened <- w2
			}()
			// An Open that did not wait would be done well within this.
			time.Sleep(100 * time.Millisecond)
			select {
			case w2 := <-opened:
				t.Error("Open did not wait for the live transaction")
				opened <- w2
			default:
			}
			// A recovery that ran would have removed the live manifest.
			if n := manifestCount(t, state); n != 1 {
				t.Errorf("%d manifests during the transaction, want its own", n)
			}
		}
		return false
	}
	if _, err := w1.Commit([]Change{{Path: "a", Content: []byte("a")}, {Path: "b", Content: []byte("b")}}, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if !hooked {
		t.Fatal("the commit never reached step apply/0: nothing was tested")
	}
	w2 := <-opened
	if w2 == nil {
		t.Fatal("the second Open failed")
	}
	defer w2.Close()
	for _, n := range []string{"a", "b"} {
		if got := readFile(t, filepath.Join(root, n)); got != n {
			t.Errorf("%s = %q; the live transaction was disturbed", n, got)
		}
	}
	// The transaction is settled: no manifest for a later Open to act on
	// (a committed one left behind would be "finished" again over newer
	// edits), no temp or backup beside the files.
	assertNoManifests(t, w2)
	assertNoStrays(t, root)
}

// manifestCount returns the number of transaction manifests in state.
func manifestCount(t *testing.T, state string) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(state, txDir))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	return n
}
