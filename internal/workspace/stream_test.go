package workspace

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// failingReader yields n bytes, then fails.
type failingReader struct {
	n   int
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := min(len(p), f.n)
	for i := range k {
		p[i] = 'z'
	}
	f.n -= k
	return k, nil
}

func TestWriteStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		path    string
		src     func() io.Reader
		ctx     func() context.Context
		code    fserr.Code
		want    string // content of path afterwards ("" : absent unless existing)
		created bool
	}{
		{name: "new file", path: "d/new.bin", src: func() io.Reader { return strings.NewReader("hello") }, want: "hello", created: true},
		{name: "replace", path: "d/old.txt", src: func() io.Reader { return strings.NewReader("new") }, want: "new"},
		{name: "larger than the buffer", path: "d/big", src: func() io.Reader { return bytes.NewReader(bytes.Repeat([]byte("ab"), 3<<20)) }, want: strings.Repeat("ab", 3<<20), created: true},
		{name: "source fails", path: "d/old.txt", src: func() io.Reader { return &failingReader{n: 3 << 20, err: errors.New("connection reset")} }, code: fserr.BadRequest, want: "old"},
		{name: "truncated source", path: "d/old.txt", src: func() io.Reader { return &failingReader{n: 10, err: io.ErrUnexpectedEOF} }, code: fserr.BadRequest, want: "old"},
		{name: "cancelled", path: "d/old.txt", src: func() io.Reader { return strings.NewReader("x") }, ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, code: fserr.IOError, want: "old"},
		{name: "missing directory", path: "nodir/f", src: func() io.Reader { return strings.NewReader("x") }, code: fserr.NotFound},
		{name: "onto a directory", path: "d", src: func() io.Reader { return strings.NewReader("x") }, code: fserr.InvalidTarget},
		{name: "outside", path: "/etc/x", src: func() io.Reader { return strings.NewReader("x") }, code: fserr.OutsideRoot},
		{name: "through a link out", path: "out/x", src: func() io.Reader { return strings.NewReader("x") }, code: fserr.OutsideRoot},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, "d/old.txt"), "old", 0o640)
			if err := os.Symlink(t.TempDir(), filepath.Join(root, "out")); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			res, err := w.WriteStream(ctx, tc.path, tc.src(), StreamOptions{})
			if tc.code != "" {
				wantCode(t, err, tc.code)
			} else if err != nil {
				t.Fatal(err)
			} else {
				if res.Created != tc.created || res.Size != int64(len(tc.want)) || res.Version != Version([]byte(tc.want)) {
					t.Errorf("result %+v", res)
				}
			}
			if tc.want != "" {
				if got := readFile(t, filepath.Join(root, tc.path)); got != tc.want {
					t.Errorf("content %.20q, want %.20q", got, tc.want)
				}
			}
			if fi, err := os.Stat(filepath.Join(root, "d/old.txt")); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("old.txt mode %v %v", fi.Mode(), err)
			}
			assertNoStrays(t, root)
			assertNoParts(t, root)
		})
	}
}

func assertNoParts(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), UploadPartPrefix) {
			t.Errorf("part file left: %s", p)
		}
		return nil
	})
}

