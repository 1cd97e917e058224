package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/fsplane/fsplane/internal/testenv"
)

// await polls w after *cursor until an event satisfying pred arrives and
// returns it; it fails t after bound.
func await(t *testing.T, w *Watcher, cursor *int64, what string, pred func(Event) bool) Event {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("timed out waiting for %s", what)
		}
		res := w.Poll(context.Background(), *cursor, 1000, left)
		*cursor = res.Cursor
		for _, e := range res.Events {
			if pred(e) {
				return e
			}
		}
	}
}

func is(typ, p string) func(Event) bool {
	return func(e Event) bool { return e.Type == typ && e.Path == p }
}

// identify returns the identity of the file at p by path, not following
// a final symbolic link (a test's view; the registry itself reaches
// files by descriptor only).
func identify(p string) (fileID, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, true
}

// kernelWatches counts the inotify watches the registry's instance holds.
func kernelWatches(t *testing.T, r *Registry) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", r.in.fd))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "inotify wd:")
}

// checkWatches: the kernel holds exactly the watches the registry knows.
func checkWatches(t *testing.T, r *Registry, want int) {
	t.Helper()
	testenv.WaitFor(t, bound, fmt.Sprintf("%d inotify watches", want), func() bool {
		r.mu.Lock()
		held := len(r.dirs)
		r.mu.Unlock()
		return held == want && kernelWatches(t, r) == want
	})
}

// TestRecreatedDirWhileHeld: a directory removed while something still
// references it (a shell's cwd, an open descriptor) reports DELETE_SELF
// only when released, after the parent's DELETE and CREATE of the new
// directory of the same name. The new directory must be watched.
func TestRecreatedDirWhileHeld(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := filepath.Join(dir, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir, Recursive: true})
	held, err := os.Open(d)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := os.Remove(d); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	var cursor int64
	await(t, w, &cursor, "create of the new d", is(Create, d))
	f := filepath.Join(d, "f")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	await(t, w, &cursor, "create of d/f in the recreated directory", is(Create, f))
	held.Close()
	checkWatches(t, r, 2)
}

// TestMoveThenRecreateBeforeRead: mkdir a; mv a b; mkdir a, all before
// the reader looks. The watch added for the first create lands on the
// second a; the rename must not carry it to b.
func TestMoveThenRecreateBeforeRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir, Recursive: true})
	r.mu.Lock() // hold the reader back
	sh(t, dir, "mkdir a && mv a b && mkdir a")
	r.mu.Unlock()
	var cursor int64
	await(t, w, &cursor, "the rename", is(Rename, filepath.Join(dir, "b")))
	sh(t, dir, "echo x > b/f && echo y > a/g")
	seen := map[string]bool{}
	await(t, w, &cursor, "creates in b and a", func(e Event) bool {
		if e.Type == Create {
			seen[e.RelativePath] = true
		}
		return seen["b/f"] && seen["a/g"]
	})
	checkWatches(t, r, 3)
	r.mu.Lock()
	for p, dw := range r.byPath {
		if id, ok := identify(p); !ok || id != dw.id {
			t.Errorf("watch for %s is on another directory", p)
		}
	}
	r.mu.Unlock()
}

