package transfer

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestExtractIntoWorkspace extracts archives through the real writer
// (workspace.CreateTree) into a new directory and into an existing one:
// a refused archive leaves the destination as it was and no staged
// entry behind, and no extracted link leads out of the root, however it
// reads.
func TestExtractIntoWorkspace(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("d/", 300) + "f"
	tests := []struct {
		name    string
		archive []byte
		lim     Limits
		code    fserr.Code // "" for success
	}{
		{name: "ok", archive: tarOf(t, &tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755}, &tar.Header{Name: "d/f", Typeflag: tar.TypeReg, Mode: 0o644},
			&tar.Header{Name: "up", Typeflag: tar.TypeSymlink, Linkname: "../x"}, &tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "d/f"})},
		{name: "link climbing through a link", archive: tarOf(t, &tar.Header{Name: "s", Typeflag: tar.TypeSymlink, Linkname: "."},
			&tar.Header{Name: "p", Typeflag: tar.TypeSymlink, Linkname: "s/s/s/s/../../../.."}), code: fserr.BadRequest},
		{name: "link climbing through a later link", archive: tarOf(t, &tar.Header{Name: "p", Typeflag: tar.TypeSymlink, Linkname: "s/s/s/s/../../../.."},
			&tar.Header{Name: "s", Typeflag: tar.TypeSymlink, Linkname: "."}), code: fserr.BadRequest},
		{name: "deep implied dirs", archive: tarOf(t, &tar.Header{Name: deep, Typeflag: tar.TypeReg, Size: 1, Format: tar.FormatPAX}),
			lim: Limits{MaxBytes: 1 << 20, MaxEntries: 100}, code: fserr.TooLarge},
		{name: "file under a link member", archive: tarOf(t, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "."},
			&tar.Header{Name: "l/f", Typeflag: tar.TypeReg}), code: fserr.BadRequest},
		{name: "file then dir", archive: tarOf(t, &tar.Header{Name: "x", Typeflag: tar.TypeReg}, &tar.Header{Name: "x/", Typeflag: tar.TypeDir}), code: fserr.BadRequest},
		{name: "dir then file", archive: tarOf(t, &tar.Header{Name: "x/", Typeflag: tar.TypeDir}, &tar.Header{Name: "x", Typeflag: tar.TypeReg}), code: fserr.BadRequest},
		{name: "hard link to a dir", archive: tarOf(t, &tar.Header{Name: "x/", Typeflag: tar.TypeDir}, &tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "x"}), code: fserr.BadRequest},
		{name: "truncated", archive: tarOf(t, &tar.Header{Name: "a", Typeflag: tar.TypeReg},
			&tar.Header{Name: strings.Repeat("x", 90), Typeflag: tar.TypeReg})[:1024+600], code: fserr.BadRequest},
	}
	for _, tc := range tests {
		for _, merge := range []bool{false, true} {
			name := tc.name + map[bool]string{false: "/new", true: "/merge"}[merge]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				root := filepath.Join(t.TempDir(), "root")
				if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
					t.Fatal(err)
				}
				ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ws.Close() })
				dest := filepath.Join(root, "a", "b", "t")
				if merge {
					if err := os.Mkdir(dest, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				lim := tc.lim
				if lim == (Limits{}) {
					lim = DefaultLimits
				}
				tw, err := ws.CreateTree(dest, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, err = Extract(bytes.NewReader(tc.archive), tw, lim)
				if err == nil {
					_, err = tw.Commit()
				}
				tw.Abort()
				if fserr.CodeOf(err) != tc.code {
					t.Errorf("err %v, want %q", err, tc.code)
				}
				if tc.code != "" {
					ents, rerr := os.ReadDir(dest)
					switch {
					case !merge && !errors.Is(rerr, fs.ErrNotExist):
						t.Errorf("%s exists after a refused archive", dest)
					case merge && len(ents) != 0:
						t.Errorf("%s holds %v after a refused archive", dest, ents)
					}
				}
				_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
					if err != nil {
						return nil
					}
					if strings.Contains(d.Name(), ".fsplane-") {
						t.Errorf("left behind: %s", p)
					}
					if d.Type()&fs.ModeSymlink == 0 {
						return nil
					}
					target, _ := os.Readlink(p)
					// Where the link leads, as the kernel resolves it
					// (missing ends allowed): it must stay in the root.
					if real, ok := resolveOut(root, p); ok {
						t.Errorf("link %s -> %s leads to %s, outside the root %s", p, target, real, root)
					}
					return nil
				})
			})
		}
	}
}

// resolveOut resolves the link p and reports where it leads when that
// is outside root (the missing tail of a dangling link is appended as
// written).
func resolveOut(root, p string) (string, bool) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	rootReal, _ := filepath.EvalSymlinks(root)
	rel, err := filepath.Rel(rootReal, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return real, true
	}
	return "", false
}

// TestExtractAppliesUmask: an archive's permissions pass through the
// process's umask, as tar applies it for an unprivileged user, so an
// archive cannot make world-writable files. The test runs itself in a
// child started under umask 027 (the workspace reads the umask once, at
// start), so it fails whether the umask is ignored or assumed.
func TestExtractAppliesUmask(t *testing.T) {
	t.Parallel()
	if os.Getenv("FSPLANE_TEST_UMASK") != t.Name() {
		cmd := exec.Command("sh", "-c", `umask 027 && exec "$0" -test.run='^TestExtractAppliesUmask$' -test.v`, os.Args[0])
		cmd.Env = append(os.Environ(), "FSPLANE_TEST_UMASK="+t.Name())
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestExtractAppliesUmask")) {
			t.Errorf("under umask 027: %v\n%s", err, out)
		}
		return
	}
	archive := tarOf(t,
		&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o777},
		&tar.Header{Name: "open/", Typeflag: tar.TypeDir, Mode: 0o777},
		&tar.Header{Name: "open/f", Typeflag: tar.TypeReg, Mode: 0o777},
		&tar.Header{Name: "g", Typeflag: tar.TypeReg, Mode: 0o664},
		&tar.Header{Name: "implied/f", Typeflag: tar.TypeReg, Mode: 0o400},
	)
	for _, merge := range []bool{false, true} {
		root := t.TempDir()
		ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		dest := filepath.Join(root, "t")
		if merge {
			if err := os.Mkdir(dest, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		tw, err := ws.CreateTree(dest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Extract(bytes.NewReader(archive), tw, DefaultLimits); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Commit(); err != nil {
			t.Fatal(err)
		}
		ws.Close()
		want := map[string]fs.FileMode{".": 0o750, "open": 0o750, "open/f": 0o750, "g": 0o640, "implied": 0o750, "implied/f": 0o400}
		if merge {
			want["."] = 0o700 // a merge keeps the destination's own mode
		}
		for name, perm := range want {
			fi, err := os.Lstat(filepath.Join(dest, name))
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != perm {
				t.Errorf("merge=%v: %s has mode %v, want %v", merge, name, got, perm)
			}
		}
	}
}
