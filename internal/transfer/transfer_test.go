package transfer

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

func TestMemberName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "a/b", want: "a/b"},
		{in: "./a/b/", want: "a/b"},
		{in: "a//b/./c", want: "a/b/c"},
		{in: ".", want: "."},
		{in: "./", want: "."},
		{in: "..", bad: true},
		{in: "a/../b", bad: true},
		{in: "a/..", bad: true},
		{in: "/etc/passwd", bad: true},
		{in: "", bad: true},
		{in: "a\x00b", bad: true},
		{in: "..a/b..", want: "..a/b.."},
	}
	for _, tc := range tests {
		got, err := MemberName(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("MemberName(%q) = %q, %v", tc.in, got, err)
		}
	}
}

func FuzzMemberName(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "/abs", "./a/../b", "a\x00", ".", "a/./b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := MemberName(name)
		if err != nil {
			return
		}
		if got == "" || path.IsAbs(got) || got == ".." || strings.HasPrefix(got, "../") || strings.Contains(got, "/../") ||
			strings.IndexByte(got, 0) >= 0 || path.Clean(got) != got {
			t.Fatalf("MemberName(%q) = %q: not a clean name inside the tree", name, got)
		}
	})
}

// memSink records what Extract hands it and checks every name.
type memSink struct {
	t       *testing.T
	entries map[string]string
}

func (m *memSink) check(name string) {
	if name == "" || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || path.Clean(name) != name {
		m.t.Fatalf("sink got the name %q", name)
	}
}

func (m *memSink) Dir(name string, perm fs.FileMode) error {
	m.check(name)
	m.entries[name] = "dir"
	return nil
}

func (m *memSink) File(name string, perm fs.FileMode, r io.Reader) (int64, error) {
	m.check(name)
	b, err := io.ReadAll(r)
	m.entries[name] = "file " + string(b)
	return int64(len(b)), err
}

func (m *memSink) Symlink(name, target string) error {
	m.check(name)
	// The target is checked lexically downstream, which holds only when
	// no ".." follows a name in it.
	named := false
	for _, c := range strings.Split(target, "/") {
		switch {
		case c == ".." && named:
			m.t.Fatalf("sink got the link target %q (for %q)", target, name)
		case c != "" && c != "." && c != "..":
			named = true
		}
	}
	if target == "" || len(target) > maxName {
		m.t.Fatalf("sink got a link target of %d bytes", len(target))
	}
	m.entries[name] = "link " + target
	return nil
}

func (m *memSink) Link(name, target string) error {
	m.check(name)
	m.check(target)
	m.entries[name] = "hard " + target
	return nil
}

func tarOf(t testing.TB, hdrs ...*tar.Header) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range hdrs {
		if h.Typeflag == tar.TypeReg && h.Size == 0 {
			h.Size = int64(len(h.Name))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			io.WriteString(tw, h.Name[:h.Size])
		}
	}
	tw.Close()
	return b.Bytes()
}

