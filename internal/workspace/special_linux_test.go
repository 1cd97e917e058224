package workspace

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"golang.org/x/sys/unix"
)

// mkSpecial makes a special file of kind ("fifo", "socket", "device":
// a character device like /dev/null, root only) at name; it skips t
// where that cannot be made.
func mkSpecial(t *testing.T, kind, name string) {
	t.Helper()
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(name, 0o644)
	case "socket":
		var l net.Listener
		if l, err = net.Listen("unix", name); err == nil {
			t.Cleanup(func() { l.Close() })
		}
	case "device":
		err = syscall.Mknod(name, syscall.S_IFCHR|0o666, 1<<8|3) // 1:3, /dev/null
	}
	if err != nil {
		t.Skipf("cannot make a %s: %v", kind, err)
	}
}

// returnsSoon runs f and fails t when it has not returned after 10 s; a FIFO
// it blocks on is then opened for writing to let it go.
func returnsSoon(t *testing.T, fifo string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("still blocked after 10 s")
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
	}
}

// TestWriteUnderSpecialFile: a path through a FIFO, socket or device
// ("fifo/x") is refused as invalid_target. The directory lock opened the
// component as the directory to lock: a FIFO blocked that open, and
// every later change of the workspace behind it, until a writer came;
// a device was opened (which can act on it: a tape rewinds).
func TestWriteUnderSpecialFile(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "socket", "device"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			special := filepath.Join(root, "sp")
			mkSpecial(t, kind, special)
			var err error
			returnsSoon(t, special, func() {
				_, err = w.Commit([]Change{{Path: "sp/x", Content: []byte("x")}}, CommitOptions{})
			})
			wantCode(t, err, fserr.InvalidTarget)
			if _, err := w.Commit([]Change{{Path: "a.txt", Content: []byte("a")}}, CommitOptions{}); err != nil {
				t.Errorf("the next commit: %v", err)
			}
			assertNoStrays(t, root)
		})
	}
}

// TestRecoveryPastFIFO: a transaction killed while it rewrote a
// hard-linked file in place, whose file was then replaced by a FIFO,
// is recovered without blocking. Recovery hashed what was at the path
// with a plain open, which a FIFO holds until a writer comes: Open,
// and every change after it, hung. The path now stays blocked, with the
// cause, until the FIFO goes; the rest of the workspace works.
func TestRecoveryPastFIFO(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	h := filepath.Join(root, "h.txt")
	writeFile(t, h, "h1", 0o644)
	if err := os.Link(h, filepath.Join(root, "h2.txt")); err != nil {
		t.Fatal(err)
	}
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	w.hooks.crashAt = func(step string) bool { return step == "apply/0" }
	if _, err := w.Commit([]Change{{Path: "h.txt", Content: []byte("h2")}}, CommitOptions{}); err == nil {
		t.Fatal("the simulated crash did not stop the commit")
	}
	if err := os.Remove(h); err != nil {
		t.Fatal(err)
	}
	mkSpecial(t, "fifo", h)
	var w2 *Workspace
	var err error
	returnsSoon(t, h, func() { w2, err = Open(Options{Roots: []string{root}, StateDir: state}) })
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer w2.Close()
	if _, err := w2.Commit([]Change{{Path: "a.txt", Content: []byte("a")}}, CommitOptions{}); err != nil {
		t.Errorf("a commit of another file: %v", err)
	}
	_, err = w2.Commit([]Change{{Path: "h.txt", Content: []byte("h3")}}, CommitOptions{})
	wantCode(t, err, fserr.Conflict)
	if err := os.Remove(h); err != nil {
		t.Fatal(err)
	}
	if _, err := w2.Commit([]Change{{Path: "h.txt", Content: []byte("h3")}}, CommitOptions{}); err != nil {
		t.Errorf("a commit once the FIFO is gone: %v", err)
	}
	assertNoStrays(t, root)
	assertNoManifests(t, w2)
}

// TestReadSpecialFile: reading a socket, FIFO or device is invalid_target
// without opening it. A socket answered io_error "no such device or
// address" (open(2)'s ENXIO), and a device was opened only to be
// refused, which can act on it (a tape rewinds, a watchdog starts);
// inotify sees such an open.
func TestReadSpecialFile(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "socket", "device"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			special := filepath.Join(root, "sp")
			mkSpecial(t, kind, special)
			in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(in)
			if _, err := unix.InotifyAddWatch(in, special, unix.IN_OPEN); err != nil {
				t.Fatal(err)
			}
			returnsSoon(t, special, func() { _, err = w.ReadText("sp") })
			wantCode(t, err, fserr.InvalidTarget)
			buf := make([]byte, 4096)
			if n, _ := unix.Read(in, buf); n > 0 {
				t.Errorf("the %s was opened", kind)
			}
		})
	}
}