// TestNoFoldAcrossRename: create a, rename it to b, create a again: the
// rename is an event for a, so the second create does not fold into the
// first.
func TestNoFoldAcrossRename(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir, Debounce: 2 * time.Second})
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, step := range []func() error{
		func() error { f, err := os.Create(a); f.Close(); return err },
		func() error { return os.Rename(a, b) },
		func() error { f, err := os.Create(a); f.Close(); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	got := collect(t, w, 3)
	want := []short{{Create, "a", ""}, {Rename, "b", "a"}, {Create, "a", ""}}
	if diff := cmp.Diff(want, shorten(got, dir)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestSymlinkedRoot: a watcher on a symbolic link to a directory (a
// workspace root configured through a link) reports changes under the
// link's path, and shares watches with a watcher on the real path.
func TestSymlinkedRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real"), filepath.Join(dir, "link")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "sub", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := newReg(t, Options{})
	wl := mustCreate(t, r, Config{Path: link, Recursive: true})
	wr := mustCreate(t, r, Config{Path: real, Recursive: true})
	wf := mustCreate(t, r, Config{Path: filepath.Join(link, "sub", "f")})
	if err := os.WriteFile(filepath.Join(real, "sub", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var cl, cr, cf int64
	e := await(t, wl, &cl, "write through the link", is(Write, filepath.Join(link, "sub", "f")))
	if e.RelativePath != "sub/f" || e.Stat == nil || e.Stat.Size != 1 {
		t.Errorf("event %+v", e)
	}
	await(t, wr, &cr, "write on the real path", is(Write, filepath.Join(real, "sub", "f")))
	e = await(t, wf, &cf, "write for the file watcher", is(Write, filepath.Join(link, "sub", "f")))
	if e.RelativePath != "f" {
		t.Errorf("event %+v", e)
	}
	checkWatches(t, r, 2)
}

// TestWaitOnDirectoryIsExact: Wait on a directory reports events on the
// directory itself, not on its entries.
func TestWaitOnDirectoryIsExact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := filepath.Join(dir, "d")
	child := filepath.Join(d, "child")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(child, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := newReg(t, Options{})
	type result struct {
		ev  Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		ev, err := r.Wait(context.Background(), d, []string{Remove}, bound)
		done <- result{ev, err}
	}()
	testenv.WaitFor(t, bound, "the wait's watcher", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.hidden == 1
	})
	if err := os.Remove(child); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(d); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.ev.Type != Remove || res.ev.Path != d || !res.ev.IsDir {
		t.Fatalf("wait on %s: %+v %v", d, res.ev, res.err)
	}
}

// TestPollCursorAhead: a cursor past the latest sequence number (from
// another watcher, or a restarted daemon) would skip every event up to
// it; it is reported as overflow and the cursor is brought back.
func TestPollCursorAhead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir})
	res := w.Poll(context.Background(), 100, 10, 0)
	if !res.Overflow || res.Cursor != 0 || len(res.Events) != 0 {
		t.Fatalf("poll from a cursor ahead: %+v", res)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cursor := res.Cursor
	await(t, w, &cursor, "create after resync", is(Create, filepath.Join(dir, "f")))
}

// TestRootMovedAway: a watched directory moved elsewhere no longer is at
// the watched path. Its watcher reports the root removed and stops,
// whether or not another watcher sees the rename, and its watches go.
func TestRootMovedAway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		parent bool   // a watcher on the parent sees the move
		to     string // relative to the parent; "" moves it out
	}{
		{name: "parent unwatched", to: "moved"},
		{name: "within a watched parent", parent: true, to: "moved"},
		{name: "out of a watched parent", parent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			root := filepath.Join(parent, "root")
			if err := os.MkdirAll(filepath.Join(root, "sub", "deep"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "sub", "file"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(parent, tc.to)
			if tc.to == "" {
				to = filepath.Join(t.TempDir(), "out")
			}
			r := newReg(t, Options{})
			w := mustCreate(t, r, Config{Path: root, Recursive: true})
			inner := mustCreate(t, r, Config{Path: filepath.Join(root, "sub"), Recursive: true})
			fw := mustCreate(t, r, Config{Path: filepath.Join(root, "sub", "file")})
			watches := 3
			var pw *Watcher
			if tc.parent {
				pw = mustCreate(t, r, Config{Path: parent, Recursive: true})
				watches = 4
			}
			checkWatches(t, r, watches)
			if err := os.Rename(root, to); err != nil {
				t.Fatal(err)
			}
			for _, x := range []*Watcher{w, inner} {
				var cursor int64
				await(t, x, &cursor, "root removed", func(e Event) bool {
					if e.Type != Remove || e.RelativePath != "." {
						t.Errorf("unexpected %+v", e)
						return false
					}
					return e.Path == x.Config().Path
				})
			}
			testenv.WaitFor(t, bound, "watchers stopped", func() bool {
				return w.Stopped() && inner.Stopped() && fw.Stopped()
			})
			if pw != nil && tc.to != "" {
				var cursor int64
				await(t, pw, &cursor, "the parent's rename", is(Rename, to))
				if err := os.WriteFile(filepath.Join(to, "sub", "f"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				await(t, pw, &cursor, "create in the moved tree", is(Create, filepath.Join(to, "sub", "f")))
				checkWatches(t, r, 4)
			} else if pw != nil {
				checkWatches(t, r, 1)
			} else {
				checkWatches(t, r, 0)
			}
		})
	}
}

// TestFileWatcherDirRemoved: a file watcher whose directory is removed
// stops, and a wait there ends as not found rather than a timeout.
func TestFileWatcherDirRemoved(t *testing.T) {
	t.Parallel()
	d := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := newReg(t, Options{})
	fw := mustCreate(t, r, Config{Path: filepath.Join(d, "f")})
	done := make(chan error, 1)
	go func() {
		_, err := r.Wait(context.Background(), filepath.Join(d, "g"), []string{Write}, bound)
		done <- err
	}()
	testenv.WaitFor(t, bound, "the wait's watcher", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.hidden == 1
	})
	if err := os.RemoveAll(d); err != nil {
		t.Fatal(err)
	}
	var cursor int64
	await(t, fw, &cursor, "the file's removal", is(Remove, filepath.Join(d, "f")))
	testenv.WaitFor(t, bound, "the file watcher stopped", fw.Stopped)
	if we, ok := errors.AsType[*Error](<-done); !ok || we.Kind != NotFound {
		t.Fatalf("wait in a removed directory: %v", we)
	}
	checkWatches(t, r, 0)
}

// TestBindMountAlias: one directory reachable under two paths (a bind
// mount) has one inotify watch, so one path. A second watcher on the
// other path used to take the watch over, and the first watcher's events
// went out under the other path, filtered away: now the second fails
// clearly and the first keeps its events.
func TestBindMountAlias(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real, mnt := filepath.Join(dir, "real"), filepath.Join(dir, "mnt")
	for _, d := range []string{real, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount(real, mnt, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind mount here: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: real})
	_, _, err := r.Create(Config{Path: mnt, Debounce: MinDebounce})
	if we, ok := errors.AsType[*Error](err); !ok || we.Kind != Invalid || !strings.Contains(we.Message, real) {
		t.Fatalf("watching the same directory through a bind mount: %v", err)
	}
	// A tree holding both paths watches one of them and says so.
	tree := mustCreate(t, r, Config{Path: dir, Recursive: true})
	if res := tree.Poll(context.Background(), 0, 10, 0); !res.Overflow {
		t.Errorf("a tree with a directory under two paths: no overflow: %+v", res)
	}
	f := filepath.Join(real, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var cursor int64
	await(t, w, &cursor, "create under the first path", is(Create, f))
}

// TestQueueOverflowResyncs: directories made while the kernel queue
// overflowed (their CREATE dropped) are watched once the overflow is
// read; the client rescans what happened, the watcher reports what
// happens next.
func TestQueueOverflowResyncs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir, Recursive: true, Exclude: []string{}})
	sub := filepath.Join(dir, "sub")
	r.mu.Lock() // the reader stops; the kernel queue fills
	now := time.Now()
	// Alternating names: the kernel merges only repeats of the last event.
	// Three times the kernel's queue length overflows it wherever it is set.
	queue := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			queue = n
		}
	}
	if queue > 1<<20 {
		r.mu.Unlock()
		t.Skipf("the inotify queue holds %d events; filling it takes too long", queue)
	}
	for i := range 3 * queue {
		if err := os.Chtimes([]string{a, b}[i%2], now, now); err != nil {
			r.mu.Unlock()
			t.Fatal(err)
		}
	}
	err := os.Mkdir(sub, 0o755)
	r.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var cursor int64
	deadline := time.Now().Add(bound)
	for {
		res := w.Poll(context.Background(), cursor, 1000, time.Until(deadline))
		cursor = res.Cursor
		if res.Overflow {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no overflow after overfilling the kernel queue")
		}
	}
	f := filepath.Join(sub, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	await(t, w, &cursor, "create in a directory made during the overflow", is(Create, f))
}

