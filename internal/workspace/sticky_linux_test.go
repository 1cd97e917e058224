package workspace

import (
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

// stickyEnv hands the fixtures of TestStickyDirForeignFileRefused, made as
// root, to the test binary re-run under unprivUID.
const stickyEnv = "FSPLANE_WORKSPACE_STICKY_FIXTURES"

// TestStickyDirForeignFileRefused: in a sticky directory (chmod +t, as
// /tmp) that the process does not own, the kernel lets it neither rename
// over nor unlink a file of another account, even one writable for all.
// A change of such a file is refused as permission_denied before anything
// is written. It used to fail only at its apply step, after the
// transaction had linked its backup beside the file — a link the process
// cannot remove either: the rollback failed, the .bak stayed in the
// directory, and every path of the change (a.txt too) stayed blocked at
// every later mutation and restart.
func TestStickyDirForeignFileRefused(t *testing.T) {
	cases := []struct {
		name    string
		changes []Change
		ok      bool // allowed: a file with two links is rewritten in place
	}{
		{"patch deleting it", []Change{{Path: "a.txt", Content: []byte("new a")}, {Path: "st/f.txt", Delete: true}}, false},
		{"patch replacing it", []Change{{Path: "a.txt", Content: []byte("new a")}, {Path: "st/f.txt", Content: []byte("new f")}}, false},
		{"write", []Change{{Path: "st/f.txt", Content: []byte("new f")}}, false},
		{"delete", []Change{{Path: "st/f.txt", Delete: true}}, false},
		{"patch deleting a file with two links", []Change{{Path: "a.txt", Content: []byte("new a")}, {Path: "st/h.txt", Delete: true}}, false},
		{"patch deleting a link", []Change{{Path: "a.txt", Content: []byte("new a")}, {Path: "st/l", Delete: true, Entry: true}}, false},
		{"patch replacing a link", []Change{{Path: "a.txt", Content: []byte("new a")}, {Path: "st/l", Content: []byte("file"), Entry: true}}, false},
		{"write of a file with two links", []Change{{Path: "st/h.txt", Content: []byte("new h")}}, true},
	}
	if base := os.Getenv(stickyEnv); base != "" {
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				dir := filepath.Join(base, strconv.Itoa(i))
				root, state := filepath.Join(dir, "r"), filepath.Join(dir, "state")
				w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
				before := snapshot(t, root)
				_, err := w.Commit(tc.changes, CommitOptions{Op: "patch"})
				if tc.ok {
					if err != nil {
						t.Fatalf("commit: %v", err)
					}
					if b, _ := os.ReadFile(filepath.Join(root, "st", "h-link.txt")); string(b) != "new h" {
						t.Errorf("the other link holds %q, want the new content", b)
					}
					assertNoStrays(t, root)
					return
				}
				e := wantCode(t, err, fserr.PermissionDenied)
				if !strings.Contains(e.Message, "sticky") {
					t.Errorf("message %q does not say why (the sticky directory)", e.Message)
				}
				if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
					t.Errorf("files changed (-before +after):\n%s", diff)
				}
				assertNoStrays(t, root)
				assertNoManifests(t, w)
				if _, err := w.Commit([]Change{{Path: "a.txt", Content: []byte("later")}}, CommitOptions{Op: "write"}); err != nil {
					t.Errorf("a later write of a.txt: %v", err)
				}
			})
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a file of another account")
	}
	base, err := os.MkdirTemp("", "fsplane-sticky-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(base, 0o755))
	for i := range cases {
		dir := filepath.Join(base, strconv.Itoa(i))
		root, st := filepath.Join(dir, "r"), filepath.Join(dir, "r", "st")
		must(os.MkdirAll(st, 0o755))
		must(os.Mkdir(filepath.Join(dir, "state"), 0o700))
		writeFile(t, filepath.Join(root, "a.txt"), "old a", 0o644)
		writeFile(t, filepath.Join(st, "f.txt"), "old f", 0o666)
		writeFile(t, filepath.Join(st, "h.txt"), "old h", 0o666)
		must(os.Link(filepath.Join(st, "h.txt"), filepath.Join(st, "h-link.txt")))
		must(os.Symlink("f.txt", filepath.Join(st, "l")))
		for _, n := range []string{"f.txt", "h.txt"} {
			must(os.Chmod(filepath.Join(st, n), 0o666)) // past the umask
		}
		for _, p := range []string{dir, filepath.Join(dir, "state"), root, filepath.Join(root, "a.txt")} {
			must(os.Chown(p, unprivUID, unprivUID))
		}
		must(os.Chmod(st, 0o777|os.ModeSticky)) // root's, like /tmp
	}
	bin := filepath.Join(base, "workspace.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Skipf("cannot copy the test binary: %v", err)
	}
	must(os.WriteFile(bin, data, 0o755))
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), stickyEnv+"="+base, "TMPDIR="+base, "HOME="+base, "GOCOVERDIR=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: unprivUID, Gid: unprivUID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil && strings.Contains(string(out), "--- PASS: "+t.Name()):
		t.Logf("ran as uid %d:\n%s", unprivUID, out)
	case err == nil:
		t.Errorf("the unprivileged run did not pass:\n%s", out)
	default:
		t.Errorf("as uid %d: %v\n%s", unprivUID, err, out)
	}
}