func TestExtract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		archive []byte
		lim     Limits
		want    map[string]string
		code    fserr.Code
		hint    string // part of the error's hint
	}{
		{name: "ok", archive: tarOf(t, &tar.Header{Name: "d/", Typeflag: tar.TypeDir}, &tar.Header{Name: "d/file", Typeflag: tar.TypeReg},
			&tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "d/file"}, &tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "./d/file"},
			&tar.Header{Name: "g", Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "x"}}),
			want: map[string]string{"d": "dir", "d/file": "file d/file", "l": "link d/file", "h": "hard d/file"}},
		{name: "too many", archive: tarOf(t, &tar.Header{Name: "a", Typeflag: tar.TypeReg}, &tar.Header{Name: "b", Typeflag: tar.TypeReg}),
			lim: Limits{MaxBytes: 100, MaxEntries: 1}, code: fserr.TooLarge, hint: "(limits: 100 bytes, 1 entries)"},
		{name: "too big", archive: tarOf(t, &tar.Header{Name: "aaaaaaaaaa", Typeflag: tar.TypeReg}), lim: Limits{MaxBytes: 5, MaxEntries: 10},
			code: fserr.TooLarge, hint: "(limits: 5 bytes, 10 entries)"},
		{name: "device", archive: tarOf(t, &tar.Header{Name: "c", Typeflag: tar.TypeChar}), code: fserr.BadRequest},
		{name: "file as top", archive: tarOf(t, &tar.Header{Name: "./.", Typeflag: tar.TypeReg, Size: 1}), code: fserr.BadRequest},
		{name: "truncated", archive: tarOf(t, &tar.Header{Name: strings.Repeat("x", 90), Typeflag: tar.TypeReg})[:552], code: fserr.BadRequest},
		{name: "bzip2", archive: []byte("BZh91AY&SY"), code: fserr.BadRequest},
		// Directories a name implies are entries too: one member must
		// not create a thousand directories past MaxEntries.
		{name: "implied dirs over the limit", archive: tarOf(t, &tar.Header{Name: "a/b/c/f", Typeflag: tar.TypeReg}),
			lim: Limits{MaxBytes: 100, MaxEntries: 3}, code: fserr.TooLarge, hint: "(limits: 100 bytes, 3 entries)"},
		{name: "implied dirs within the limit", archive: tarOf(t, &tar.Header{Name: "a/b/f", Typeflag: tar.TypeReg},
			&tar.Header{Name: "a/", Typeflag: tar.TypeDir}, &tar.Header{Name: "a/b/", Typeflag: tar.TypeDir}, &tar.Header{Name: "a/g", Typeflag: tar.TypeReg}),
			lim: Limits{MaxBytes: 100, MaxEntries: 4}, want: map[string]string{"a": "dir", "a/b": "dir", "a/b/f": "file a/b/f", "a/g": "file a/g"}},
		{name: "implied deep dirs", archive: tarOf(t, &tar.Header{Name: strings.Repeat("d/", 2000) + "f", Typeflag: tar.TypeReg, Size: 1, Format: tar.FormatPAX}),
			lim: Limits{MaxBytes: 100, MaxEntries: 1000}, code: fserr.TooLarge},
		// A link's target is checked lexically against the root; a name
		// followed by ".." may be a link itself (s -> "."), so where it
		// really leads is not what it reads: s/s/s/../../.. is three
		// levels up, not the link's own directory.
		{name: "symlink climbing through a link", archive: tarOf(t, &tar.Header{Name: "s", Typeflag: tar.TypeSymlink, Linkname: "."},
			&tar.Header{Name: "p", Typeflag: tar.TypeSymlink, Linkname: "s/s/s/../../.."}), code: fserr.BadRequest},
		{name: "absolute symlink climbing through a link", archive: tarOf(t,
			&tar.Header{Name: "p", Typeflag: tar.TypeSymlink, Linkname: "/ws/t/s/s/../../.."}), code: fserr.BadRequest},
		{name: "symlink with an empty target", archive: tarOf(t, &tar.Header{Name: "p", Typeflag: tar.TypeSymlink}), code: fserr.BadRequest},
		{name: "symlink with leading ..", archive: tarOf(t, &tar.Header{Name: "d/p", Typeflag: tar.TypeSymlink, Linkname: "../x/./y"},
			&tar.Header{Name: "q", Typeflag: tar.TypeSymlink, Linkname: "/abs/x"}),
			want: map[string]string{"d/p": "link ../x/./y", "q": "link /abs/x"}},
		{name: "name over PATH_MAX", archive: tarOf(t, &tar.Header{Name: strings.Repeat("n", 200) + strings.Repeat("/n", 2000), Typeflag: tar.TypeDir, Format: tar.FormatPAX}),
			code: fserr.BadRequest},
		{name: "component over NAME_MAX", archive: tarOf(t, &tar.Header{Name: "d/" + strings.Repeat("n", 256), Typeflag: tar.TypeReg, Size: 1, Format: tar.FormatPAX}),
			code: fserr.BadRequest},
		{name: "component at NAME_MAX", archive: tarOf(t, &tar.Header{Name: strings.Repeat("n", 255), Typeflag: tar.TypeReg, Size: 1, Format: tar.FormatPAX}),
			want: map[string]string{strings.Repeat("n", 255): "file n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lim := tc.lim
			if lim == (Limits{}) {
				lim = DefaultLimits
			}
			sink := &memSink{t: t, entries: map[string]string{}}
			_, err := Extract(bytes.NewReader(tc.archive), sink, lim)
			if tc.code != "" {
				if fserr.CodeOf(err) != tc.code {
					t.Fatalf("err %v, want %s", err, tc.code)
				}
				// The hint quotes the limits in force, not the defaults.
				if fe, _ := fserr.As(err); !strings.Contains(fe.Hint, tc.hint) {
					t.Errorf("hint %q lacks %q", fe.Hint, tc.hint)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, sink.entries); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestExtractBodyTooLarge(t *testing.T) {
	t.Parallel()
	archive := tarOf(t, &tar.Header{Name: strings.Repeat("x", 90), Typeflag: tar.TypeReg})
	body := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(bytes.NewReader(archive)), 700)
	_, err := Extract(body, &memSink{t: t, entries: map[string]string{}}, Limits{MaxBytes: 700, MaxEntries: 3})
	fe, _ := fserr.As(err)
	if fserr.CodeOf(err) != fserr.TooLarge || !strings.Contains(fe.Hint, "(limits: 700 bytes, 3 entries)") {
		t.Fatalf("err %v", err)
	}
}

// FuzzExtract feeds arbitrary bytes (seeded with archives) to Extract:
// it never panics and never hands the sink a name outside the tree.
func FuzzExtract(f *testing.F) {
	f.Add(tarOf(f, &tar.Header{Name: "a/b", Typeflag: tar.TypeReg}, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "../x"}))
	f.Add(tarOf(f, &tar.Header{Name: "../../etc/x", Typeflag: tar.TypeReg}))
	f.Add(tarOf(f, &tar.Header{Name: strings.Repeat("long/", 40) + "f", Typeflag: tar.TypeReg, Format: tar.FormatPAX}))
	f.Add([]byte{})
	f.Add(tarOf(f, &tar.Header{Name: "s", Typeflag: tar.TypeSymlink, Linkname: "."}, &tar.Header{Name: "p", Typeflag: tar.TypeSymlink, Linkname: "s/../x"},
		&tar.Header{Name: "a/b/c/d", Typeflag: tar.TypeReg}))
	f.Fuzz(func(t *testing.T, b []byte) {
		sink := &memSink{t: t, entries: map[string]string{}}
		_, _ = Extract(bytes.NewReader(b), sink, Limits{MaxBytes: 1 << 20, MaxEntries: 1000})
	})
}

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Policy{"": Ignore, "ignore": Ignore, "abort": Abort, "ABORT": "", "x": ""} {
		got, ok := ParsePolicy(in)
		if got != want || ok != (want != "") {
			t.Errorf("ParsePolicy(%q) = %q %v", in, got, ok)
		}
	}
}

