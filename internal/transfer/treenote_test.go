package transfer

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
)

// TestClientReadsTheNote: the Go client's SkippedInTree reads the note
// this package writes (the same record keys), takes no other member for
// it, and refuses a note it cannot read rather than report it whole.
func TestClientReadsTheNote(t *testing.T) {
	t.Parallel()
	top, err := os.Stat(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	n := newSkipNote(nil, noteBudget)
	n.add("locked.txt", &skipError{err: syscall.EACCES})
	n.add("sub", errors.New("boom"))
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: "a.txt", Typeflag: tar.TypeReg, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if err := n.write(tw, top); err != nil {
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
		count, listed, ok, err := client.SkippedInTree(hdr)
		if !ok {
			if hdr.Name != "a.txt" {
				t.Errorf("member %q not taken for the note, nor a.txt", hdr.Name)
			}
			continue
		}
		notes++
		if err != nil {
			t.Fatal(err)
		}
		want := []client.TreeSkipped{{Path: "locked.txt", Code: "permission_denied", Message: "permission denied"}, {Path: "sub", Code: "io_error", Message: "i/o error"}}
		if diff := cmp.Diff(want, listed); count != 2 || diff != "" {
			t.Errorf("note of %d (want 2), entries (-want +got):\n%s", count, diff)
		}
	}
	if notes != 1 {
		t.Errorf("%d notes read, want 1", notes)
	}
	for _, recs := range []map[string]string{
		{"FSPLANE.skipped.count": "two", "FSPLANE.skipped": "[]"},
		{"FSPLANE.skipped.count": "1", "FSPLANE.skipped": "[{"},
	} {
		if _, _, ok, err := client.SkippedInTree(&tar.Header{Name: "./", PAXRecords: recs}); !ok || err == nil {
			t.Errorf("a bad note %v: ok %v, err %v; want ok and an error", recs, ok, err)
		}
	}
}
