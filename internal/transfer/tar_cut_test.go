package transfer

import (
	"archive/tar"
	"bytes"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestExtractCutArchive: an archive that stops before its end-of-archive
// blocks was cut (a body a proxy ended early, `tar c | curl -T -` whose
// tar died: its chunked body then ends cleanly), even when the cut falls
// between two members, where archive/tar reports a clean end. It is
// refused as GNU tar refuses it ("Unexpected EOF in archive"), with a
// hint to send the whole archive, instead of extracting the members
// before the cut as if they were the tree. An archive that ends with one
// zero block is whole, as GNU tar takes it.
func TestExtractCutArchive(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, m := range []struct {
		hdr  tar.Header
		data []byte
	}{
		{tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755}, nil},
		{tar.Header{Name: "d/a", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1000}, bytes.Repeat([]byte("a"), 1000)},
		{tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "d/a"}, nil},
		{tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1024}, make([]byte, 1024)},
	} {
		if err := tw.WriteHeader(&m.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	whole := b.Bytes()
	// Members: d/ at 0, d/a at 512 (data to 2048), l at 2048, zeros at
	// 2560 (data, all zeros, to 4096); the end blocks from 4096.
	for _, tc := range []struct {
		name string
		n    int // bytes of whole sent
		ok   bool
	}{
		// No member at all: an empty archive, as an empty body always
		// was (it makes an empty directory).
		{"empty body", 0, true},
		{"after the first member", 512, false},
		{"after a file's data", 2048, false},
		{"after a member without data", 2560, false},
		{"after a file whose last block is zeros", 4096, false},
		{"one end block", 4096 + 512, true},
		{"whole", len(whole), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Extract(bytes.NewReader(whole[:tc.n]), &memSink{t: t, entries: map[string]string{}}, DefaultLimits)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			fe, ok := fserr.As(err)
			if !ok || fe.Code != fserr.BadRequest || !strings.Contains(fe.Hint, "whole archive") {
				t.Fatalf("a cut archive: err %v, want bad_request with a hint to send the whole archive", err)
			}
		})
	}
}
