package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	// The XXH3-128 of the empty input, from the reference implementation.
	if got, want := Version(nil), "99aa06d3014798d86001c324468d497f"; got != want {
		t.Errorf("Version(nil) = %s, want %s", got, want)
	}
	for _, n := range []int{0, 1, 16, 17, 128, 129, 240, 241, 1 << 10, 1<<20 + 7} {
		b := bytes.Repeat([]byte("abcdefghij"), n/10+1)[:n]
		v := Version(b)
		if !isVersion(v) {
			t.Errorf("Version of %d bytes = %q: not 32 lowercase hex", n, v)
		}
		sv, size, err := versionOf(bytes.NewReader(b))
		if err != nil || sv != v || size != int64(n) {
			t.Errorf("versionOf(%d bytes) = %s, %d, %v; want %s", n, sv, size, err, v)
		}
	}
	if Version([]byte("a")) == Version([]byte("b")) {
		t.Error("different contents have equal versions")
	}
}

func TestReadText(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	files := map[string]string{
		"plain.txt":  "hello\nworld\n",
		"bom.txt":    "\xef\xbb\xbfhello\r\n",
		"empty.txt":  "",
		"binary.bin": "abc\x00def",
		"latin1.txt": "caf\xe9 au lait",
		"bom-bad":    "\xef\xbb\xbfok\xff",
		"utf8.txt":   "naïve – ✓ 𝄞\n",
		"late-nul":   strings.Repeat("x", sniffLen) + "\x00",
	}
	for name, c := range files {
		writeFile(t, filepath.Join(root, name), c, 0o600)
	}
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(root, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(TextLimit + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	if err := os.Symlink("plain.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		path    string
		bom     bool
		code    fserr.Code
		message string // substring
		hint    string // substring
	}{
		{path: "plain.txt"},
		{path: "bom.txt", bom: true},
		{path: "empty.txt"},
		{path: "utf8.txt"},
		{path: "link"},
		{path: "late-nul", code: "", message: ""}, // a NUL past the sniffed prefix is valid UTF-8
		{path: "binary.bin", code: fserr.DecodeError, message: "binary", hint: "download the file"},
		{path: "latin1.txt", code: fserr.DecodeError, message: "offset 3", hint: "download"},
		{path: "bom-bad", code: fserr.DecodeError, message: "offset 5"},
		{path: "dir", code: fserr.InvalidTarget, message: "is a directory", hint: "name a file inside it"},
		{path: "fifo", code: fserr.InvalidTarget, message: "not a regular file"},
		{path: "big.txt", code: fserr.TooLarge, message: "file exceeds the 16 MiB buffered text limit", hint: "download"},
		{path: "missing.txt", code: fserr.NotFound},
		{path: "../x", code: fserr.OutsideRoot, hint: "use a path inside one of the roots"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			tf, err := w.ReadText(tc.path)
			if tc.code != "" {
				e := wantCode(t, err, tc.code)
				if !strings.Contains(e.Message, tc.message) || !strings.Contains(e.Hint, tc.hint) {
					t.Errorf("error %q / hint %q; want message containing %q, hint containing %q", e.Message, e.Hint, tc.message, tc.hint)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := readFile(t, filepath.Join(root, tf.Path.Rel))
			if diff := cmp.Diff(want, string(tf.Content)); diff != "" {
				t.Errorf("content mismatch (-want +got):\n%s", diff)
			}
			if tf.Version != Version([]byte(want)) || tf.BOM != tc.bom || tf.Mode.Perm() != 0o600 || tf.ModTime.IsZero() {
				t.Errorf("got version %s bom %v mode %v mtime %v", tf.Version, tf.BOM, tf.Mode, tf.ModTime)
			}
		})
	}
}

func TestReadBytes(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "bin"), "\x00\x01\x02\xff", 0o644)
	cases := []struct {
		path string
		max  int64
		code fserr.Code
	}{
		{"bin", 4, ""},
		{"bin", 1 << 20, ""},
		{"bin", 3, fserr.TooLarge},
		{"bin", 0, fserr.BadRequest},
		{".", 10, fserr.InvalidTarget},
		{"nope", 10, fserr.NotFound},
	}
	for _, tc := range cases {
		content, version, err := w.ReadBytes(tc.path, tc.max)
		if tc.code != "" {
			wantCode(t, err, tc.code)
			continue
		}
		if err != nil {
			t.Fatalf("ReadBytes(%q, %d): %v", tc.path, tc.max, err)
		}
		if string(content) != "\x00\x01\x02\xff" || version != Version(content) {
			t.Errorf("ReadBytes(%q, %d) = %q, %s", tc.path, tc.max, content, version)
		}
	}
}
