package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test: a child process (this test binary, re-executed) commits
// five-file transactions in a loop; the parent kills it with SIGKILL at
// random moments, recovers by opening the workspace, and checks that the
// tree is exactly one generation the child could have committed.

const (
	crashChildEnv = "FSPLANE_WORKSPACE_CRASH_CHILD"
	crashRootEnv  = "FSPLANE_WORKSPACE_CRASH_ROOT"
	crashStateEnv = "FSPLANE_WORKSPACE_CRASH_STATE"
	crashSeedEnv  = "FSPLANE_WORKSPACE_CRASH_SEED" // reproduce a run
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		crashChild()
		os.Exit(0)
	}
	if os.Getenv(strayChildEnv) != "" {
		strayChild()
		os.Exit(0)
	}
	if os.Getenv(moveChildEnv) != "" {
		moveChild()
		os.Exit(0)
	}
	if os.Getenv(journalChildEnv) != "" {
		journalChild()
		os.Exit(0)
	}
	if os.Getenv(treeChildEnv) != "" {
		treeChild()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashFiles are the transaction's files. Files 0–3 cycle through
// create, modify, modify, delete; h.txt has a second name, h-link.txt, so
// it is rewritten in place every generation.
var crashFiles = []string{"a.txt", "b.txt", "dir/c.txt", "dir/sub/d.txt", "h.txt"}

func crashPresent(gen, i int) bool { return i == 4 || (gen+i)%4 != 0 }

// crashContent is file i's content in generation gen: about 100 KB,
// cheap to make so the child spends its time committing.
func crashContent(gen, i int) []byte {
	header := fmt.Sprintf("gen %d file %d\n", gen, i)
	line := fmt.Sprintf("%08d-%d %s\n", gen, i, strings.Repeat(string(rune('a'+(gen+i)%26)), 50))
	return append([]byte(header), bytes.Repeat([]byte(line), 100_000/len(line))...)
}

func crashState(gen int) map[string][]byte {
	m := map[string][]byte{}
	for i, name := range crashFiles {
		if crashPresent(gen, i) {
			m[name] = crashContent(gen, i)
		}
	}
	return m
}

// crashChanges turns generation gen-1 into gen; versions holds the
// versions of gen-1's files (the child knows them from its last commit).
func crashChanges(gen int, versions map[string]string) []Change {
	var cs []Change
	for i, name := range crashFiles {
		was, is := crashPresent(gen-1, i), crashPresent(gen, i)
		var c Change
		switch {
		case is:
			c = Change{Path: name, Content: crashContent(gen, i), ExpectAbsent: !was}
		case was:
			c = Change{Path: name, Delete: true}
		default:
			continue
		}
		if was {
			c.ExpectedVersion = versions[name]
		}
		cs = append(cs, c)
	}
	return cs
}

func crashChild() {
	say := func(format string, args ...any) { fmt.Fprintf(os.Stdout, format+"\n", args...) }
	fail := func(err error) {
		say("error %v", err)
		os.Exit(3)
	}
	w, err := Open(Options{Roots: []string{os.Getenv(crashRootEnv)}, StateDir: os.Getenv(crashStateEnv)})
	if err != nil {
		fail(err)
	}
	versions := map[string]string{}
	for _, name := range crashFiles {
		if tf, err := w.ReadText(name); err == nil {
			versions[name] = tf.Version
		}
	}
	tf, err := w.ReadText("h.txt")
	if err != nil {
		fail(err)
	}
	var gen, file int
	if _, err := fmt.Sscanf(string(tf.Content), "gen %d file %d\n", &gen, &file); err != nil {
		fail(err)
	}
	changes := crashChanges(gen+1, versions)
	say("ready %d", gen)
	for n := gen + 1; ; n++ {
		say("begin %d", n)
		res, err := w.Commit(changes, CommitOptions{Op: "patch"})
		if err != nil {
			fail(err)
		}
		say("done %d", n)
		for i, r := range res {
			versions[changes[i].Path] = r.Version
		}
		changes = crashChanges(n+1, versions)
	}
}

func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	for name, c := range crashState(0) {
		writeFile(t, filepath.Join(root, name), string(c), 0o644)
	}
	if err := os.Link(filepath.Join(root, "h.txt"), filepath.Join(root, "h-link.txt")); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set %s to repeat)", seed, crashSeedEnv)
	rng := rand.New(rand.NewPCG(seed, 0))
	kills := 60
	if testing.Short() {
		kills = 30
	}

	var allOld, allNew, between int
	gen := 0
	for k := range kills {
		// Log-uniform between 2 µs and 20 ms; a five-file transaction
		// takes about 8 ms here, so kills land in every step of the first
		// transactions and sometimes between them.
		delay := time.Duration(math.Exp(math.Log(2e3) + rng.Float64()*(math.Log(20e6)-math.Log(2e3))))
		lastBegin, lastDone := crashRun(t, root, state, delay)

		w, err := Open(Options{Roots: []string{root}, StateDir: state}) // recovery
		if err != nil {
			t.Fatalf("kill %d: Open after the kill: %v", k, err)
		}
		w.Close()
		got := crashVerify(t, root, state)
		switch {
		case lastBegin > lastDone && got == lastBegin:
			allNew++
		case lastBegin > lastDone && got == lastBegin-1:
			allOld++
		case lastBegin <= lastDone && got == lastDone:
			between++
		default:
			t.Fatalf("kill %d after %v: tree is generation %d, but the child last began %d and finished %d", k, delay, got, lastBegin, lastDone)
		}
		if got < gen {
			t.Fatalf("kill %d: generation went back from %d to %d", k, gen, got)
		}
		gen = got
	}
	t.Logf("%d kills: in-flight transaction rolled back (all old) %d, committed (all new) %d, between transactions %d; %d generations committed",
		kills, allOld, allNew, between, gen)
	if allOld+allNew == 0 {
		t.Errorf("no kill landed inside a transaction")
	}
}

