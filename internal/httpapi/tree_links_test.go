package httpapi_test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/ops"
)

// linkedTree writes src/a with two more names inside src (src/b,
// src/sub/c), src/o with another name outside it (out/o) and a plain
// src/z.
func linkedTree(e *xenv) {
	e.t.Helper()
	e.put("src/a", []byte("alpha"))
	e.put("src/z", []byte("zulu"))
	e.put("out/o", []byte("outside"))
	for _, l := range [][2]string{{"src/b", "src/a"}, {"src/sub/c", "src/a"}, {"src/o", "out/o"}} {
		if err := os.MkdirAll(e.path(l[0]+"/.."), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.Link(e.path(l[1]), e.path(l[0])); err != nil {
			e.t.Fatal(err)
		}
	}
}

func getTree(t testing.TB, e *xenv, p string) []byte {
	t.Helper()
	rc, err := e.c.GetTree(bg, p)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTreeHardLinks: GET /v2/fs/tree archives a file's later names as
// hard link members naming its first, and PUT /v2/fs/tree, into a new
// directory or merged into an existing one, makes them one file again.
func TestTreeHardLinks(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	linkedTree(e)
	archive := getTree(t, e, "src")

	got := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		got[hdr.Name] = fmt.Sprintf("%c %q %q", hdr.Typeflag, hdr.Linkname, b)
	}
	want := map[string]string{
		"a":     `0 "" "alpha"`,
		"b":     `1 "a" ""`,
		"sub/":  `5 "" ""`,
		"sub/c": `1 "a" ""`,
		"o":     `0 "" "outside"`,
		"z":     `0 "" "zulu"`,
	}
	if len(got) != len(want) {
		t.Errorf("members %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s, want %s", name, got[name], w)
		}
	}

	e.put("merged/z", []byte("old"))
	for _, dest := range []string{"copy", "merged"} {
		if _, err := e.c.PutTree(bg, client.TreeQuery{Path: dest}, bytes.NewReader(archive)); err != nil {
			t.Fatalf("put %s: %v", dest, err)
		}
		a, err := os.Stat(e.path(dest + "/a"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b", "sub/c"} {
			fi, err := os.Stat(e.path(dest + "/" + name))
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(e.path(dest + "/" + name)); string(b) != "alpha" || !os.SameFile(a, fi) {
				t.Errorf("%s/%s: %q, same file as a: %v", dest, name, b, os.SameFile(a, fi))
			}
		}
		for name, body := range map[string]string{"o": "outside", "z": "zulu"} {
			fi, _ := os.Stat(e.path(dest + "/" + name))
			if b, _ := os.ReadFile(e.path(dest + "/" + name)); string(b) != body || os.SameFile(a, fi) {
				t.Errorf("%s/%s: %q, same file as a: %v", dest, name, b, os.SameFile(a, fi))
			}
		}
	}
	if len(e.strays()) != 0 {
		t.Fatalf("strays: %v", e.strays())
	}
}

// TestTreeHardLinkRefusals: PUT /v2/fs/tree extracts a hard link member
// only to a regular file earlier in the same archive; one naming a file
// already in the destination, a later member or a path out of the tree
// is refused whole (bad_request naming the member), the destination
// unchanged.
func TestTreeHardLinkRefusals(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	e.put("dest/existing", []byte("mine"))
	tests := []struct {
		name    string
		entries []tarEntry
		msg     string
	}{
		{"file already in the destination", []tarEntry{{Name: "h", Type: tar.TypeLink, Link: "existing"}}, `"h"`},
		{"later member", []tarEntry{{Name: "h", Type: tar.TypeLink, Link: "f"}, {Name: "f", Type: tar.TypeReg, Body: "f"}}, `"h"`},
		{"out of the tree", []tarEntry{{Name: "h", Type: tar.TypeLink, Link: "../dest/existing"}}, `".."`},
		{"absolute", []tarEntry{{Name: "h", Type: tar.TypeLink, Link: e.path("dest/existing")}}, "absolute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.c.PutTree(bg, client.TreeQuery{Path: "dest"}, bytes.NewReader(makeTar(t, tc.entries)))
			ce := wantErr(t, err, 400, "bad_request")
			if !strings.Contains(ce.Message, "hard link") || !strings.Contains(ce.Message, tc.msg) {
				t.Errorf("message %q lacks \"hard link\" or %s", ce.Message, tc.msg)
			}
			if got := tree(t, e.path("dest")); len(got) != 1 || got["existing"] != "file 644 mine" {
				t.Errorf("destination changed: %v", got)
			}
		})
	}
}

// BenchmarkGetTreeHardLinks downloads a tree of 2,000 files of 4 KiB,
// each under two names, and reports the archive's size.
func BenchmarkGetTreeHardLinks(b *testing.B) {
	e := newXEnv(b, ops.Options{})
	body := bytes.Repeat([]byte("0123456789abcdef"), 256)
	for i := range 2000 {
		name := fmt.Sprintf("src/d%02d/f%04d", i%20, i)
		e.put(name, body)
		if err := os.Link(e.path(name), e.path(name+".2")); err != nil {
			b.Fatal(err)
		}
	}
	var size int
	for b.Loop() {
		size = len(getTree(b, e, "src"))
	}
	b.ReportMetric(float64(size), "archive-bytes")
}
