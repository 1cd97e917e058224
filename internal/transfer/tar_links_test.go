package transfer

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/testenv"
	"github.com/fsplane/fsplane/internal/workspace"
)

// member is an archive member as the hard-link tests compare it: its
// type, link target and content.
type member struct {
	typ  byte
	link string
	body string
}

// readMembers reads an archive's members other than directories.
func readMembers(t *testing.T, archive []byte) map[string]member {
	t.Helper()
	out := map[string]member{}
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeDir {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[hdr.Name] = member{typ: hdr.Typeflag, link: hdr.Linkname, body: string(b)}
	}
}

// linkTree writes files under root (as testenv.WriteTree) and then each
// hard link, new name first, both relative to root (parents made as
// needed).
func linkTree(t *testing.T, root string, files map[string]string, links [][2]string) {
	t.Helper()
	testenv.WriteTree(t, root, files)
	for _, l := range links {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, l[0])), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(root, l[1]), filepath.Join(root, l[0])); err != nil {
			t.Fatal(err)
		}
	}
}

// archiveDir opens a workspace over root (state directory state) and
// archives root/t with WriteTree.
func archiveDir(t *testing.T, root, state string) []byte {
	t.Helper()
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	var b bytes.Buffer
	if _, err := WriteTree(&b, ws, filepath.Join(root, "t")); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWriteTreeHardLinks: the first name of a file with several names
// carries its content; each later name in the archive is a hard link
// member naming it, as GNU tar writes them. Names outside the archived
// directory, or skipped by the walk, do not count.
func TestWriteTreeHardLinks(t *testing.T) {
	t.Parallel()
	reg := func(body string) member { return member{typ: tar.TypeReg, body: body} }
	link := func(to string) member { return member{typ: tar.TypeLink, link: to} }
	tests := []struct {
		name       string
		files      map[string]string
		links      [][2]string // new name, existing name
		stateInTop bool        // the state directory is t/.state
		want       map[string]member
	}{
		{
			name:  "two names one inode",
			files: map[string]string{"t/a": "alpha"},
			links: [][2]string{{"t/b", "t/a"}},
			want:  map[string]member{"a": reg("alpha"), "b": link("a")},
		},
		{
			name:  "three names",
			files: map[string]string{"t/a": "alpha", "t/z": "zulu"},
			links: [][2]string{{"t/b", "t/a"}, {"t/c", "t/a"}},
			want:  map[string]member{"a": reg("alpha"), "b": link("a"), "c": link("a"), "z": reg("zulu")},
		},
		{
			name:  "across subdirectories",
			files: map[string]string{"t/d1/x": "x"},
			links: [][2]string{{"t/d2/sub/y", "t/d1/x"}, {"t/top", "t/d1/x"}},
			want:  map[string]member{"d1/x": reg("x"), "d2/sub/y": link("d1/x"), "top": link("d1/x")},
		},
		{
			name:  "only other name outside the subtree",
			files: map[string]string{"out/o": "outside"},
			links: [][2]string{{"t/a", "out/o"}},
			want:  map[string]member{"a": reg("outside")},
		},
		{
			name:  "two names inside, one outside",
			files: map[string]string{"out/o": "outside"},
			links: [][2]string{{"t/a", "out/o"}, {"t/b", "out/o"}},
			want:  map[string]member{"a": reg("outside"), "b": link("a")},
		},
		{
			name:       "first name skipped by the walk (state directory)",
			files:      map[string]string{"t/.state/x": "kept"},
			links:      [][2]string{{"t/a", "t/.state/x"}, {"t/b", "t/.state/x"}},
			stateInTop: true,
			want:       map[string]member{"a": reg("kept"), "b": link("a")},
		},
		{
			name:  "single names and a symbolic link are unchanged",
			files: map[string]string{"t/a": "alpha", "t/s": "->a"},
			want:  map[string]member{"a": reg("alpha"), "s": {typ: tar.TypeSymlink, link: "a"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			linkTree(t, root, tc.files, tc.links)
			state := t.TempDir()
			if tc.stateInTop {
				state = filepath.Join(root, "t", ".state")
			}
			got := readMembers(t, archiveDir(t, root, state))
			for name, w := range tc.want {
				if g, ok := got[name]; !ok || g != w {
					t.Errorf("%s: %+v (present %v), want %+v", name, g, ok, w)
				}
			}
			for name := range got {
				if _, ok := tc.want[name]; !ok && !strings.HasPrefix(name, ".state/") {
					t.Errorf("unexpected member %s: %+v", name, got[name])
				}
			}
		})
	}
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		w := f.n
		f.n = 0
		return w, errors.New("write failed")
	}
	f.n -= len(p)
	return len(p), nil
}

// TestHardLinkRecordedAfterContent: a name whose content could not be
// archived whole is not what later names link to; the next name carries
// the content.
func TestHardLinkRecordedAfterContent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, bytes.Repeat([]byte("x"), 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	links := newLinkSet(linkMemory)
	buf := make([]byte, 4096)
	failing := tar.NewWriter(&failAfter{n: 8 << 10})
	if err := writeFile(failing, &tar.Header{Name: "a", Mode: 0o644}, func() (*os.File, error) { return os.Open(a) }, buf, links); err == nil {
		t.Fatal("writing a into a failing writer succeeded")
	}
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	if err := writeFile(tw, &tar.Header{Name: "b", Mode: 0o644}, func() (*os.File, error) { return os.Open(b) }, buf, links); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	if m := readMembers(t, out.Bytes())["b"]; m.typ != tar.TypeReg || len(m.body) != 64<<10 {
		t.Fatalf("b: type %q, %d bytes, link %q; want a regular file of %d bytes", m.typ, len(m.body), m.link, 64<<10)
	}
}

// TestLinkSetBounded: a full set records no more first names (their
// later names carry content again), and an inode whose names have all
// been archived leaves the set, making room.
func TestLinkSetBounded(t *testing.T) {
	t.Parallel()
	s := newLinkSet(2 * (linkCost + 1))
	s.record(inode{1, 1}, 2, "a")
	s.record(inode{1, 2}, 3, "b")
	s.record(inode{1, 3}, 2, "c")
	if _, ok := s.take(inode{1, 3}); ok {
		t.Fatal("recorded past the limit")
	}
	for _, want := range []bool{true, false} {
		if first, ok := s.take(inode{1, 1}); ok != want || (ok && first != "a") {
			t.Fatalf("take: %q %v, want %v", first, ok, want)
		}
	}
	s.record(inode{1, 3}, 2, "c")
	if first, ok := s.take(inode{1, 3}); !ok || first != "c" {
		t.Fatalf("after a retired inode: %q %v, want c", first, ok)
	}
	if first, ok := s.take(inode{1, 2}); !ok || first != "b" {
		t.Fatalf("take b: %q %v", first, ok)
	}
}

// TestWriteTreeHardLinksGNUTar: GNU tar lists the later names as links
// and extracts them as one file with the content.
func TestWriteTreeHardLinksGNUTar(t *testing.T) {
	t.Parallel()
	if out, err := exec.Command("tar", "--version").Output(); err != nil || !bytes.Contains(out, []byte("GNU tar")) {
		t.Skip("GNU tar is not installed")
	}
	root := t.TempDir()
	linkTree(t, root, map[string]string{"t/a": "alpha", "t/z": "zulu"}, [][2]string{{"t/b", "t/a"}, {"t/d/c", "t/a"}})
	archive := filepath.Join(t.TempDir(), "t.tar")
	if err := os.WriteFile(archive, archiveDir(t, root, t.TempDir()), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command("tar", "-tvf", archive).CombinedOutput()
	if err != nil {
		t.Fatalf("tar -tvf: %v\n%s", err, list)
	}
	for _, want := range []string{"b link to a\n", "d/c link to a\n"} {
		if !bytes.Contains(list, []byte(want)) {
			t.Errorf("tar -tvf lists no %q:\n%s", want, list)
		}
	}
	dest := t.TempDir()
	if out, err := exec.Command("tar", "-xf", archive, "-C", dest).CombinedOutput(); err != nil {
		t.Fatalf("tar -xf: %v\n%s", err, out)
	}
	first, err := os.Stat(filepath.Join(dest, "a"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "d/c"} {
		p := filepath.Join(dest, name)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != "alpha" || !os.SameFile(first, fi) {
			t.Errorf("%s: %q, same file as a: %v", name, b, os.SameFile(first, fi))
		}
	}
	if z, _ := os.Stat(filepath.Join(dest, "z")); os.SameFile(first, z) {
		t.Error("z is linked to a")
	}
}
