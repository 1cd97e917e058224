package workspace

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

func TestLookupOwner(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		user string
		uid  int // the process's
		want *Owner
		msg  string
	}{
		{name: "empty", user: "", uid: 501, want: nil},
		{name: "root as root", user: "root", uid: 0, want: &Owner{UID: 0, GID: 0, Name: "root"}},
		{name: "numeric", user: "0", uid: 0, want: &Owner{UID: 0, GID: 0, Name: "root"}},
		{name: "own account", user: "root", uid: 0, want: &Owner{Name: "root"}},
		{name: "unknown", user: "no-such-user-fsplane", uid: 0, msg: "no such user: no-such-user-fsplane"},
		{name: "unknown uid", user: "987654", uid: 0, msg: "no such user: 987654"},
		{name: "not root", user: "root", uid: 501,
			msg: "cannot run as root: fsplane is running as uid 501 and only root can change identity"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := lookupOwner(tc.user, tc.uid)
			if tc.msg != "" {
				e := wantCode(t, err, fserr.BadRequest)
				if e.Message != tc.msg {
					t.Errorf("message %q, want %q", e.Message, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("owner (-want +got):\n%s", diff)
			}
		})
	}
	if os.Getuid() != 0 {
		if _, err := LookupOwner("root"); err == nil {
			t.Error("a non-root process may name root")
		}
	}
}

func ownerOf(t *testing.T, name string) (int, int) {
	t.Helper()
	fi, err := os.Lstat(name)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}

// TestOwnerOfCreated: new files and the directories made for them get the
// owner; existing files keep theirs. Needs root.
func TestOwnerOfCreated(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("only root can give files away")
	}
	w, root := newTestWorkspace(t)
	o := &Owner{UID: 1234, GID: 1234, Name: "u1234"}
	writeFile(t, filepath.Join(root, "existing"), "x", 0o644)
	writeFile(t, filepath.Join(root, "src/a"), "a", 0o644)
	if err := os.Symlink("a", filepath.Join(root, "src/l")); err != nil {
		t.Fatal(err)
	}
	commit(t, w, "write",
		Change{Path: "x/y/new.txt", Content: []byte("n"), Owner: o},
		Change{Path: "existing", Content: []byte("y"), Owner: o})
	commit(t, w, "write", Change{Path: "single/new.txt", Content: []byte("n"), Mode: 0o755 | os.ModeSetuid, Owner: o})
	if _, err := w.Mkdir("m/n", true, o); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Copy("src", "c/copy", false, o); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Copy("src/a", "c2/a", false, o); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{
		"x", "x/y", "x/y/new.txt", "single", "single/new.txt", "m", "m/n",
		"c", "c/copy", "c/copy/a", "c/copy/l", "c2", "c2/a",
	} {
		if uid, gid := ownerOf(t, filepath.Join(root, n)); uid != 1234 || gid != 1234 {
			t.Errorf("%s owned by %d:%d, want 1234:1234", n, uid, gid)
		}
	}
	if uid, _ := ownerOf(t, filepath.Join(root, "existing")); uid != 0 {
		t.Errorf("existing file changed owner to %d", uid)
	}
	if fi, _ := os.Stat(filepath.Join(root, "single/new.txt")); fi.Mode()&os.ModeSetuid == 0 {
		t.Errorf("setuid bit lost: %v", fi.Mode())
	}
	// A Move keeps the file's owner.
	if _, err := w.Move("c2/a", "moved", false, ""); err != nil {
		t.Fatal(err)
	}
	if uid, _ := ownerOf(t, filepath.Join(root, "moved")); uid != 1234 {
		t.Errorf("moved file owned by %d", uid)
	}
}

func TestOwnerRefusedWhenNotPermitted(t *testing.T) {
	t.Parallel()
	if os.Getuid() == 0 {
		// checkOwnerAs is what Commit, Mkdir and Copy use; test it as a
		// non-root process would see it.
		e := checkOwnerAs("write", "f", &Owner{UID: 1234, GID: 1234, Name: "alice"}, 501)
		if e == nil || e.Code != fserr.BadRequest ||
			e.Message != "cannot run as alice: fsplane is running as uid 501 and only root can change identity" {
			t.Fatalf("got %v", e)
		}
		return
	}
	w, root := newTestWorkspace(t)
	_, err := w.Commit([]Change{{Path: "f", Content: []byte("x"), Owner: &Owner{UID: os.Getuid() + 1, Name: "other"}}}, CommitOptions{})
	wantCode(t, err, fserr.BadRequest)
	if _, err := os.Stat(filepath.Join(root, "f")); !isNotExist(err) {
		t.Error("file written despite the refused owner")
	}
}
