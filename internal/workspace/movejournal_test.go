package workspace

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// The killed-move test: a child (this test binary, re-executed) moves a
// file across roots over an existing destination and is SIGKILLed at a
// step of the move; the parent opens the workspace and checks the move
// happened entirely or not at all, with no backup left.

const moveChildEnv = "FSPLANE_WORKSPACE_MOVE_CHILD" // "<step>:<link|nolink>"

// startChild runs this test binary as a child with env added and waits
// for it to say "ready" (failing t, the child killed, if it says anything
// else).
func startChild(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child said %q (%v)", line, err)
	}
	return cmd
}

// moveChild opens the roots in $R1 and $R2, and moves R1/f over R2/f,
// blocking (to be killed) at the step named.
func moveChild() {
	step, link, _ := strings.Cut(os.Getenv(moveChildEnv), ":")
	r1, r2 := os.Getenv("R1"), os.Getenv("R2")
	w, err := Open(Options{Roots: []string{r1, r2}, StateDir: os.Getenv("RSTATE")})
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		return
	}
	block := func() { os.Stdout.WriteString("ready\n"); select {} }
	w.hooks.moveLink = func(r *os.Root, oldname, newname string) error {
		if link == "nolink" {
			return syscall.EPERM // a file system without hard links: renamed aside
		}
		if err := r.Link(oldname, newname); err != nil {
			return err
		}
		if step == "after-link" {
			block()
		}
		return nil
	}
	w.hooks.moveRemove = func(r *os.Root, name string) error {
		if step == "before-remove" {
			block()
		}
		if err := r.Remove(name); err != nil {
			return err
		}
		if step == "after-remove" {
			block()
		}
		return nil
	}
	_, err = w.Move(filepath.Join(r1, "f"), filepath.Join(r2, "f"), true, "")
	os.Stdout.WriteString("error not blocked: " + errString(err) + "\n")
}

// TestKilledMoveIsSettled: killed after the copy is installed but before
// the source is removed, the move did not happen (the old destination
// comes back from its backup); killed after the source is removed, it did
// (the backup goes). Either way no .bak is left, with or without hard
// links. (The backup used to stay for good; renamed aside, as the only
// name of the old destination.)
func TestKilledMoveIsSettled(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"after-link", "before-remove", "after-remove", "after-remove-recreated"} {
		for _, link := range []string{"link", "nolink"} {
			if step == "after-link" && link == "nolink" {
				continue
			}
			t.Run(step+"/"+link, func(t *testing.T) {
				t.Parallel()
				r1, r2, state := t.TempDir(), t.TempDir(), t.TempDir()
				writeFile(t, filepath.Join(r1, "f"), "source\n", 0o644)
				writeFile(t, filepath.Join(r2, "f"), "old destination\n", 0o644)
				childStep := strings.TrimSuffix(step, "-recreated")
				cmd := startChild(t, moveChildEnv+"="+childStep+":"+link, "R1="+r1, "R2="+r2, "RSTATE="+state)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				_ = cmd.Wait()
				if step == "after-remove-recreated" {
					// Someone makes a new file at the source's path before
					// recovery: the move happened all the same.
					writeFile(t, filepath.Join(r1, "f"), "new file\n", 0o644)
				}
				w := openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: state})
				w.Close()
				switch step {
				case "after-link", "before-remove":
					if src, dst := readFile(t, filepath.Join(r1, "f")), readFile(t, filepath.Join(r2, "f")); src != "source\n" || dst != "old destination\n" {
						t.Fatalf("after recovery: source %q, destination %q; want the move undone", src, dst)
					}
				case "after-remove-recreated":
					if src, dst := readFile(t, filepath.Join(r1, "f")), readFile(t, filepath.Join(r2, "f")); src != "new file\n" || dst != "source\n" {
						t.Fatalf("after recovery: source %q, destination %q; want the new file and the moved one", src, dst)
					}
				default:
					if _, err := os.Stat(filepath.Join(r1, "f")); !os.IsNotExist(err) {
						t.Fatalf("the source is back: %v", err)
					}
					if dst := readFile(t, filepath.Join(r2, "f")); dst != "source\n" {
						t.Fatalf("after recovery: destination %q; want the moved file", dst)
					}
				}
				if fi, err := os.Stat(filepath.Join(r2, "f")); err == nil && fi.Sys().(*syscall.Stat_t).Nlink != 1 {
					t.Errorf("the destination has %d names", fi.Sys().(*syscall.Stat_t).Nlink)
				}
				for _, r := range []string{r1, r2} {
					ents, _ := os.ReadDir(r)
					for _, e := range ents {
						if strings.HasSuffix(e.Name(), ".bak") || strings.HasSuffix(e.Name(), ".tmp") {
							t.Errorf("left behind: %s", filepath.Join(r, e.Name()))
						}
					}
				}
			})
		}
	}
}

// TestMoveRecordOfAMissingRootBlocks: a move interrupted across two roots
// cannot be settled by a workspace that has only one of them; until one
// with both does, the paths it names here are refused (a write to the
// destination used to succeed, and the later recovery put the old
// destination back over it).
func TestMoveRecordOfAMissingRootBlocks(t *testing.T) {
	t.Parallel()
	r1, r2, state := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(r1, "f"), "source\n", 0o644)
	writeFile(t, filepath.Join(r2, "f"), "old destination\n", 0o644)
	cmd := startChild(t, moveChildEnv+"=before-remove:link", "R1="+r1, "R2="+r2, "RSTATE="+state)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	w := openTestWorkspace(t, Options{Roots: []string{r2}, StateDir: state})
	_, err := w.Commit([]Change{{Path: "f", Content: []byte("later\n")}}, CommitOptions{Op: "write"})
	if fe, ok := fserr.As(err); !ok || fe.Code != fserr.Conflict {
		t.Fatalf("a write to the destination of an unsettled move: %v, want conflict", err)
	}
	w.Close()
	w = openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: state})
	w.Close()
	if src, dst := readFile(t, filepath.Join(r1, "f")), readFile(t, filepath.Join(r2, "f")); src != "source\n" || dst != "old destination\n" {
		t.Fatalf("after recovery with both roots: source %q, destination %q", src, dst)
	}
}
