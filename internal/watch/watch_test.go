package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// bound is the longest a test waits for an event.
const bound = 10 * time.Second

func newReg(t *testing.T, opts Options) *Registry {
	t.Helper()
	r := NewRegistry(opts)
	t.Cleanup(func() { r.Close() })
	return r
}

func mustCreate(t *testing.T, r *Registry, cfg Config) *Watcher {
	t.Helper()
	if cfg.Debounce == 0 {
		cfg.Debounce = MinDebounce
	}
	w, _, err := r.Create(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// short is one event as a test compares it.
type short struct {
	Type, Rel, Old string
}

func shorten(evs []Event, root string) []short {
	out := []short{}
	for _, e := range evs {
		s := short{Type: e.Type, Rel: e.RelativePath}
		if e.OldPath != "" {
			s.Old, _ = within(e.OldPath, root)
		}
		out = append(out, s)
	}
	return out
}

// collect polls until n events arrived (or bound passed) and returns them.
func collect(t *testing.T, w *Watcher, n int) []Event {
	t.Helper()
	var got []Event
	var cursor int64
	deadline := time.Now().Add(bound)
	for len(got) < n && time.Now().Before(deadline) {
		res := w.Poll(context.Background(), cursor, 1000, time.Until(deadline))
		got = append(got, res.Events...)
		cursor = res.Cursor
	}
	return got
}

// quiet waits a little past the debounce and returns what else arrived.
func quiet(w *Watcher, cursor int64) []Event {
	time.Sleep(3 * w.cfg.Debounce)
	return w.Poll(context.Background(), cursor, 1000, 0).Events
}

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  string // before the watcher starts
		script string
		cfg    Config
		want   []short
	}{
		{name: "echo creates then writes", script: "echo 'X = 1' > util.py",
			want: []short{{Create, "util.py", ""}, {Write, "util.py", ""}}},
		// The file may be written before c's watch lands: then the scan
		// of c reports its creation and no write (dropped from the
		// comparison below).
		{name: "mkdir -p then a file at once", script: "mkdir -p a/b/c && echo x > a/b/c/f.txt",
			want: []short{{Create, "a", ""}, {Create, "a/b", ""}, {Create, "a/b/c", ""}, {Create, "a/b/c/f.txt", ""}}},
		{name: "rename pairs", setup: "echo x > old.txt", script: "mv old.txt new.txt",
			want: []short{{Rename, "new.txt", "old.txt"}}},
		{name: "rename of a directory moves its watches", setup: "mkdir -p src/in", script: "mv src dst && echo x > dst/in/f",
			want: []short{{Rename, "dst", "src"}, {Create, "dst/in/f", ""}, {Write, "dst/in/f", ""}}},
		{name: "move out is a remove, move in a create", setup: "echo x > f && mkdir ../outside-$$ && echo y > ../in-file",
			script: "mv f ../gone-f && mv ../in-file here", want: []short{{Remove, "f", ""}, {Create, "here", ""}}},
		{name: "remove and chmod", setup: "echo x > f && echo y > g", script: "chmod 600 g && rm f",
			want: []short{{Chmod, "g", ""}, {Remove, "f", ""}}},
		{name: "writes fold into one", script: "for i in 1 2 3 4 5; do echo $i >> log; done", cfg: Config{Debounce: 2 * time.Second},
			want: []short{{Create, "log", ""}, {Write, "log", ""}}},
		{name: "default excludes", script: "mkdir -p .git node_modules && echo x > .git/HEAD && echo y > node_modules/m.js && echo z > a.pyc && echo k > keep",
			want: []short{{Create, "keep", ""}, {Write, "keep", ""}}},
		{name: "include patterns", script: "echo x > a.py && echo y > b.txt", cfg: Config{Include: []string{"*.py"}},
			want: []short{{Create, "a.py", ""}, {Write, "a.py", ""}}},
		{name: "not recursive", setup: "mkdir sub", script: "echo x > sub/deep && echo y > top", cfg: Config{Exclude: []string{}},
			want: []short{{Create, "top", ""}, {Write, "top", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			dir := filepath.Join(parent, "w")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.setup != "" {
				sh(t, dir, tc.setup)
			}
			r := newReg(t, Options{})
			cfg := tc.cfg
			cfg.Path = dir
			cfg.Recursive = tc.name != "not recursive"
			w := mustCreate(t, r, cfg)
			sh(t, dir, tc.script)
			got := collect(t, w, len(tc.want))
			got = append(got, quiet(w, w.LatestSeq())...)
			evs := shorten(got, dir)
			if tc.name == "mkdir -p then a file at once" && len(evs) == 5 && evs[4] == (short{Write, "a/b/c/f.txt", ""}) {
				evs = evs[:4]
			}
			if diff := cmp.Diff(tc.want, evs); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			for i, e := range got {
				if e.Seq <= 0 || (i > 0 && e.Seq <= got[i-1].Seq) {
					t.Errorf("seq not increasing: %+v", got)
				}
			}
		})
	}
}

func TestEventFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir, Recursive: true})
	before := time.Now()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := collect(t, w, 2)
	if len(got) != 2 {
		t.Fatalf("got %+v", got)
	}
	e := got[1]
	fi, _ := os.Stat(filepath.Join(dir, "f"))
	if e.Path != filepath.Join(dir, "f") || e.IsDir || e.Stat == nil || e.Stat.Size != 5 || !e.Stat.ModTime.Equal(fi.ModTime()) ||
		e.Stat.Inode == 0 || e.Time.Before(before.Add(-time.Second)) {
		t.Errorf("event %+v stat %+v", e, e.Stat)
	}
}

