package workspace

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// abandon drops w's temp log as a crash would: the flock goes with the
// file descriptor, the log stays.
func abandon(t *testing.T, w *Workspace) {
	t.Helper()
	w.temps.mu.Lock()
	defer w.temps.mu.Unlock()
	if err := w.temps.f.Close(); err != nil {
		t.Fatal(err)
	}
	w.temps.f = nil
}

// names lists dir's entries, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func TestSweepRemovesAbandonedTemps(t *testing.T) {
	t.Parallel()
	root, other, state := t.TempDir(), t.TempDir(), t.TempDir()
	w1 := openTestWorkspace(t, Options{Roots: []string{root, other}, StateDir: state})
	r := w1.roots[0].root

	f, tmp, err := createTemp(r, "a.txt") // a write's temp
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	part, _, _, err := spool(context.Background(), r, r, ".", strings.NewReader("partial"), fileMeta{mode: 0o644, uid: -1, gid: -1})
	if err != nil {
		t.Fatal(err)
	}
	tw, err := w1.CreateTree("tree", nil) // a tree upload's staging directory
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tw.File("x/y.txt", 0o644, strings.NewReader("y")); err != nil {
		t.Fatal(err)
	}
	f2, tmp2, err := createTemp(w1.roots[1].root, "b.txt") // in the second root
	if err != nil {
		t.Fatal(err)
	}
	f2.Close()
	// Recorded paths the sweep must leave: a name that is not a temp's,
	// and a move's backup link.
	writeFile(t, filepath.Join(root, "keep.txt"), "mine", 0o644)
	writeFile(t, filepath.Join(root, ".keep.txt.fsplane-0123456789abcdef.bak"), "backup", 0o644)
	noteTemp(r, "keep.txt")
	noteTemp(r, ".keep.txt.fsplane-0123456789abcdef.bak")

	wantLeft := []string{".keep.txt.fsplane-0123456789abcdef.bak", "keep.txt"}
	if got := names(t, root); len(got) != 5 {
		t.Fatalf("before the crash the root holds %v, want the temps %s, %s, the tree stage and the two kept files", got, tmp, part)
	}
	abandon(t, w1)

	w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state}) // the second root is not w2's
	if d := cmp.Diff(wantLeft, names(t, root)); d != "" {
		t.Errorf("root after the sweep (-want +got):\n%s", d)
	}
	if got := names(t, other); len(got) != 0 {
		t.Errorf("second root after the sweep holds %v (%s should be gone)", got, tmp2)
	}
	// The abandoned log is gone; w2's own is the only one.
	if got := names(t, filepath.Join(state, tempsDir)); len(got) != 1 || got[0] != filepath.Base(w2.temps.name) {
		t.Errorf("temp logs after the sweep: %v, want only %s", got, w2.temps.name)
	}
}

func TestSweepLeavesLiveWorkspacesAlone(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	w1 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	f, tmp, err := createTemp(w1.roots[0].root, "a.txt") // in flight
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	if _, err := os.Lstat(filepath.Join(root, tmp)); err != nil {
		t.Fatalf("a live workspace's temp was swept: %v", err)
	}
	// Closed with the temp still there: the log stays for the next Open.
	if err := w1.Close(); err != nil {
		t.Fatal(err)
	}
	openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	if _, err := os.Lstat(filepath.Join(root, tmp)); !os.IsNotExist(err) {
		t.Fatalf("temp left by a closed workspace survived the next Open: %v", err)
	}
}

func TestCleanCloseRemovesTheLog(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	if _, err := w.Commit([]Change{{Path: "a.txt", Content: []byte("a")}}, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteStream(context.Background(), "b.txt", strings.NewReader("b"), StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, root); !cmp.Equal(got, []string{"a.txt", "b.txt"}) {
		t.Fatalf("root holds %v", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, filepath.Join(w.stateDir, tempsDir)); len(got) != 0 {
		t.Errorf("temp logs after a clean close: %v", got)
	}
}

func TestTempLogCompacts(t *testing.T) {
	t.Parallel()
	w, _ := newTestWorkspace(t)
	r := w.roots[0].root
	for range 3 * tempCompactMin {
		f, name, err := createTemp(r, "a.txt")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := r.Remove(name); err != nil {
			t.Fatal(err)
		}
		w.temps.mu.Lock()
		for i := range w.temps.entries {
			w.temps.entries[i].at = time.Time{} // past the grace period
		}
		w.temps.mu.Unlock()
	}
	fi, err := w.temps.f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(w.temps.entries); n >= tempCompactMin {
		t.Errorf("%d entries after compactions, want fewer than %d", n, tempCompactMin)
	}
	if max := int64(tempCompactMin) * int64(len(r.Name())+40); fi.Size() > max {
		t.Errorf("log is %d bytes after %d removed temps, want at most %d", fi.Size(), 3*tempCompactMin, max)
	}
}

// The stray-temp crash test: a child process (this test binary) starts an
// upload that stalls after 1 MiB; once the part file exists the parent
// kills it with SIGKILL and opens the workspace, which must remove it.

const strayChildEnv = "FSPLANE_WORKSPACE_STRAY_CHILD"

func strayChild() {
	w, err := Open(Options{Roots: []string{os.Getenv(crashRootEnv)}, StateDir: os.Getenv(crashStateEnv)})
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		return
	}
	pr, pw := io.Pipe()
	go func() {
		pw.Write(make([]byte, 1<<20))
		os.Stdout.WriteString("ready\n")
		select {} // stall until killed
	}()
	_, err = w.WriteStream(context.Background(), "big.bin", pr, StreamOptions{})
	os.Stdout.WriteString("error upload ended: " + errString(err) + "\n")
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

func TestSweepAfterKill(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	cmd := startChild(t, strayChildEnv+"=1", crashRootEnv+"="+root, crashStateEnv+"="+state)
	// The part file exists and holds the first MiB (or is filling).
	var part string
	for deadline := time.Now().Add(10 * time.Second); part == "" && time.Now().Before(deadline); {
		for _, n := range names(t, root) {
			if strings.HasPrefix(n, UploadPartPrefix) {
				part = n
			}
		}
		time.Sleep(time.Millisecond)
	}
	if part == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("no part file appeared")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := names(t, root); len(got) != 1 {
		t.Fatalf("after the kill the root holds %v, want the part file", got)
	}
	openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	if got := names(t, root); len(got) != 0 {
		t.Errorf("after Open the root still holds %v", got)
	}
}

func TestIsStagingName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		{".a.txt.fsplane-0123456789abcdef.tmp", true},
		{".a.txt.fsplane-0123456789abcdef.bak", true},
		{".fsplane-upload-0123456789abcdef.part", true},
		{".fsplane-tree-0123456789abcdef.tmp", true},
		{"a.txt", false},
		{"a.txt.tmp", false},
		{".a.txt.fsplane-0123.tmp", false},
		{"a.fsplane-0123456789abcdef.tmp", false}, // not hidden: not ours
	}
	for _, tt := range tests {
		if got := IsStagingName(tt.name); got != tt.want {
			t.Errorf("IsStagingName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