func openSource(t *testing.T, p string, cache *VersionCache) *Source {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(f, p, cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestServeAbortChangedBefore: a change between the open and the start
// of the response is a 409 with nothing written.
func TestServeAbortChangedBefore(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("before"), 0o644)
	for _, policy := range []Policy{Abort, Ignore} {
		s := openSource(t, p, NewVersionCache(8))
		s.afterPin = func() { os.WriteFile(p, []byte("after!"), 0o644) }
		rec := httptest.NewRecorder()
		started, err := s.Serve(rec, httptest.NewRequest("GET", "/", nil), policy)
		if policy == Abort {
			if started || fserr.CodeOf(err) != fserr.Conflict || rec.Body.Len() != 0 {
				t.Fatalf("abort: started %v err %v body %q", started, err, rec.Body)
			}
			continue
		}
		if !started || err != nil || rec.Code != 200 {
			t.Fatalf("ignore: %v %v %d", started, err, rec.Code)
		}
	}
}

// TestServeAbortUnchanged: an unchanged file is served whole under Abort.
// The guard hashes what it serves and compares it with the version from
// workspace.VersionOf; this fails if the guard's own formatting of that
// hash ever drifts from workspace's.
func TestServeAbortUnchanged(t *testing.T) {
	t.Parallel()
	content := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: several reads
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	s := openSource(t, p, NewVersionCache(8))
	rec := httptest.NewRecorder()
	started, err := s.Serve(rec, httptest.NewRequest("GET", "/", nil), Abort)
	if !started || err != nil || rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), content) {
		t.Fatalf("started %v, err %v, status %d, %d bytes", started, err, rec.Code, rec.Body.Len())
	}
	if etag := rec.Header().Get("ETag"); etag != `"`+workspace.Version(content)+`"` {
		t.Fatalf("ETag %s", etag)
	}
}

func TestVersionCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("content"), 0o644)
	cache := NewVersionCache(2)
	// A file changed just now is not cached (racy).
	s := openSource(t, p, cache)
	if s.Version() != workspace.Version([]byte("content")) || len(cache.m) != 0 {
		t.Fatalf("fresh file: version %q, cache %d", s.Version(), len(cache.m))
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	waitCacheable(t, p) // the ctime of the chtimes ages
	openSource(t, p, cache)
	if len(cache.m) != 1 {
		t.Fatalf("settled file not cached: %d", len(cache.m))
	}
	// Rewriting with the same size and mtime changes the ctime: a miss.
	os.WriteFile(p, []byte("CONTENT"), 0o644)
	os.Chtimes(p, old, old)
	if s := openSource(t, p, cache); s.Version() != workspace.Version([]byte("CONTENT")) {
		t.Fatalf("stale version after a rewrite: %q", s.Version())
	}
	for i := range 5 {
		q := filepath.Join(dir, string(rune('a'+i)))
		os.WriteFile(q, []byte{byte(i)}, 0o644)
	}
	for i := range 5 {
		waitCacheable(t, filepath.Join(dir, string(rune('a'+i))))
	}
	for i := range 5 {
		openSource(t, filepath.Join(dir, string(rune('a'+i))), cache)
	}
	if len(cache.m) > 2 {
		t.Fatalf("cache grew past its size: %d", len(cache.m))
	}
}
