package workspace

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestExistingDestinationHint: a move or copy refused because its
// destination exists says what will work. Naming a directory to put a
// file in used to get "pass overwrite to replace it", which then failed
// (a file cannot replace a directory); the hint now names the path inside
// it.
func TestExistingDestinationHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, dst string
		copy           bool
		want           string
	}{
		{"move a file onto a directory", "a.txt", "sub", false, "give " + "sub/a.txt" + " as the destination"},
		{"copy a file onto a directory", "a.txt", "sub", true, "give " + "sub/a.txt" + " as the destination"},
		{"move a directory onto a directory", "dir", "sub", false, "give sub/dir as the destination to put it inside"},
		{"move a directory onto a file", "dir", "b.txt", false, "a directory cannot replace a file"},
		{"move a file onto a file", "a.txt", "b.txt", false, "pass overwrite to replace it"},
		{"copy a file onto a file", "a.txt", "b.txt", true, "pass overwrite to replace it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, "a.txt"), "a\n", 0o644)
			writeFile(t, filepath.Join(root, "b.txt"), "b\n", 0o644)
			writeFile(t, filepath.Join(root, "sub", "x"), "x\n", 0o644)
			writeFile(t, filepath.Join(root, "dir", "y"), "y\n", 0o644)
			var err error
			if tc.copy {
				_, err = w.Copy(tc.src, tc.dst, false, nil)
			} else {
				_, err = w.Move(tc.src, tc.dst, false, "")
			}
			fe, ok := fserr.As(err)
			if !ok || fe.Code != fserr.AlreadyExists {
				t.Fatalf("err %v, want already_exists", err)
			}
			if !strings.Contains(fe.Hint, tc.want) {
				t.Errorf("hint %q, want it to say %q", fe.Hint, tc.want)
			}
		})
	}
}