// TestReleaseFreesWatches: a shared watch goes with its last watcher;
// the others keep their events; nothing is left in the kernel.
func TestReleaseFreesWatches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sh(t, dir, "mkdir -p a/b/c x/node_modules/y && echo f > a/file")
	r := newReg(t, Options{})
	all := mustCreate(t, r, Config{Path: dir, Recursive: true, Exclude: []string{}})
	sub := mustCreate(t, r, Config{Path: filepath.Join(dir, "a"), Recursive: true})
	def := mustCreate(t, r, Config{Path: dir, Recursive: true}) // excludes node_modules
	file := mustCreate(t, r, Config{Path: filepath.Join(dir, "a", "file")})
	checkWatches(t, r, 7)
	if _, err := r.Release(all.ID()); err != nil {
		t.Fatal(err)
	}
	checkWatches(t, r, 5) // node_modules and y only "all" wanted
	f := filepath.Join(dir, "a", "b", "c", "g")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*Watcher{sub, def} {
		var cursor int64
		await(t, w, &cursor, "create after another watcher's release", is(Create, f))
	}
	for _, w := range []*Watcher{def, file, sub} {
		if _, err := r.Release(w.ID()); err != nil {
			t.Fatal(err)
		}
	}
	checkWatches(t, r, 0)
}