func TestFileWatcher(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "watched.txt")
	if err := os.WriteFile(f, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: f})
	sh(t, dir, "echo other > other.txt && echo b > watched.tmp && mv watched.tmp watched.txt")
	got := collect(t, w, 1)
	got = append(got, quiet(w, w.LatestSeq())...)
	if diff := cmp.Diff([]short{{Rename, "watched.txt", "watched.tmp"}}, shorten(got, dir)); diff != "" {
		// An atomic replacement is a rename onto the watched name.
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOverflowOnRingWrap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{RingSize: 100})
	w := mustCreate(t, r, Config{Path: dir, Recursive: true})
	const n = 20_000
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%05d", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		res := w.Poll(context.Background(), 0, 1000, time.Second)
		if res.Overflow {
			return
		}
	}
	t.Fatal("20,000 creations against a ring of 100: no overflow reported")
}

// TestBurstNoSilentLoss creates 10,000 files while a client polls: every
// creation is delivered, or overflow is set.
func TestBurstNoSilentLoss(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir, Recursive: true})
	const n = 10_000
	seen := map[string]bool{}
	var overflow bool
	written := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var cursor int64
		var drainEnd time.Time // set once every file is written
		for len(seen) < n && !overflow {
			select {
			case <-written:
				if drainEnd.IsZero() {
					drainEnd = time.Now().Add(bound)
				}
			default:
			}
			if !drainEnd.IsZero() && time.Now().After(drainEnd) {
				return
			}
			res := w.Poll(context.Background(), cursor, 1000, time.Second)
			cursor, overflow = res.Cursor, res.Overflow
			for _, e := range res.Events {
				if e.Type == Create {
					seen[e.RelativePath] = true
				}
			}
		}
	}()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	close(written)
	<-done
	if !overflow && len(seen) != n {
		t.Fatalf("%d of %d creations delivered and no overflow: silent loss", len(seen), n)
	}
	t.Logf("delivered %d of %d, overflow %v", len(seen), n, overflow)
}

func TestKernelOverflowMarks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir})
	r.mu.Lock()
	r.handleLocked(kernelEvent{wd: -1, mask: inOverflow}, time.Now())
	r.mu.Unlock()
	res := w.Poll(context.Background(), 0, 100, 0)
	if !res.Overflow || len(res.Events) != 0 || res.Cursor != 1 {
		t.Fatalf("after a queue overflow: %+v", res)
	}
	if res := w.Poll(context.Background(), res.Cursor, 100, 0); res.Overflow {
		t.Fatalf("overflow reported twice: %+v", res)
	}
}