func TestTreeWriter(t *testing.T) {
	t.Parallel()
	type step struct {
		kind, name, arg string
		code            fserr.Code
	}
	tests := []struct {
		name  string
		dest  string
		steps []step
		want  map[string]string // snapshot of dest after Commit; nil: dest absent
	}{
		{name: "files, dirs and links", dest: "new", steps: []step{
			{kind: "dir", name: "a"}, {kind: "file", name: "a/f", arg: "F"}, {kind: "file", name: "b/c/g", arg: "G"},
			{kind: "link", name: "a/l", arg: "f"}, {kind: "hard", name: "h", arg: "a/f"}, {kind: "file", name: "a/f", arg: "F2"},
		}},
		{name: "bad names", dest: "new", steps: []step{
			{kind: "file", name: "../x", code: fserr.BadRequest}, {kind: "file", name: "/x", code: fserr.BadRequest},
			{kind: "file", name: "a/./b", code: fserr.BadRequest}, {kind: "file", name: "", code: fserr.BadRequest},
		}},
		{name: "link outside", dest: "new", steps: []step{
			{kind: "link", name: "l", arg: "/etc", code: fserr.OutsideRoot}, {kind: "link", name: "l", arg: "../../x", code: fserr.OutsideRoot},
		}},
		{name: "through a link", dest: "new", steps: []step{
			{kind: "link", name: "l", arg: "."}, {kind: "file", name: "l/x", code: fserr.BadRequest},
		}},
		{name: "file over dir", dest: "new", steps: []step{
			{kind: "dir", name: "a"}, {kind: "file", name: "a", code: fserr.BadRequest},
		}},
		{name: "hard link to a dir", dest: "new", steps: []step{
			{kind: "dir", name: "a"}, {kind: "hard", name: "h", arg: "a", code: fserr.BadRequest},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			tw, err := w.CreateTree(tc.dest, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.steps {
				var err error
				switch s.kind {
				case "dir":
					err = tw.Dir(s.name, 0o755)
				case "file":
					_, err = tw.File(s.name, 0o640, strings.NewReader(s.arg))
				case "link":
					err = tw.Symlink(s.name, s.arg)
				case "hard":
					err = tw.Link(s.name, s.arg)
				}
				if s.code != "" {
					wantCode(t, err, s.code)
				} else if err != nil {
					t.Fatalf("%s %s: %v", s.kind, s.name, err)
				}
			}
			if _, err := tw.Commit(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(filepath.Join(root, tc.dest)); err != nil {
				t.Fatal(err)
			}
			if tc.name == "files, dirs and links" {
				if got := readFile(t, filepath.Join(root, "new/a/f")); got != "F2" {
					t.Errorf("a/f = %q", got)
				}
				if got := readFile(t, filepath.Join(root, "new/h")); got != "F" {
					t.Errorf("h = %q (a hard link to the replaced a/f keeps the first content)", got)
				}
				if target, _ := os.Readlink(filepath.Join(root, "new/a/l")); target != "f" {
					t.Errorf("link %q", target)
				}
			}
			assertNoStrays(t, root)
		})
	}
}

func TestTreeWriterAbortLeavesNothing(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "exists/keep"), "k", 0o644)
	for _, dest := range []string{"fresh", "exists"} {
		tw, err := w.CreateTree(dest, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tw.File("x/y", 0o644, strings.NewReader("data")); err != nil {
			t.Fatal(err)
		}
		tw.Abort()
		tw.Abort()
		if _, err := tw.Commit(); err == nil {
			t.Fatal("commit after abort succeeded")
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "fresh")); !isNotExist(err) {
		t.Errorf("fresh exists after abort: %v", err)
	}
	got := snapshot(t, filepath.Join(root, "exists"))
	if len(got) != 2 || got["keep"] == "" {
		t.Errorf("exists after abort: %v", got)
	}
	assertNoStrays(t, root)
}

// unreadBody fails the test if the upload's body is read at all.
type unreadBody struct{ t *testing.T }

func (b unreadBody) Read([]byte) (int, error) {
	b.t.Error("the body was read, though the upload was already refused")
	return 0, errors.New("unexpected read")
}

// TestWriteStreamExpectedVersionOfMissingFile: an upload conditional on a
// version of a file that does not exist is refused before its body is
// spooled (a large body was written to disk, fsynced, then discarded).
func TestWriteStreamExpectedVersionOfMissingFile(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	_, err := w.WriteStream(context.Background(), "gone.txt", unreadBody{t}, StreamOptions{ExpectedVersion: Version([]byte("old"))})
	wantCode(t, err, fserr.StaleVersion)
	assertNoStrays(t, root)
}

// swappingBody swaps the directory dir for a link leading out of the
// root while the upload reads it, then yields content.
type swappingBody struct {
	t             *testing.T
	dir, outside  string
	swapped, done bool
}

func (b *swappingBody) Read(p []byte) (int, error) {
	if !b.swapped {
		b.swapped = true
		if err := os.Rename(b.dir, b.dir+".moved"); err != nil {
			b.t.Fatal(err)
		}
		if err := os.Symlink(b.outside, b.dir); err != nil {
			b.t.Fatal(err)
		}
	}
	if b.done {
		return 0, io.EOF
	}
	b.done = true
	return copy(p, "content\n"), nil
}

// TestWriteStreamRemovesItsPartAfterASwap: an upload whose destination
// directory is swapped for a link leading out while the body streams is
// refused, and its part file goes too — removed through a handle on the
// directory it was made in, not by a path the root now refuses.
func TestWriteStreamRemovesItsPartAfterASwap(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	outside := t.TempDir()
	dir := filepath.Join(root, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := w.WriteStream(context.Background(), "d/up.txt", &swappingBody{t: t, dir: dir, outside: outside}, StreamOptions{})
	if err == nil {
		t.Fatal("the upload through a swapped directory succeeded")
	}
	for _, d := range []string{dir + ".moved", outside} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s holds %v after the refused upload", d, ents)
		}
	}
}
