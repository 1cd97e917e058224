package transfer

import (
	"archive/tar"
	"bytes"
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
)

// TestClientReadsTheNote: the Go client's SkippedInTree reads the note
// this package writes (names and record keys are the same), and takes no
// other member for it.
func TestClientReadsTheNote(t *testing.T) {
	t.Parallel()
	n := newSkipNote(nil, noteBudget)
	n.add("locked.txt", &skipError{err: syscall.EACCES})
	n.add("sub", errors.New("boom"))
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: "a.txt", Typeflag: tar.TypeReg, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if err := n.write(tw); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&b)
	var notes int
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		count, listed, ok := client.SkippedInTree(hdr)
		if !ok {
			if hdr.Name != "a.txt" {
				t.Errorf("member %q not taken for the note, nor a.txt", hdr.Name)
			}
			continue
		}
		notes++
		want := []client.TreeSkipped{{Path: "locked.txt", Code: "permission_denied", Message: "permission denied"}, {Path: "sub", Code: "io_error", Message: listed[1].Message}}
		if count != 2 || !cmp.Equal(want, listed) {
			t.Errorf("note: %d, %+v; want 2, %+v", count, listed, want)
		}
	}
	if notes != 1 {
		t.Errorf("%d notes read, want 1", notes)
	}
}