func TestLongPollReturnsOnFirstEvent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir})
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	}()
	start := time.Now()
	res := w.Poll(context.Background(), 0, 100, 30*time.Second)
	if len(res.Events) == 0 {
		t.Fatalf("long poll returned without events: %+v", res)
	}
	if el := time.Since(start); el > bound {
		t.Fatalf("long poll took %v", el)
	}
}

func TestReuseLimitsAndRelease(t *testing.T) {
	t.Parallel()
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	r := newReg(t, Options{MaxWatchers: 2})
	a, c, err := r.Create(Config{Path: dirs[0], Recursive: true})
	if err != nil || c.Reused {
		t.Fatal(err, c)
	}
	if err := os.WriteFile(filepath.Join(dirs[0], "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	collect(t, a, 1)
	b, c, err := r.Create(Config{Path: dirs[0], Recursive: true})
	if err != nil || !c.Reused || b != a || c.InitialCursor != a.LatestSeq() || c.InitialCursor == 0 {
		t.Fatalf("identical config: %v %+v", err, c)
	}
	if _, _, err := r.Create(Config{Path: dirs[1]}); err != nil {
		t.Fatal(err)
	}
	_, _, err = r.Create(Config{Path: dirs[2]})
	var we *Error
	if !errors.As(err, &we) || we.Kind != Limit || !strings.Contains(we.Message, "Watcher limit reached") {
		t.Fatalf("third watcher: %v", err)
	}
	if info, err := r.Release(a.ID()); err != nil || info.Status != "active" || info.Subscribers != 1 {
		t.Fatalf("first release: %+v %v", info, err)
	}
	if info, err := r.Release(a.ID()); err != nil || info.Status != "stopped" {
		t.Fatalf("second release: %+v %v", info, err)
	}
	if _, err := r.Release(a.ID()); !errors.As(err, &we) || we.Kind != NotFound {
		t.Fatalf("third release: %v", err)
	}
	if _, _, err := r.Create(Config{Path: dirs[2]}); err != nil {
		t.Fatalf("after a release: %v", err)
	}
}

func TestInvalidConfigs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{})
	for _, cfg := range []Config{
		{Path: dir, Debounce: 10 * time.Millisecond},
		{Path: dir, Debounce: 6 * time.Second},
		{Path: dir, Exclude: []string{"[unclosed"}},
		{Path: "relative"},
	} {
		_, _, err := r.Create(cfg)
		var we *Error
		if !errors.As(err, &we) || we.Kind != Invalid {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	_, _, err := r.Create(Config{Path: filepath.Join(dir, "missing")})
	var we *Error
	if !errors.As(err, &we) || we.Kind != NotFound {
		t.Errorf("missing path: %v", err)
	}
}

func TestWatchBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 30 {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("d%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := newReg(t, Options{MaxUserWatches: 20})
	_, _, err := r.Create(Config{Path: dir, Recursive: true})
	var we *Error
	if !errors.As(err, &we) || we.Kind != Unavailable || !strings.Contains(we.Message, "max_user_watches") {
		t.Fatalf("tree over the budget: %v", err)
	}
	r.mu.Lock()
	held := len(r.dirs)
	r.mu.Unlock()
	if held != 0 {
		t.Fatalf("%d watches left after a failed create", held)
	}
	// A watcher that fits, then a directory burst past the budget: overflow, not silence.
	small := filepath.Join(dir, "d00")
	w := mustCreate(t, r, Config{Path: small, Recursive: true})
	sh(t, small, "for i in $(seq 1 25); do mkdir x$i; done")
	deadline := time.Now().Add(bound)
	var cursor int64
	for time.Now().Before(deadline) {
		res := w.Poll(context.Background(), cursor, 1000, time.Second)
		if res.Overflow {
			return
		}
		cursor = res.Cursor
	}
	t.Fatal("directories beyond the watch budget were not reported as overflow")
}

func TestWait(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := newReg(t, Options{})
	target := filepath.Join(dir, "later.txt")
	var wg sync.WaitGroup
	wg.Go(func() {
		time.Sleep(100 * time.Millisecond)
		_ = os.WriteFile(target, []byte("x"), 0o644)
	})
	ev, err := r.Wait(context.Background(), target, []string{Write}, bound)
	wg.Wait()
	if err != nil || ev.Type != Write || ev.Path != target {
		t.Fatalf("wait: %+v %v", ev, err)
	}
	ev, err = r.Wait(context.Background(), target, []string{Create}, bound)
	if err != nil || ev.Type != Create {
		t.Fatalf("wait for create of an existing file: %+v %v", ev, err)
	}
	_, err = r.Wait(context.Background(), target, []string{Remove}, 200*time.Millisecond)
	var we *Error
	if !errors.As(err, &we) || we.Kind != Timeout {
		t.Fatalf("timeout: %v", err)
	}
	if len(r.List()) != 0 {
		t.Fatalf("waits are listed: %+v", r.List())
	}
}

func TestRootRemovedStops(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir})
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	got := collect(t, w, 1)
	if len(got) != 1 || got[0].Type != Remove || got[0].RelativePath != "." {
		t.Fatalf("root removal: %+v", got)
	}
	deadline := time.Now().Add(bound)
	for !w.Stopped() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !w.Stopped() {
		t.Fatal("watcher of a removed root still active")
	}
}

func TestCloseEndsPolls(t *testing.T) {
	t.Parallel()
	r := NewRegistry(Options{})
	w := mustCreate(t, r, Config{Path: t.TempDir()})
	done := make(chan struct{})
	go func() {
		w.Poll(context.Background(), 0, 10, time.Minute)
		close(done)
	}()
	time.Sleep(50 * time.Millisecond)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatal("Close left a long poll waiting")
	}
	if _, _, err := r.Create(Config{Path: t.TempDir()}); err == nil {
		t.Fatal("create after Close succeeded")
	}
}

