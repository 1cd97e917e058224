package patch

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/edit"
)

// memSource is an in-memory Source; paths are cleaned to find the file.
type memSource map[string]string

func (m memSource) Canonical(p string) (string, error) {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(path.Clean(p), "..") {
		return "", errors.New("outside")
	}
	return path.Clean(p), nil
}

func (m memSource) Read(key string) ([]byte, bool, error) {
	c, ok := m[key]
	if !ok {
		return nil, false, nil
	}
	if strings.HasSuffix(key, "/") || c == "<dir>" {
		return nil, false, errors.New("is a directory")
	}
	return []byte(c), true, nil
}

// applyPlan returns the tree after plan.
func applyPlan(src memSource, plan *Plan) map[string]string {
	out := map[string]string{}
	for k, v := range src {
		out[k] = v
	}
	for _, c := range plan.Changes {
		if c.Delete {
			delete(out, c.Canonical)
		} else {
			out[c.Canonical] = string(c.New)
		}
	}
	return out
}

func TestBuild(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files memSource
		patch string
		want  map[string]string
		sum   [3][]string // added, modified, deleted
	}{
		{
			name:  "update with anchor",
			files: memSource{"a.py": "class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 1\n"},
			patch: "*** Begin Patch\n*** Update File: a.py\n@@ class B:\n     def f(self):\n-        return 1\n+        return 2\n*** End Patch",
			want:  map[string]string{"a.py": "class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 2\n"},
			sum:   [3][]string{nil, {"a.py"}, nil},
		},
		{
			name:  "chunks through a last line without newline",
			files: memSource{"f": "a\nb\nc", "g": "a\nb\nc"},
			patch: "*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n@@\n-c\n*** Update File: g\n@@\n-b\n@@\n-c\n*** End Patch",
			want:  map[string]string{"f": "a\nB", "g": "a"},
			sum:   [3][]string{nil, {"f", "g"}, nil},
		},
		{
			name:  "nested anchors",
			files: memSource{"x.go": "type A struct{}\nfunc (A) f() {\n\treturn\n}\ntype B struct{}\nfunc (B) f() {\n\treturn\n}\n"},
			patch: "*** Begin Patch\n*** Update File: x.go\n@@ type B struct{}\n@@ func (B) f() {\n-\treturn\n+\treturn // b\n*** End Patch",
			want:  map[string]string{"x.go": "type A struct{}\nfunc (A) f() {\n\treturn\n}\ntype B struct{}\nfunc (B) f() {\n\treturn // b\n}\n"},
			sum:   [3][]string{nil, {"x.go"}, nil},
		},
		{
			name:  "add then update same file, delete, move",
			files: memSource{"old.txt": "bye\n", "m.txt": "keep\nme\n"},
			patch: "*** Begin Patch\n*** Add File: n/new.txt\n+one\n+two\n*** Update File: n/new.txt\n@@\n-two\n+2\n*** Delete File: old.txt\n*** Update File: m.txt\n*** Move to: moved/m.txt\n@@\n keep\n-me\n+you\n*** End Patch",
			want:  map[string]string{"n/new.txt": "one\n2\n", "moved/m.txt": "keep\nyou\n"},
			sum:   [3][]string{{"n/new.txt"}, {"n/new.txt", "moved/m.txt"}, {"old.txt"}},
		},
		{
			name:  "CRLF kept and context keeps file text",
			files: memSource{"w.txt": "a  \r\nb\r\nc\r\n"},
			patch: "*** Begin Patch\n*** Update File: w.txt\n@@\n a\n-b\n+B1\n+B2\n c\n*** End Patch",
			want:  map[string]string{"w.txt": "a  \r\nB1\r\nB2\r\nc\r\n"},
			sum:   [3][]string{nil, {"w.txt"}, nil},
		},
		{
			name:  "indentation tier re-indents added lines",
			files: memSource{"i.go": "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n"},
			patch: "*** Begin Patch\n*** Update File: i.go\n@@\n if x {\n-\ty()\n+\tz()\n+\tw()\n }\n*** End Patch",
			want:  map[string]string{"i.go": "func f() {\n\tif x {\n\t\tz()\n\t\tw()\n\t}\n}\n"},
			sum:   [3][]string{nil, {"i.go"}, nil},
		},
		{
			name:  "end of file picks the last occurrence",
			files: memSource{"e.txt": "x\nend\nx\nend\n"},
			patch: "*** Begin Patch\n*** Update File: e.txt\n@@\n x\n-end\n+END\n*** End of File\n*** End Patch",
			want:  map[string]string{"e.txt": "x\nend\nx\nEND\n"},
			sum:   [3][]string{nil, {"e.txt"}, nil},
		},
		{
			name:  "no final newline stays",
			files: memSource{"n.txt": "a\nb"},
			patch: "*** Begin Patch\n*** Update File: n.txt\n@@\n a\n-b\n+c\n*** End Patch",
			want:  map[string]string{"n.txt": "a\nc"},
			sum:   [3][]string{nil, {"n.txt"}, nil},
		},
		{
			name:  "pure addition after anchor",
			files: memSource{"p.txt": "head\nbody\n"},
			patch: "*** Begin Patch\n*** Update File: p.txt\n@@ head\n+inserted\n*** End Patch",
			want:  map[string]string{"p.txt": "head\ninserted\nbody\n"},
			sum:   [3][]string{nil, {"p.txt"}, nil},
		},
		{
			name:  "pure addition without anchor appends",
			files: memSource{"p.txt": "head\nbody"},
			patch: "*** Begin Patch\n*** Update File: p.txt\n@@\n+tail\n*** End Patch",
			want:  map[string]string{"p.txt": "head\nbody\ntail"},
			sum:   [3][]string{nil, {"p.txt"}, nil},
		},
		{
			name:  "anchor is the changed line",
			files: memSource{"q.txt": "a\nx\nb\n"},
			patch: "*** Begin Patch\n*** Update File: q.txt\n@@ x\n-x\n+y\n*** End Patch",
			want:  map[string]string{"q.txt": "a\ny\nb\n"},
			sum:   [3][]string{nil, {"q.txt"}, nil},
		},
		{
			// Codex appends without moving its cursor (it used to move to
			// the end, and the second chunk was not found).
			name:  "pure addition without anchor keeps the cursor",
			files: memSource{"f.txt": "a\nb\nc\n"},
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n+appended\n@@\n-b\n+B\n*** End Patch",
			want:  map[string]string{"f.txt": "a\nB\nc\nappended\n"},
			sum:   [3][]string{nil, {"f.txt"}, nil},
		},
		{
			name:  "pure additions at the end keep their order",
			files: memSource{"f.txt": "a\n"},
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n+1\n@@\n+2\n*** End Patch",
			want:  map[string]string{"f.txt": "a\n1\n2\n"},
			sum:   [3][]string{nil, {"f.txt"}, nil},
		},
		{
			name:  "BOM kept",
			files: memSource{"b.txt": edit.BOM + "first\nsecond\n"},
			patch: "*** Begin Patch\n*** Update File: b.txt\n@@\n-first\n+1st\n*** End Patch",
			want:  map[string]string{"b.txt": edit.BOM + "1st\nsecond\n"},
			sum:   [3][]string{nil, {"b.txt"}, nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse(tt.patch)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := Build(p, tt.files)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if diff := cmp.Diff(tt.want, applyPlan(tt.files, plan)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			got := [3][]string{plan.Added, plan.Modified, plan.Deleted}
			if diff := cmp.Diff(tt.sum, got); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

// buildTree parses text, plans it against files and returns the tree after.
func buildTree(t *testing.T, files memSource, text string) map[string]string {
	t.Helper()
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(p, files)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return applyPlan(files, plan)
}

// updateCase is a Codex update of one file f: its content before and
// after the chunks of patch (between the Update header and End Patch).
type updateCase struct{ name, file, patch, want string }

// runUpdates runs each case's patch against its file.
func runUpdates(t *testing.T, tests []updateCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text := "*** Begin Patch\n*** Update File: f\n" + tt.patch + "\n*** End Patch"
			if diff := cmp.Diff(map[string]string{"f": tt.want}, buildTree(t, memSource{"f": tt.file}, text)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildEmptyLastContext: a chunk's last line may be empty context (the
// blank line a model leaves between chunks or before the next section).
// When the chunk does not match with it, Codex retries without it; when
// that leaves no old lines, the '+' lines go in at the cursor. These
// chunks used to fail with "Failed to find expected lines" and no lines.
func TestBuildEmptyLastContext(t *testing.T) {
	t.Parallel()
	tests := []updateCase{
		{"pure addition then blank line, after the anchor",
			"import os\nimport re\ndef main():\n    pass\n",
			"@@ import os\n+import sys\n\n@@ def main():\n-    pass\n+    run()",
			"import os\nimport sys\nimport re\ndef main():\n    run()\n"},
		{"at the cursor after the previous chunk", "a\nb\nc\n", "@@\n-a\n+A\n@@\n+ins\n", "A\nins\nb\nc\n"},
		{"at the start for a first chunk", "a\nb\n", "@@\n+top\n", "top\na\nb\n"},
		{"a blank line that is there is matched", "import os\nimport re\n\nx\n", "@@ import os\n+import sys\n", "import os\nimport re\nimport sys\n\nx\n"},
		{"only one empty line is dropped", "a\n\nb\n", "@@ a\n+x\n\n", "a\nx\n\nb\n"},
		{"removing an empty line of an empty file", "", "@@\n-\n+x", "x\n"},
		{"end of file", "a\nb\n", "@@ a\n+x\n\n*** End of File", "a\nx\nb\n"},
		// The trimmed tier matches these chunks without their blank
		// lines, and left out the blank line that is there; the
		// lines added after it came out before it.
		{"a blank line that is there, then the one that separates chunks",
			"def a():\n    pass\n\ndef c():\n    pass\n",
			"@@\n def a():\n     pass\n \n+def b():\n+    pass\n+\n",
			"def a():\n    pass\n\ndef b():\n    pass\n\ndef c():\n    pass\n"},
		{"added lines after the blank line", "b\nx\n\n", "-b\n+N\n x\n\n+new\n", "N\nx\n\nnew\n"},
	}
	runUpdates(t, tests)
}

// TestBuildAppendBeforeBlankLastLine: Codex appends a pure addition (no
// anchor, or "*** End of File") before the file's last line when that
// line is empty, so the file keeps ending with a blank line. It used to go
// after the blank line.
func TestBuildAppendBeforeBlankLastLine(t *testing.T) {
	t.Parallel()
	tests := []updateCase{
		{"no anchor", "a\nb\n\n", "@@\n+c", "a\nb\nc\n\n"},
		{"CRLF", "a\r\nb\r\n\r\n", "@@\n+c", "a\r\nb\r\nc\r\n\r\n"},
		{"end of file behind an anchor", "a\nb\n\n", "@@ a\n+c\n*** End of File", "a\nb\nc\n\n"},
		{"only blank lines", "\n\n", "@@\n+c", "\nc\n\n"},
		{"white space is not blank", "a\n  \n", "@@\n+c", "a\n  \nc\n"},
		{"anchor inserts after it", "a\nb\n\n", "@@ a\n+c", "a\nc\nb\n\n"},
	}
	runUpdates(t, tests)
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files memSource
		patch string
		a0    string // path for the Agent Zero dialect
		code  string
		msg   string
		lines []int
	}{
		{name: "ambiguous unanchored", files: memSource{"d.txt": "x\ny\nx\ny\n"}, patch: "*** Begin Patch\n*** Update File: d.txt\n@@\n x\n-y\n+z\n*** End Patch",
			code: edit.CodeAmbiguousMatch, msg: "Expected lines match 2 places in d.txt (lines 1, 3)", lines: []int{1, 3}},
		{name: "missing context", files: memSource{"d.txt": "a\n"}, patch: "*** Begin Patch\n*** Update File: d.txt\n@@\n-nope\n+x\n*** End Patch",
			code: edit.CodeNoMatch, msg: "Failed to find expected lines in d.txt:\nnope"},
		{name: "missing anchor", files: memSource{"d.txt": "a\n"}, patch: "*** Begin Patch\n*** Update File: d.txt\n@@ def zz\n-a\n+x\n*** End Patch",
			code: edit.CodeNoMatch, msg: "Failed to find context 'def zz' in d.txt"},
		{name: "update missing file", files: memSource{}, patch: "*** Begin Patch\n*** Update File: gone.txt\n@@\n-a\n+b\n*** End Patch",
			code: "not_found", msg: "Failed to read file to update gone.txt: No such file or directory (os error 2)"},
		{name: "delete missing file", files: memSource{}, patch: "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch",
			code: "not_found", msg: "Failed to delete file gone.txt"},
		{name: "out of order hunks", files: memSource{"o.txt": "a\nb\nc\nd\n"}, patch: "*** Begin Patch\n*** Update File: o.txt\n@@\n-c\n+C\n@@\n-a\n+A\n*** End Patch",
			code: edit.CodeNoMatch, msg: "Failed to find expected lines in o.txt:\na"},
		{name: "tabs are not spaces", files: memSource{"t.go": "if x {\n\ty()\n}\n"}, patch: "*** Begin Patch\n*** Update File: t.go\n@@\n if x {\n-    y()\n+    z()\n }\n*** End Patch",
			code: edit.CodeNoMatch},
		{name: "agent zero anchor not found", files: memSource{"f.txt": "a\n"}, a0: "f.txt", patch: "@@ nope\n-a\n+b",
			code: edit.CodeNoMatch, msg: "anchor not found: nope"},
		{name: "agent zero context not found", files: memSource{"f.txt": "a\n"}, a0: "f.txt", patch: "@@ a\n-zz\n+b",
			code: edit.CodeNoMatch, msg: "context not found:\nzz"},
		{name: "agent zero ambiguous", files: memSource{"f.txt": "a\na\n"}, a0: "f.txt", patch: "-a\n+b",
			code: edit.CodeAmbiguousMatch, msg: "context matched multiple locations (lines 1, 2)"},
		// A line found everywhere: the error lists 20 places and reports
		// 100, not all of them.
		{name: "ambiguous everywhere", files: memSource{"d.txt": strings.Repeat("x\n", 1000)}, patch: "*** Begin Patch\n*** Update File: d.txt\n@@\n-x\n+z\n*** End Patch",
			code: edit.CodeAmbiguousMatch, msg: "Expected lines match 1000 places in d.txt (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and 980 more)",
			lines: oneTo(100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var p *Patch
			var err error
			if tt.a0 != "" {
				p, err = ParseAgentZero(tt.patch, tt.a0)
			} else {
				p, err = Parse(tt.patch)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = Build(p, tt.files)
			var e *edit.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want *edit.Error", err, err)
			}
			if e.Code != tt.code || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("got %s %q, want %s containing %q", e.Code, e.Message, tt.code, tt.msg)
			}
			if tt.lines != nil {
				if diff := cmp.Diff(tt.lines, e.Lines); diff != "" {
					t.Errorf("lines (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestBuildOutOfOrderHint(t *testing.T) {
	t.Parallel()
	p, err := Parse("*** Begin Patch\n*** Update File: o.txt\n@@\n-c\n+C\n@@\n-a\n+A\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(p, memSource{"o.txt": "a\nb\nc\nd\n"})
	var e *edit.Error
	if !errors.As(err, &e) || !strings.Contains(e.Hint, "before the previous hunk") {
		t.Fatalf("err = %v, hint %q", err, e.Hint)
	}
}

// TestBuildOverlapHint: a hunk whose context is the previous hunk's last
// line overlaps it; the hint says to merge them, not to reorder.
func TestBuildOverlapHint(t *testing.T) {
	t.Parallel()
	p, err := Parse("*** Begin Patch\n*** Update File: o.txt\n@@\n 1\n-2\n+two\n 3\n@@\n 3\n-4\n+four\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(p, memSource{"o.txt": "1\n2\n3\n4\n"})
	var e *edit.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	const want = "these lines occur at line 3, overlapping the previous hunk (which matched lines 1-3): hunks must not share lines; merge the two into one hunk"
	if e.Hint != want {
		t.Fatalf("hint %q, want %q", e.Hint, want)
	}
}

// TestBuildAppendInsideAHunk: a pure addition goes before a blank last
// line; when another hunk of the same update changes that line and the
// one before it, the addition would land inside that hunk's lines. That
// is refused as the overlap it is, in either order; it used to fail with
// "edits overlap at byte 4" (Codex drops the added lines there).
func TestBuildAppendInsideAHunk(t *testing.T) {
	t.Parallel()
	for _, chunks := range []string{"@@\n+X\n@@\n-b\n+B\n \n", "@@\n-b\n+B\n \n@@\n+X\n"} {
		p, err := Parse("*** Begin Patch\n*** Update File: f\n" + chunks + "*** End Patch")
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(p, memSource{"f": "a\nb\n\n"})
		var e *edit.Error
		if !errors.As(err, &e) || e.Code != edit.CodeBadRequest ||
			!strings.HasPrefix(e.Message, "Hunks overlap in f: the hunk at patch line ") ||
			!strings.Contains(e.Hint, "merge the two into one hunk") {
			t.Errorf("%q: err = %v, want the overlap refused", chunks, err)
		}
	}
	// Where the hunk starts at the blank line, the addition goes before it.
	got := buildTree(t, memSource{"f": "a\nb\n\n"}, "*** Begin Patch\n*** Update File: f\n@@\n+X\n@@ b\n-\n+Z\n*** End Patch")
	if diff := cmp.Diff(map[string]string{"f": "a\nb\nX\nZ\n"}, got); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

func TestBuildSourceErrors(t *testing.T) {
	t.Parallel()
	p, err := Parse("*** Begin Patch\n*** Delete File: dir\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(p, memSource{"dir": "<dir>"})
	var se *SourceError
	if !errors.As(err, &se) || se.Kind != Delete || se.Path != "dir" {
		t.Fatalf("err = %v, want a SourceError for deleting dir", err)
	}
	p, _ = Parse("*** Begin Patch\n*** Add File: ../x\n+a\n*** End Patch")
	if _, err = Build(p, memSource{}); !errors.As(err, &se) || se.Kind != Add {
		t.Fatalf("err = %v, want a SourceError for ../x", err)
	}
}

func FuzzBuild(f *testing.F) {
	f.Add("a\nb\nc\n", "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n*** End Patch")
	f.Add("x\r\ny\r\n", "*** Begin Patch\n*** Update File: f\n@@ x\n+z\n*** End of File\n*** End Patch")
	f.Add("a\nb\nc", "*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n@@\n-c\n*** End Patch")
	f.Fuzz(func(t *testing.T, content, text string) {
		p, err := Parse(text)
		if err != nil {
			return
		}
		src := memSource{"f": content}
		plan, err := Build(p, src)
		if err != nil {
			var e *edit.Error
			var se *SourceError
			if !errors.As(err, &e) && !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if e != nil && e.Code == edit.CodeBadRequest {
				// Parse accepted the patch: it applies, or its hunks
				// do not match the file; it is never malformed here.
				t.Fatalf("bad_request for a parsed patch: %v", err)
			}
			return
		}
		for _, c := range plan.Changes {
			if !c.Delete && edit.HasBOM(c.Old) && !edit.HasBOM(c.New) && c.Existed && len(p.Files) == 1 && p.Files[0].Kind == Update {
				t.Fatalf("BOM lost")
			}
		}
	})
}

// TestBuildLargeHunkKeepsContextLines: a hunk too large for the line
// alignment table still keeps its context lines as the file has them
// (here with trailing blanks the patch left out), not as the patch wrote
// them.
func TestBuildLargeHunkKeepsContextLines(t *testing.T) {
	t.Parallel()
	var file, patch, want strings.Builder
	file.WriteString("head  \n")
	patch.WriteString("*** Begin Patch\n*** Update File: f\n@@\n head\n")
	want.WriteString("head  \n")
	for i := range 2100 {
		fmt.Fprintf(&file, "old %d\n", i)
		fmt.Fprintf(&patch, "-old %d\n", i)
	}
	for i := range 2100 {
		fmt.Fprintf(&patch, "+new %d\n", i)
		fmt.Fprintf(&want, "new %d\n", i)
	}
	file.WriteString("tail\t\n")
	patch.WriteString(" tail\n*** End Patch")
	want.WriteString("tail\t\n")
	p, err := Parse(patch.String())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(p, memSource{"f": file.String()})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(plan.Changes[0].New); got != want.String() {
		t.Errorf("context lines changed: starts %q, ends %q", got[:min(len(got), 20)], got[max(len(got)-20, 0):])
	}
}

// linkSource is a memSource with symbolic links: links maps a path to its
// target (a path of the source); a target that starts with "/" leads out,
// where Canonical refuses to go.
type linkSource struct {
	memSource
	links map[string]string
}

func (s linkSource) Canonical(p string) (string, error) {
	if t, ok := s.links[path.Clean(p)]; ok {
		return s.memSource.Canonical(t)
	}
	return s.memSource.Canonical(p)
}

func (s linkSource) Link(p string) (string, string, bool, error) {
	t, ok := s.links[path.Clean(p)]
	return "link:" + path.Clean(p), t, ok, nil
}

// TestBuildLinks: a Delete or a Move away of a path that is a symbolic
// link removes the link (a Link change), never the file it points to;
// everything else goes through the link. The file used to be deleted.
func TestBuildLinks(t *testing.T) {
	t.Parallel()
	files := memSource{"real.txt": "one\ntwo\n", "other.txt": "x\n"}
	links := map[string]string{"alias": "real.txt", "dangling": "nowhere.txt", "escape": "/etc/passwd", "alias2": "real.txt"}
	type change struct {
		Key     string
		Link    bool
		Delete  bool
		Existed bool
		New     string
	}
	tests := []struct {
		name  string
		patch string
		want  []change
		sum   [3][]string
	}{
		{name: "delete link", patch: "*** Delete File: alias",
			want: []change{{Key: "link:alias", Link: true, Delete: true, Existed: true}},
			sum:  [3][]string{nil, nil, {"alias"}}},
		{name: "delete dangling link", patch: "*** Delete File: dangling",
			want: []change{{Key: "link:dangling", Link: true, Delete: true, Existed: true}},
			sum:  [3][]string{nil, nil, {"dangling"}}},
		{name: "delete link leading out", patch: "*** Delete File: escape",
			want: []change{{Key: "link:escape", Link: true, Delete: true, Existed: true}},
			sum:  [3][]string{nil, nil, {"escape"}}},
		{name: "update through link", patch: "*** Update File: alias\n@@\n-two\n+2",
			want: []change{{Key: "real.txt", Existed: true, New: "one\n2\n"}},
			sum:  [3][]string{nil, {"alias"}, nil}},
		{name: "move link away", patch: "*** Update File: alias\n*** Move to: moved.txt\n@@\n-two\n+2",
			want: []change{{Key: "moved.txt", New: "one\n2\n"}, {Key: "link:alias", Link: true, Delete: true, Existed: true}},
			sum:  [3][]string{nil, {"moved.txt"}, nil}},
		{name: "move link onto its target", patch: "*** Update File: alias\n*** Move to: real.txt\n@@\n-two\n+2",
			want: []change{{Key: "real.txt", Existed: true, New: "one\n2\n"}, {Key: "link:alias", Link: true, Delete: true, Existed: true}},
			sum:  [3][]string{nil, {"real.txt"}, nil}},
		{name: "move link onto itself", patch: "*** Update File: alias\n*** Move to: ./alias\n@@\n-two\n+2",
			want: []change{{Key: "real.txt", Existed: true, New: "one\n2\n"}},
			sum:  [3][]string{nil, {"./alias"}, nil}},
		{name: "move onto a link writes through it", patch: "*** Update File: other.txt\n*** Move to: alias2\n@@\n-x\n+y",
			want: []change{{Key: "other.txt", Existed: true, Delete: true}, {Key: "real.txt", Existed: true, New: "y\n"}},
			sum:  [3][]string{nil, {"alias2"}, nil}},
		{name: "add through link", patch: "*** Add File: alias\n+new",
			want: []change{{Key: "real.txt", Existed: true, New: "new\n"}},
			sum:  [3][]string{{"alias"}, nil, nil}},
		{name: "delete link then add a file there", patch: "*** Delete File: alias\n*** Add File: alias\n+new",
			want: []change{{Key: "link:alias", Link: true, Existed: true, New: "new\n"}},
			sum:  [3][]string{{"alias"}, nil, {"alias"}}},
		{name: "delete link and its target", patch: "*** Delete File: alias\n*** Delete File: real.txt",
			want: []change{{Key: "link:alias", Link: true, Delete: true, Existed: true}, {Key: "real.txt", Existed: true, Delete: true}},
			sum:  [3][]string{nil, nil, {"alias", "real.txt"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse("*** Begin Patch\n" + tt.patch + "\n*** End Patch")
			if err != nil {
				t.Fatal(err)
			}
			plan, err := Build(p, linkSource{files, links})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			var got []change
			for _, c := range plan.Changes {
				got = append(got, change{Key: c.Canonical, Link: c.Link, Delete: c.Delete, Existed: c.Existed, New: string(c.New)})
				if c.Link && string(c.Old) != links[strings.TrimPrefix(c.Canonical, "link:")] {
					t.Errorf("%s: Old = %q, want the link's target", c.Canonical, c.Old)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.sum, [3][]string{plan.Added, plan.Modified, plan.Deleted}); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
	for _, patch := range []string{
		"*** Delete File: alias\n*** Update File: alias\n@@\n-one\n+1",
		"*** Delete File: alias\n*** Delete File: alias",
	} {
		p, err := Parse("*** Begin Patch\n" + patch + "\n*** End Patch")
		if err != nil {
			t.Fatal(err)
		}
		var e *edit.Error
		if _, err := Build(p, linkSource{files, links}); !errors.As(err, &e) || e.Code != "not_found" {
			t.Errorf("%q: err = %v, want not_found: the link is gone", patch, err)
		}
	}
}

// opaqueSource is a memSource whose "<binary>" files exist but are not
// text.
type opaqueSource struct{ memSource }

var errNotText = errors.New("appears to be binary")

func (s opaqueSource) Read(key string) ([]byte, bool, error) {
	if s.memSource[key] == "<binary>" {
		return nil, true, errNotText
	}
	return s.memSource.Read(key)
}

// TestBuildOpaqueFiles: a file that is not text can be deleted, replaced
// by an Add or by a Move onto it, without being read; only an Update
// needs its content. All of these used to fail on reading it.
func TestBuildOpaqueFiles(t *testing.T) {
	t.Parallel()
	src := opaqueSource{memSource{"bin": "<binary>", "f.txt": "one\n"}}
	for _, tt := range []struct {
		name  string
		patch string
		want  map[string]string
	}{
		{"delete", "*** Delete File: bin", map[string]string{"f.txt": "one\n"}},
		{"add over", "*** Add File: bin\n+text", map[string]string{"bin": "text\n", "f.txt": "one\n"}},
		{"move onto", "*** Update File: f.txt\n*** Move to: bin\n@@\n-one\n+1", map[string]string{"bin": "1\n"}},
		{"add over, then update", "*** Add File: bin\n+text\n*** Update File: bin\n@@\n-text\n+TEXT", map[string]string{"bin": "TEXT\n", "f.txt": "one\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse("*** Begin Patch\n" + tt.patch + "\n*** End Patch")
			if err != nil {
				t.Fatal(err)
			}
			plan, err := Build(p, src)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			for _, c := range plan.Changes {
				if c.Canonical == "bin" && (!c.Opaque || c.Old != nil || !c.Existed) {
					t.Errorf("change of bin = %+v, want an opaque change of an existing file", c)
				}
			}
			if diff := cmp.Diff(tt.want, applyPlan(src.memSource, plan)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
	p, err := Parse("*** Begin Patch\n*** Update File: bin\n@@\n-x\n+y\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	var se *SourceError
	if _, err := Build(p, src); !errors.As(err, &se) || se.Kind != Update || !errors.Is(err, errNotText) {
		t.Fatalf("update of a binary file: err = %v, want the Source's error", err)
	}
}

// TestBuildTrailingSlash: a file is never made at a path ending in "/"
// (it names a directory); an Add or a Move there used to make a file
// without the slash.
func TestBuildTrailingSlash(t *testing.T) {
	t.Parallel()
	for _, patch := range []string{
		"*** Add File: sub/\n+x",
		"*** Update File: f.txt\n*** Move to: newdir/\n@@\n-one\n+1",
	} {
		p, err := Parse("*** Begin Patch\n" + patch + "\n*** End Patch")
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(p, memSource{"f.txt": "one\n"})
		var se *SourceError
		var e *edit.Error
		if !errors.As(err, &se) || se.Kind != Add || !errors.As(err, &e) || e.Code != "invalid_target" || !strings.Contains(e.Message, "ends with /") {
			t.Errorf("%q: err = %v, want invalid_target for a path ending in /", patch, err)
		}
	}
}

// stopAfter is a context whose Err reports cancellation from its n-th
// call on, counting the calls: the planner's checks.
type stopAfter struct {
	context.Context
	n, calls int
}

func (c *stopAfter) Err() error {
	if c.calls++; c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

// manyHunks is a file of n blocks and a patch with one hunk per block.
func manyHunks(n int) (patch string, content []byte) {
	var file, p strings.Builder
	p.WriteString("*** Begin Patch\n*** Update File: f.txt\n")
	for i := range n {
		fmt.Fprintf(&file, "ctx %d\nold %d\n\n", i, i)
		fmt.Fprintf(&p, "@@\n ctx %d\n-old %d\n+new %d\n", i, i, i)
	}
	p.WriteString("*** End Patch")
	return p.String(), []byte(file.String())
}

// TestBuildContextStops: a cancelled context stops planning at the next
// hunk, however many are left.
func TestBuildContextStops(t *testing.T) {
	t.Parallel()
	text, content := manyHunks(1000)
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	src := memSource{"f.txt": string(content)}
	if plan, err := BuildContext(t.Context(), p, src); err != nil || len(plan.Hunks) != 1000 {
		t.Fatalf("uncancelled: %v", err)
	}
	for _, n := range []int{1, 2, 10} {
		ctx := &stopAfter{Context: t.Context(), n: n}
		plan, err := BuildContext(ctx, p, src)
		if !errors.Is(err, context.Canceled) || plan != nil {
			t.Errorf("cancelled at check %d: plan %v, err %v; want context.Canceled", n, plan != nil, err)
		}
		if ctx.calls != n {
			t.Errorf("cancelled at check %d: checked %d times, want to stop at the first that saw it", n, ctx.calls)
		}
	}
}

// oneTo is 1, 2, ..., n.
func oneTo(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}
