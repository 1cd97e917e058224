package transfer

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsplane/fsplane/internal/workspace"
)

// TestWriteTreePseudoFiles: a directory of sysfs (whose files say a page,
// 4096 bytes, and give a few) or procfs (0 bytes, and give more) is
// archived with each file's true content, read whole first as a download
// reads it, instead of failing on the first sysfs file ("shrank while it
// was archived", which no retry mends) or archiving procfs files empty.
// A generated file that cannot be read (sysfs answers some with EINVAL)
// is left out, like a device (and noted: TestWriteTreePseudoFilesNoted).
func TestWriteTreePseudoFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dir   string
		fixed []string // files whose content is the same at each read
	}{
		{"/sys/devices/virtual/net/lo", []string{"mtu", "address", "type"}},
		{"/proc/sys/kernel/random", []string{"poolsize", "boot_id"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(tc.dir); err != nil {
				t.Skip(err)
			}
			ws, err := workspace.Open(workspace.Options{Roots: []string{tc.dir}, StateDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.Close() })
			var b bytes.Buffer
			if _, err := WriteTree(&b, ws, tc.dir); err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{} // regular files
			tr := tar.NewReader(&b)
			for {
				hdr, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(tr)
				if err != nil {
					t.Fatal(err)
				}
				if hdr.Typeflag == tar.TypeReg {
					got[hdr.Name] = body
				}
			}
			for _, name := range tc.fixed {
				want, err := os.ReadFile(filepath.Join(tc.dir, name))
				if err != nil {
					t.Skip(err)
				}
				if body, ok := got[name]; !ok || !bytes.Equal(body, want) {
					t.Errorf("%s archived as %q (present %v), file holds %q", name, body, ok, want)
				}
			}
			for name := range got {
				if _, err := os.ReadFile(filepath.Join(tc.dir, name)); err != nil {
					t.Errorf("%s cannot be read (%v) but is archived", name, err)
				}
			}
		})
	}
}