// TestStatErrors: a path that cannot be examined is reported as what
// went wrong, not as missing.
func TestStatErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Symlink("loop", filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	long := filepath.Join(dir, strings.Repeat("n", 300))
	tests := []struct {
		name, path string
		wait       bool
		kind       Kind       // a *Error of this kind, or
		code       fserr.Code // a *fserr.Error with this code
		unpriv     bool       // needs a process that permission bits refuse
	}{
		{name: "missing", path: filepath.Join(dir, "nope"), kind: NotFound},
		{name: "missing directory", path: filepath.Join(dir, "nope", "f"), wait: true, kind: NotFound},
		{name: "link loop", path: filepath.Join(dir, "loop"), code: fserr.InvalidPath},
		{name: "link loop, wait", path: filepath.Join(dir, "loop", "f"), wait: true, code: fserr.InvalidPath},
		{name: "name too long", path: long, code: fserr.InvalidPath},
		{name: "permission", path: filepath.Join(locked, "f"), code: fserr.PermissionDenied, unpriv: true},
		{name: "permission, wait", path: filepath.Join(locked, "d", "f"), wait: true, code: fserr.PermissionDenied, unpriv: true},
	}
	r := newReg(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.unpriv && os.Geteuid() == 0 {
				t.Skip("root is not refused by permission bits")
			}
			var err error
			if tt.wait {
				_, err = r.Wait(context.Background(), tt.path, Types, time.Millisecond)
			} else {
				_, _, err = r.Create(Config{Path: tt.path, Debounce: MinDebounce})
			}
			if tt.code != "" {
				if fe, ok := fserr.As(err); !ok || fe.Code != tt.code {
					t.Fatalf("err = %v, want code %s", err, tt.code)
				}
				return
			}
			if we, ok := errors.AsType[*Error](err); !ok || we.Kind != tt.kind {
				t.Fatalf("err = %v, want kind %d", err, tt.kind)
			}
		})
	}
}
