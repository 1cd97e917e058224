package patch

import (
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
