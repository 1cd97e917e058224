package transfer

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestExtractRefusesSparseMembers: a sparse member, as GNU tar -S writes
// it (old GNU and PAX formats), is refused: its holes would be written as
// zeros, so a few kilobytes of archive could fill the disk.
func TestExtractRefusesSparseMembers(t *testing.T) {
	t.Parallel()
	gnuTar, err := exec.LookPath("tar")
	if err != nil {
		t.Skip("no tar")
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("x"), 64<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, format := range []string{"gnu", "pax"} {
		out := filepath.Join(t.TempDir(), "a.tar")
		if b, err := exec.Command(gnuTar, "-S", "--format="+format, "-C", dir, "-cf", out, "big").CombinedOutput(); err != nil {
			t.Skipf("tar -S --format=%s: %v %s", format, err, b)
		}
		archive, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(archive) > 1<<20 {
			t.Fatalf("%s: the archive is %d bytes, not sparse", format, len(archive))
		}
		sink := &memSink{t: t, entries: map[string]string{}}
		_, err = Extract(bytes.NewReader(archive), sink, DefaultLimits)
		if fserr.CodeOf(err) != fserr.BadRequest || !strings.Contains(err.Error(), "sparse") {
			t.Errorf("%s: %v, want a bad_request naming the sparse member", format, err)
		}
		if len(sink.entries) != 0 {
			t.Errorf("%s: extracted %v", format, sink.entries)
		}
	}
}
