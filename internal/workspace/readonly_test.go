package workspace

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// unprivEnv marks a child of runUnprivileged: the test binary, re-executed
// under an account that is not root.
const unprivEnv = "FSPLANE_WORKSPACE_UNPRIVILEGED"

// unprivUID is the account runUnprivileged runs as (nobody, on Linux).
const unprivUID = 65534

// runUnprivileged reports whether the test should run here: yes unless
// the process is root. As root it re-runs the test (the pattern) in a
// copy of this test binary under unprivUID, where the kernel's permission
// checks apply, reports the child's failure as the test's, and says no;
// it skips the test when that cannot be done.
func runUnprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return true
	}
	if os.Getenv(unprivEnv) != "" {
		t.Fatal("still root in the unprivileged child")
	}
	dir, err := os.MkdirTemp("", "fsplane-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, tmp} {
		if err := os.Chmod(d, 0o777|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "workspace.test")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Skipf("cannot copy the test binary: %v", err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), unprivEnv+"=1", "TMPDIR="+tmp, "HOME="+tmp, "GOCOVERDIR=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: unprivUID, Gid: unprivUID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil && strings.Contains(string(out), "--- PASS: "+t.Name()):
		t.Logf("ran as uid %d:\n%s", unprivUID, out)
	case err == nil:
		t.Errorf("the unprivileged run did not pass:\n%s", out)
	case errors.As(err, &ee):
		t.Errorf("as uid %d:\n%s", unprivUID, out)
	default:
		t.Skipf("cannot run the test under uid %d: %v", unprivUID, err)
	}
	return false
}

