package transfer

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// hookAfter passes writes on to w and runs hook once, when more than n
// bytes have gone through.
type hookAfter struct {
	w    *bytes.Buffer
	n    int
	hook func()
}

func (h *hookAfter) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	if h.hook != nil && h.w.Len() > h.n {
		h.hook()
		h.hook = nil
	}
	return n, err
}

// TestWriteFileChangedWhileArchived: a file with several names, which
// fsplane rewrites in place (growing it first when the new content is
// longer), fails the stream when it changes while its content is copied,
// as a download of it is cut, instead of going out as a mix of two
// contents under a header that says complete. A file with one name that
// grows is still archived at its size when its header was written, and
// removing another name of a file (its link count moves) is no change.
func TestWriteFileChangedWhileArchived(t *testing.T) {
	t.Parallel()
	const size = 3 * 4096
	old := bytes.Repeat([]byte("o"), size)
	overwrite := func(p string, off int64, b []byte) {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := f.WriteAt(b, off); err != nil {
			t.Error(err)
		}
	}
	for _, tc := range []struct {
		name   string
		linked bool
		change func(p, other string)
		fail   bool
	}{
		{name: "linked, rewritten in place, same size", linked: true, fail: true,
			change: func(p, _ string) { overwrite(p, 0, bytes.Repeat([]byte("n"), size)) }},
		{name: "linked, grown then rewritten", linked: true, fail: true,
			change: func(p, _ string) { overwrite(p, 0, bytes.Repeat([]byte("n"), size+10)) }},
		{name: "linked, other name removed", linked: true,
			change: func(_, other string) {
				if err := os.Remove(other); err != nil {
					t.Error(err)
				}
			}},
		{name: "linked, unchanged", linked: true, change: func(string, string) {}},
		{name: "one name, appended to",
			change: func(p, _ string) { overwrite(p, size, []byte("more")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p, other := filepath.Join(dir, "f"), filepath.Join(dir, "g")
			if err := os.WriteFile(p, old, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.linked {
				if err := os.Link(p, other); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			// The header is one block; the hook runs after the first
			// chunk of content.
			tw := tar.NewWriter(&hookAfter{w: &out, n: 1024, hook: func() { tc.change(p, other) }})
			err := writeFile(tw, &tar.Header{Name: "f", Mode: 0o644}, func() (*os.File, error) { return os.Open(p) }, make([]byte, 4096), newLinkSet(linkMemory))
			if tc.fail {
				if fserr.CodeOf(err) != fserr.Conflict {
					t.Fatalf("err %v, want a conflict", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tw.Close()
			if m := readMembers(t, out.Bytes())["f"]; m.typ != tar.TypeReg || m.body != string(old) {
				t.Fatalf("f: type %q, %d bytes; want the %d bytes it had", m.typ, len(m.body), size)
			}
		})
	}
}
