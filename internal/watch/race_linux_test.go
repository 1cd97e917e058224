package watch

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsplane/fsplane/internal/testenv"
)

// watchedInodes returns the inodes (with their device, in the kernel's
// encoding) the registry's inotify instance holds watches on, as
// /proc/self/fdinfo lists them: "inotify wd:1 ino:1a2b sdev:800001 …".
func watchedInodes(t *testing.T, r *Registry) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", r.in.fd))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if !strings.HasPrefix(line, "inotify ") {
			continue
		}
		var ino, dev string
		for f := range strings.FieldsSeq(line) {
			if v, ok := strings.CutPrefix(f, "ino:"); ok {
				ino = v
			} else if v, ok := strings.CutPrefix(f, "sdev:"); ok {
				dev = v
			}
		}
		out[ino+"/"+dev] = true
	}
	return out
}

// offered reports whether w has taken an event for an entry called name
// (queued or emitted).
func offered(w *Watcher, name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.queue {
		if path.Base(p.path) == name {
			return true
		}
	}
	for i := range w.count {
		if path.Base(w.ring[(w.start+i)%len(w.ring)].Path) == name {
			return true
		}
	}
	return false
}

// inodeKey is a directory's key in watchedInodes.
func inodeKey(t *testing.T, p string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x/%x", st.Ino, uint64(unix.Major(st.Dev))<<20|uint64(unix.Minor(st.Dev)))
}

// exchange swaps two names with renameat2(RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// TestSubdirSwapRace: in a watched tree, x is a directory and xl a link
// to a directory outside the tree. A directory appears in x and, right
// after, x and xl are exchanged (RENAME_EXCHANGE), before the reader
// handles the creation (it is held back, as a busy daemon would be, so
// every try hits the window). The new directory is known by its path
// below x, which now leads outside, to a twin of the same name there:
// its watch must be on the directory that appeared, reached through the
// watched directories' descriptors, never on the twin, and nothing that
// happens outside may be reported. (Adding by path, about half the tries
// put a watch outside.)
func TestSubdirSwapRace(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	x, xl := filepath.Join(root, "x"), filepath.Join(root, "xl")
	for _, d := range []string{x, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../outside", xl); err != nil {
		t.Fatal(err)
	}
	if err := exchange(x, xl); errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("RENAME_EXCHANGE unsupported here: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	if err := exchange(x, xl); err != nil {
		t.Fatal(err)
	}
	// The directory that starts as x, whatever its name at the moment.
	real, err := os.Open(x)
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	const n = 20
	outs := map[string]string{inodeKey(t, outside): outside}
	for i := range n {
		d := filepath.Join(outside, fmt.Sprintf("n%03d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		outs[inodeKey(t, d)] = d
	}

	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: root, Recursive: true})
	for i := range n {
		name := fmt.Sprintf("n%03d", i)
		// The directory appears and, before the reader gets to its
		// event (held back, as by a busy daemon), x becomes the link.
		r.mu.Lock()
		err := unix.Mkdirat(int(real.Fd()), name, 0o755)
		if err == nil {
			err = exchange(x, xl)
		}
		r.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, bound, "the reader to take the new directory", func() bool { return offered(w, name) })
		r.mu.Lock() // the reader is done with the event
		watched := watchedInodes(t, r)
		r.mu.Unlock()
		if k := inodeKey(t, filepath.Join(outside, name)); watched[k] {
			t.Errorf("try %d: a watch is on %s, outside the watched tree", i, outs[k])
		}
		if err := exchange(x, xl); err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	watched := watchedInodes(t, r)
	r.mu.Unlock()
	for k, d := range outs {
		if watched[k] {
			t.Errorf("a watch is on %s, outside the watched tree", d)
		}
	}
	// What happens outside is never reported.
	for _, d := range outs {
		if err := os.WriteFile(filepath.Join(d, "leak"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ev := quiet(w, 0)
	for _, e := range ev {
		if path.Base(e.Path) == "leak" {
			t.Errorf("an event from outside the tree was reported: %+v", e)
		}
	}
}
