package transfer

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestWriteTreePseudoFilesNoted: a sysfs attribute that cannot be read
// (lo's speed and duplex answer EINVAL) has no content to archive and is
// left out, as before, but no longer silently: the archive's note names
// each such file with io_error. One whose read says it is gone is
// simply no longer there. The note lists exactly the regular files a
// plain read fails on.
func TestWriteTreePseudoFilesNoted(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"/sys/devices/virtual/net/lo", "/sys/devices/virtual/net/lo/power"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(dir); err != nil {
				t.Skip(err)
			}
			dir, err := filepath.EvalSymlinks(dir)
			if err != nil {
				t.Skip(err)
			}
			ws, err := workspace.Open(workspace.Options{Roots: []string{dir}, StateDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.Close() })
			var b bytes.Buffer
			if _, err := WriteTree(&b, ws, dir); err != nil {
				t.Fatal(err)
			}
			got := map[string]fserr.Code{}
			for _, s := range listArchive(t, b.Bytes()).skipped {
				got[s.Path] = s.Code
			}
			want := map[string]fserr.Code{}
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return nil
				}
				if _, err := os.ReadFile(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					rel, _ := filepath.Rel(dir, p)
					want[filepath.ToSlash(rel)] = fserr.IOError
					if errors.Is(err, fs.ErrPermission) {
						want[filepath.ToSlash(rel)] = fserr.PermissionDenied
					}
				}
				return nil
			})
			if len(want) == 0 {
				t.Skipf("every file of %s can be read here", dir)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("noted as left out (-want +got):\n%s", diff)
			}
		})
	}
}