// TestReadOnlyRefused: every operation that replaces or deletes an
// existing file's content refuses a file the process cannot open for
// writing (mode 0444, not root) with permission_denied, and changes
// nothing; a move of the file itself, a link to it and a tree holding it
// are not its content and go ahead.
func TestReadOnlyRefused(t *testing.T) {
	if !runUnprivileged(t) {
		return
	}
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T, w *Workspace, root string) // ro.txt (0444) exists already
		op    func(w *Workspace) error
		ok    bool              // allowed: no error
		files map[string]string // afterwards ("" absent); ro.txt is "ro" unless named
		// conflict: refused as a conflict, not permission_denied (the
		// chmod that made the file read-only is later work undo keeps).
		conflict bool
	}{
		{name: "write", op: func(w *Workspace) error {
			_, err := w.Commit([]Change{{Path: "ro.txt", Content: []byte("new")}}, CommitOptions{Op: "write"})
			return err
		}},
		{name: "edit with its version", op: func(w *Workspace) error {
			_, err := w.Commit([]Change{{Path: "ro.txt", Content: []byte("new"), ExpectedVersion: Version([]byte("ro"))}}, CommitOptions{Op: "edit"})
			return err
		}},
		{name: "delete", op: func(w *Workspace) error {
			_, err := w.Commit([]Change{{Path: "ro.txt", Delete: true}}, CommitOptions{Op: "delete"})
			return err
		}},
		{name: "hard-linked",
			setup: func(t *testing.T, w *Workspace, root string) {
				if err := os.Link(filepath.Join(root, "ro.txt"), filepath.Join(root, "ro2.txt")); err != nil {
					t.Fatal(err)
				}
			},
			op: func(w *Workspace) error {
				_, err := w.Commit([]Change{{Path: "ro.txt", Content: []byte("new")}}, CommitOptions{})
				return err
			},
			files: map[string]string{"ro2.txt": "ro"}},
		{name: "transaction",
			setup: func(t *testing.T, w *Workspace, root string) {
				writeFile(t, filepath.Join(root, "rw.txt"), "rw", 0o644)
			},
			op: func(w *Workspace) error {
				_, err := w.Commit([]Change{{Path: "rw.txt", Content: []byte("new")}, {Path: "ro.txt", Content: []byte("new")}}, CommitOptions{Op: "patch"})
				return err
			},
			files: map[string]string{"rw.txt": "rw"}},
		{name: "remove", op: func(w *Workspace) error {
			_, err := w.Remove("ro.txt", false, "")
			return err
		}},
		{name: "copy over",
			setup: func(t *testing.T, w *Workspace, root string) {
				writeFile(t, filepath.Join(root, "src.txt"), "src", 0o644)
			},
			op: func(w *Workspace) error {
				_, err := w.Copy("src.txt", "ro.txt", true, nil)
				return err
			}},
		{name: "copy a tree over",
			setup: func(t *testing.T, w *Workspace, root string) {
				writeFile(t, filepath.Join(root, "a", "ro.txt"), "src", 0o644)
				writeFile(t, filepath.Join(root, "b", "ro.txt"), "ro", 0o444)
			},
			op: func(w *Workspace) error {
				_, err := w.Copy("a", "b", true, nil)
				return err
			},
			files: map[string]string{"b/ro.txt": "ro"}},
		{name: "upload", op: func(w *Workspace) error {
			_, err := w.WriteStream(ctx, "ro.txt", strings.NewReader("new"), StreamOptions{})
			return err
		}},
		{name: "tree merge",
			setup: func(t *testing.T, w *Workspace, root string) {
				writeFile(t, filepath.Join(root, "d", "ro.txt"), "ro", 0o444)
			},
			op: func(w *Workspace) error {
				tw, err := w.CreateTree("d", nil)
				if err != nil {
					return err
				}
				if _, err := tw.File("ro.txt", 0o644, strings.NewReader("new")); err != nil {
					return err
				}
				_, err = tw.Commit()
				return err
			},
			files: map[string]string{"d/ro.txt": "ro"}},
		{name: "move over",
			setup: func(t *testing.T, w *Workspace, root string) {
				writeFile(t, filepath.Join(root, "src.txt"), "src", 0o644)
			},
			op: func(w *Workspace) error {
				_, err := w.Move("src.txt", "ro.txt", true, "")
				return err
			},
			files: map[string]string{"src.txt": "src"}},
		{name: "undo of an edit",
			setup: func(t *testing.T, w *Workspace, root string) {
				must(t, os.Chmod(filepath.Join(root, "ro.txt"), 0o644))
				commit(t, w, "edit", Change{Path: "ro.txt", Content: []byte("edited")})
				must(t, os.Chmod(filepath.Join(root, "ro.txt"), 0o444))
			},
			op: func(w *Workspace) error {
				_, err := w.Undo("ro.txt")
				return err
			},
			conflict: true,
			files:    map[string]string{"ro.txt": "edited"}},
		{name: "undo of a create",
			setup: func(t *testing.T, w *Workspace, root string) {
				commit(t, w, "write", Change{Path: "new.txt", Content: []byte("new"), Mode: 0o444})
			},
			op: func(w *Workspace) error {
				_, err := w.Undo("new.txt")
				return err
			},
			files: map[string]string{"new.txt": "new"}},
		{name: "move the file itself", ok: true,
			op: func(w *Workspace) error {
				_, err := w.Move("ro.txt", "moved.txt", false, "")
				return err
			},
			files: map[string]string{"ro.txt": "", "moved.txt": "ro"}},
		{name: "remove a link to it", ok: true,
			setup: func(t *testing.T, w *Workspace, root string) {
				must(t, os.Symlink("ro.txt", filepath.Join(root, "link")))
			},
			op: func(w *Workspace) error {
				_, err := w.Remove("link", false, "")
				return err
			}},
		{name: "remove a tree holding one", ok: true,
			setup: func(t *testing.T, w *Workspace, root string) {
				writeFile(t, filepath.Join(root, "d", "ro.txt"), "ro", 0o444)
			},
			op: func(w *Workspace) error {
				_, err := w.Remove("d", true, "")
				return err
			},
			files: map[string]string{"d/ro.txt": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, "ro.txt"), "ro", 0o444)
			if tt.setup != nil {
				tt.setup(t, w, root)
			}
			err := tt.op(w)
			switch {
			case tt.ok:
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			case tt.conflict:
				wantCode(t, err, fserr.Conflict)
			default:
				e := wantCode(t, err, fserr.PermissionDenied)
				if !strings.Contains(e.Message, "read-only") || !strings.Contains(e.Hint, "chmod u+w") {
					t.Errorf("message %q, hint %q: want it to say the file is read-only and how to make it writable", e.Message, e.Hint)
				}
			}
			want := map[string]string{"ro.txt": "ro"}
			for k, v := range tt.files {
				want[k] = v
			}
			for name, content := range want {
				b, err := os.ReadFile(filepath.Join(root, name))
				if content == "" && !isNotExist(err) || content != "" && string(b) != content {
					t.Errorf("%s: %q, %v; want %q", name, b, err, content)
				}
			}
			assertNoStrays(t, root)
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
