package testenv

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nobody is the account AsNobody runs tests as: permission bits bind
// only other accounts, and tests run as root here.
const Nobody = 65534

// AsNobody runs the calling test again, in a child process as Nobody,
// when the tests run as root, and reports whether the caller should go
// on: it is that child, or was not root to begin with. dirs are handed
// to Nobody first (and the directories above them opened to it); the
// child finds them with NobodyDirs. The parent fails when the child
// fails or did not run the test at all; it skips only when the system
// will not run a process as Nobody.
func AsNobody(t *testing.T, dirs ...string) bool {
	t.Helper()
	if os.Geteuid() != 0 || os.Getenv("FSPLANE_TEST_NONROOT") == t.Name() {
		return true
	}
	for _, d := range dirs {
		if err := filepath.WalkDir(d, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, Nobody, Nobody)
		}); err != nil {
			t.Fatal(err)
		}
		openAbove(d)
	}
	// The test binary's own directory is private to root: run a copy.
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), filepath.Base(os.Args[0]))
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(exe), 0o755)
	openAbove(filepath.Dir(exe))
	run := "^" + strings.ReplaceAll(t.Name(), "/", "$/^") + "$"
	var out []byte
	// A fork of another parallel test may hold the copy open for writing
	// until it execs (ETXTBSY): try again.
	for try := 0; ; try++ {
		cmd := exec.Command(exe, "-test.run="+run, "-test.v")
		cmd.Env = append(os.Environ(), "FSPLANE_TEST_NONROOT="+t.Name(), "FSPLANE_TEST_DIRS="+strings.Join(dirs, string(os.PathListSeparator)))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody}}
		out, err = cmd.CombinedOutput()
		if errors.Is(err, syscall.ETXTBSY) && try < 50 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		break
	}
	if _, failed := errors.AsType[*exec.ExitError](err); failed {
		t.Errorf("as uid %d: %v\n%s", Nobody, err, out)
		return false
	}
	if err != nil {
		t.Skipf("cannot run as uid %d: %v", Nobody, err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()+" ") {
		t.Errorf("as uid %d the test did not run:\n%s", Nobody, out)
	}
	return false
}

// NobodyDirs returns, in AsNobody's child, the dirs its parent gave.
func NobodyDirs() []string {
	return filepath.SplitList(os.Getenv("FSPLANE_TEST_DIRS"))
}

// InNobodyChild reports whether this is AsNobody's child for t.
func InNobodyChild(t *testing.T) bool { return os.Getenv("FSPLANE_TEST_NONROOT") == t.Name() }

// openAbove lets Nobody through the directories above d in the
// temporary directory (t.TempDir's are private).
func openAbove(d string) {
	for p := filepath.Dir(d); p != "/" && strings.HasPrefix(p, os.TempDir()); p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			os.Chmod(p, fi.Mode().Perm()|0o011)
		}
	}
}