// pipeReader runs a second reader for r on a pipe standing in for the
// inotify descriptor, and returns the pipe's write end: events written
// there (encodeEvents) are handled as the kernel's. Its watches stay in
// r's real instance, whose own reader runs too.
func pipeReader(t *testing.T, r *Registry) *os.File {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go r.read(&inotify{fd: -1, file: pr}, done)
	t.Cleanup(func() {
		r.Close()
		pw.Close()
		<-done
		pr.Close()
	})
	return pw
}

// TestRenameHalvesInTwoReads: the kernel queues a rename's MOVED_FROM
// and MOVED_TO one after the other, so a read can end between them
// (renaming a file back and forth 8,000 times split about one). The
// halves still make one rename. Events are fed through a pipe standing in
// for the inotify descriptor.
func TestRenameHalvesInTwoReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{})
	r.moveGrace = bound // the second half comes when the test writes it
	w := mustCreate(t, r, Config{Path: dir})
	r.mu.Lock()
	wd := r.byPath[dir].wd
	r.mu.Unlock()
	pw := pipeReader(t, r)
	write := func(ev kernelEvent) {
		if _, err := pw.Write(encodeEvents([]kernelEvent{ev})); err != nil {
			t.Fatal(err)
		}
	}
	write(kernelEvent{wd: wd, mask: inMovedFrom, cookie: 9, name: "a"})
	testenv.WaitFor(t, bound, "the first half read", func() bool {
		n, err := unix.IoctlGetInt(int(pw.Fd()), unix.TIOCINQ)
		return err == nil && n == 0
	})
	write(kernelEvent{wd: wd, mask: inMovedTo, cookie: 9, name: "b"})
	got := collect(t, w, 1)
	got = append(got, quiet(w, w.LatestSeq())...)
	if diff := cmp.Diff([]short{{Rename, "b", "a"}}, shorten(got, dir)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