// crashRun starts the child, waits until it has opened the workspace,
// kills it after delay, and returns the last generation it began and the
// last it finished committing (by its own account).
func crashRun(t *testing.T, root, state string, delay time.Duration) (lastBegin, lastDone int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", crashRootEnv+"="+root, crashStateEnv+"="+state)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	handle := func(line string) {
		var n int
		switch {
		case strings.HasPrefix(line, "error"):
			cmd.Process.Kill()
			t.Fatalf("child: %s", line)
		case scan(line, "ready %d", &n):
			lastBegin, lastDone = n, n
		case scan(line, "begin %d", &n):
			lastBegin = n
		case scan(line, "done %d", &n):
			lastDone = n
		}
	}
	select {
	case line, ok := <-lines:
		if !ok {
			cmd.Wait()
			t.Fatalf("child exited before it was ready: %s", stderr.String())
		}
		handle(line)
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("child not ready after a minute")
	}
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for line := range lines {
		handle(line)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, not by the kill: %s", err, stderr.String())
	}
	return lastBegin, lastDone
}

func scan(line, format string, n *int) bool {
	_, err := fmt.Sscanf(line, format, n)
	return err == nil
}

// crashVerify checks that the tree is exactly one generation's state, with
// no temp, backup or manifest left, and returns the generation.
func crashVerify(t *testing.T, root, state string) int {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if strings.Contains(d.Name(), ".fsplane-") {
			t.Errorf("stray file after recovery: %s", rel)
		}
		if d.Type().IsRegular() && rel != "h-link.txt" {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[rel] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := os.ReadDir(filepath.Join(state, txDir)); len(m) != 0 {
		t.Errorf("%d manifests left after recovery", len(m))
	}
	if inode(t, filepath.Join(root, "h.txt")) != inode(t, filepath.Join(root, "h-link.txt")) {
		t.Fatal("h.txt and h-link.txt are no longer one file")
	}
	var gen, file int
	if _, err := fmt.Sscanf(string(files["h.txt"]), "gen %d file %d\n", &gen, &file); err != nil {
		t.Fatalf("h.txt has no generation header: %v", err)
	}
	want := crashState(gen)
	var bad []string
	for name, c := range files {
		if w, ok := want[name]; !ok {
			bad = append(bad, name+" should not exist")
		} else if !bytes.Equal(w, c) {
			bad = append(bad, fmt.Sprintf("%s has %q…", name, firstLine(c)))
		}
	}
	for name := range want {
		if _, ok := files[name]; !ok {
			bad = append(bad, name+" is missing")
		}
	}
	if len(bad) > 0 {
		t.Fatalf("tree is not generation %d (from h.txt): %s", gen, strings.Join(bad, "; "))
	}
	return gen
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}
