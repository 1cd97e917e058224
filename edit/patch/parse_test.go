package patch

import (
	"errors"
	"testing"

	"github.com/fsplane/fsplane/edit"
	"github.com/google/go-cmp/cmp"
)

// parseCase is one Parse or ParseAgentZero case: want is the expected
// patch, or err the exact error message.
type parseCase struct {
	name string
	text string
	want *Patch
	err  string
}

const (
	parseHeaderList = " is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
	parseLineRule   = ". Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)"
)

func parseCodex(files ...FileOp) *Patch { return &Patch{Dialect: Codex, Files: files} }

func parseUpdate(line int, path string, chunks ...Chunk) FileOp {
	return FileOp{Kind: Update, Path: path, Line: line, Chunks: chunks}
}

// parseCodexCases are the Parse cases; FuzzParse seeds from them.
var parseCodexCases = []parseCase{
	{
		name: "add file",
		text: "*** Begin Patch\n*** Add File: a.txt\n+hello\n+\n+ world \n*** End Patch",
		want: parseCodex(FileOp{Kind: Add, Path: "a.txt", Line: 2, Lines: []string{"hello", "", " world "}}),
	},
	{
		name: "add file without lines",
		text: "*** Begin Patch\n*** Add File: empty.txt\n*** End Patch",
		want: parseCodex(FileOp{Kind: Add, Path: "empty.txt", Line: 2}),
	},
	{
		name: "delete file",
		text: "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n",
		want: parseCodex(FileOp{Kind: Delete, Path: "old.txt", Line: 2}),
	},
	{
		name: "update with context, removed and added lines",
		text: "*** Begin Patch\n*** Update File: m.txt\n@@\n a\n-b\n+B\n c\n*** End Patch",
		want: parseCodex(parseUpdate(2, "m.txt", Chunk{Line: 3, Old: []string{"a", "b", "c"}, New: []string{"a", "B", "c"}})),
	},
	{
		name: "several files with move",
		text: "*** Begin Patch\n*** Add File: path/add.py\n+abc\n+def\n*** Delete File: path/delete.py\n" +
			"*** Update File: path/update.py\n*** Move to: path/update2.py\n@@ def f():\n-    pass\n+    return 123\n*** End Patch",
		want: parseCodex(
			FileOp{Kind: Add, Path: "path/add.py", Line: 2, Lines: []string{"abc", "def"}},
			FileOp{Kind: Delete, Path: "path/delete.py", Line: 5},
			FileOp{Kind: Update, Path: "path/update.py", MoveTo: "path/update2.py", Line: 6, Chunks: []Chunk{
				{Line: 8, Anchors: []string{"def f():"}, Old: []string{"    pass"}, New: []string{"    return 123"}},
			}},
		),
	},
	{
		name: "begin and end only is zero files",
		text: "*** Begin Patch\n*** End Patch",
		want: parseCodex(),
	},
	{
		name: "first line not begin",
		text: "bad",
		err:  "Invalid patch: The first line of the patch must be '*** Begin Patch'",
	},
	{
		name: "last line not end",
		text: "*** Begin Patch\nbad",
		err:  "Invalid patch: The last line of the patch must be '*** End Patch'",
	},
	{
		name: "begin alone",
		text: "*** Begin Patch\n",
		err:  "Invalid patch: The last line of the patch must be '*** End Patch'",
	},
	{
		name: "end alone",
		text: "*** End Patch",
		err:  "Invalid patch: The first line of the patch must be '*** Begin Patch'",
	},
	{
		name: "empty text reports the last line as Codex does",
		text: "",
		err:  "Invalid patch: The last line of the patch must be '*** End Patch'",
	},
	{
		name: "blank text",
		text: " \n\t\r\n ",
		err:  "Invalid patch: The last line of the patch must be '*** End Patch'",
	},
	{
		name: "whole text trimmed and markers padded",
		text: "\n\n *** Begin Patch \t\n  *** Update File: foo.txt  \n@@\n-old\n+new\n *** End Patch \n\n",
		want: parseCodex(parseUpdate(2, "foo.txt", Chunk{Line: 3, Old: []string{"old"}, New: []string{"new"}})),
	},
	{
		name: "heredoc",
		text: "<<EOF\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n",
		want: parseCodex(FileOp{Kind: Delete, Path: "a", Line: 2}),
	},
	{
		name: "single-quoted heredoc after apply_patch",
		text: "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch\nEOF",
		want: parseCodex(parseUpdate(2, "file2.py", Chunk{Line: 3, Old: []string{"import foo"}, New: []string{"import foo", "bar"}})),
	},
	{
		name: "double-quoted heredoc",
		text: "<<\"EOF\"\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF",
		want: parseCodex(FileOp{Kind: Delete, Path: "a", Line: 2}),
	},
	{
		name: "heredoc with mismatched quotes",
		text: "<<\"EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF",
		err:  "Invalid patch: The first line of the patch must be '*** Begin Patch'",
	},
	{
		name: "heredoc without end marker",
		text: "<<EOF\n*** Begin Patch\n*** Update File: file2.py\nEOF\n",
		err:  "Invalid patch: The last line of the patch must be '*** End Patch'",
	},
	{
		name: "heredoc too short",
		text: "<<EOF\n*** Begin Patch\nEOF",
		err:  "Invalid patch: The first line of the patch must be '*** Begin Patch'",
	},
	{
		name: "environment id ignored",
		text: "*** Begin Patch\n*** Environment ID: env-1\n*** Delete File: a\n*** End Patch",
		want: parseCodex(FileOp{Kind: Delete, Path: "a", Line: 3}),
	},
	{
		name: "crlf line endings",
		text: "*** Begin Patch\r\n*** Update File: a\r\n@@ f\r\n-x\r\n+y\r\n*** End Patch\r\n",
		want: parseCodex(parseUpdate(2, "a", Chunk{Line: 3, Anchors: []string{"f"}, Old: []string{"x"}, New: []string{"y"}})),
	},
	{
		name: "first chunk without @@",
		text: "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch",
		want: parseCodex(parseUpdate(2, "a", Chunk{Line: 3, Old: []string{"x"}, New: []string{"y"}})),
	},
	{
		name: "blank lines between chunks skipped",
		text: "*** Begin Patch\n*** Update File: a\n\n  \n@@\n-x\n+y\n\t\n@@\n-z\n*** End Patch",
		want: parseCodex(parseUpdate(2, "a",
			Chunk{Line: 5, Old: []string{"x"}, New: []string{"y"}},
			Chunk{Line: 9, Old: []string{"z"}},
		)),
	},
	{
		name: "empty line in a body is empty context",
		text: "*** Begin Patch\n*** Update File: a\n@@\n a\n\n-b\n \n*** End Patch",
		want: parseCodex(parseUpdate(2, "a", Chunk{Line: 3, Old: []string{"a", "", "b", ""}, New: []string{"a", "", ""}})),
	},
	{
		name: "end of file marker",
		text: "*** Begin Patch\n*** Update File: a\n@@\n+tail\n*** End of File  \n*** End Patch",
		want: parseCodex(parseUpdate(2, "a", Chunk{Line: 3, New: []string{"tail"}, EOF: true})),
	},
	{
		name: "end of file then another chunk",
		text: "*** Begin Patch\n*** Update File: a\n@@\n-x\n*** End of File\n\n@@ g\n-y\n+z\n*** End Patch",
		want: parseCodex(parseUpdate(2, "a",
			Chunk{Line: 3, Old: []string{"x"}, EOF: true},
			Chunk{Line: 7, Anchors: []string{"g"}, Old: []string{"y"}, New: []string{"z"}},
		)),
	},
	{
		name: "nested anchors accumulate",
		text: "*** Begin Patch\n*** Update File: a.py\n@@ class A:\n@@     def f(self):\n-        return 1\n+        return 2\n*** End Patch",
		want: parseCodex(parseUpdate(2, "a.py", Chunk{Line: 3,
			Anchors: []string{"class A:", "    def f(self):"}, Old: []string{"        return 1"}, New: []string{"        return 2"}})),
	},
	{
		name: "bare @@ adds no anchor and anchors are trimmed on the right",
		text: "*** Begin Patch\n*** Update File: a\n@@ class A  \n@@\n@@   \n@@ def f\t\n-x\n+y\n*** End Patch",
		want: parseCodex(parseUpdate(2, "a", Chunk{Line: 3, Anchors: []string{"class A", "def f"}, Old: []string{"x"}, New: []string{"y"}})),
	},
	{
		name: "an @@ line after a body starts the next chunk",
		text: "*** Begin Patch\n*** Update File: a\n@@ one\n-x\n+y\n@@ two\n@@ three\n z\n-w\n*** End Patch",
		want: parseCodex(parseUpdate(2, "a",
			Chunk{Line: 3, Anchors: []string{"one"}, Old: []string{"x"}, New: []string{"y"}},
			Chunk{Line: 6, Anchors: []string{"two", "three"}, Old: []string{"z", "w"}, New: []string{"z"}},
		)),
	},
	{
		name: "update followed by add",
		text: "*** Begin Patch\n*** Update File: file.py\n@@\n+line\n*** Add File: other.py\n+content\n*** End Patch",
		want: parseCodex(
			parseUpdate(2, "file.py", Chunk{Line: 3, New: []string{"line"}}),
			FileOp{Kind: Add, Path: "other.py", Line: 5, Lines: []string{"content"}},
		),
	},
	{
		name: "paths trimmed and move line padded on the right",
		text: "*** Begin Patch\n*** Update File:   a b.txt \n*** Move to:  c/d.txt  \n@@\n-x\n+y\n*** End Patch",
		want: parseCodex(FileOp{Kind: Update, Path: "a b.txt", MoveTo: "c/d.txt", Line: 2,
			Chunks: []Chunk{{Line: 4, Old: []string{"x"}, New: []string{"y"}}}}),
	},
	{
		name: "a move line with leading space is context, as in Codex",
		text: "*** Begin Patch\n*** Update File: a\n *** Move to: b\n-x\n*** End Patch",
		want: parseCodex(parseUpdate(2, "a", Chunk{Line: 3, Old: []string{"*** Move to: b", "x"}, New: []string{"*** Move to: b"}})),
	},
	{
		name: "padded header after an add",
		text: "*** Begin Patch\n*** Add File: a\n+x\n   *** Delete File: b\n*** End Patch",
		want: parseCodex(FileOp{Kind: Add, Path: "a", Line: 2, Lines: []string{"x"}}, FileOp{Kind: Delete, Path: "b", Line: 4}),
	},
	{
		name: "unicode and carriage return inside lines",
		text: "*** Begin Patch\n*** Update File: ü.txt\n@@ fn größe()\n-a\rb\n+“c” — d\n*** End Patch",
		want: parseCodex(parseUpdate(2, "ü.txt", Chunk{Line: 3, Anchors: []string{"fn größe()"}, Old: []string{"a\rb"}, New: []string{"“c” — d"}})),
	},
	{
		name: "empty update",
		text: "*** Begin Patch\n*** Update File: foo.txt\n*** End Patch",
		err:  "Invalid patch hunk on line 2: Update file hunk for path 'foo.txt' is empty",
	},
	{
		name: "update with only blank lines",
		text: "*** Begin Patch\n*** Delete File: x\n*** Update File: foo.txt\n\n  \n*** End Patch",
		err:  "Invalid patch hunk on line 3: Update file hunk for path 'foo.txt' is empty",
	},
	{
		name: "invalid hunk header",
		text: "*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch",
		err:  "Invalid patch hunk on line 2: '*** Frobnicate File: foo'" + parseHeaderList,
	},
	{
		name: "header without space after the colon",
		text: "*** Begin Patch\n*** Add File:x\n*** End Patch",
		err:  "Invalid patch hunk on line 2: '*** Add File:x'" + parseHeaderList,
	},
	{
		name: "blank line between file sections",
		text: "*** Begin Patch\n*** Add File: a\n+x\n\n*** Delete File: b\n*** End Patch",
		err:  "Invalid patch hunk on line 4: ''" + parseHeaderList,
	},
	{
		name: "add line without plus",
		text: "*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch",
		err:  "Invalid patch hunk on line 4: 'y'" + parseHeaderList,
	},
	{
		name: "end patch in the middle",
		text: "*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** End Patch",
		err:  "Invalid patch hunk on line 3: '*** End Patch'" + parseHeaderList,
	},
	{
		name: "environment id only right after begin",
		text: "*** Begin Patch\n*** Delete File: a\n*** Environment ID: e\n*** End Patch",
		err:  "Invalid patch hunk on line 3: '*** Environment ID: e'" + parseHeaderList,
	},
	{
		name: "second chunk without @@",
		text: "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\nbad\n*** End Patch",
		err:  "Invalid patch hunk on line 6: Expected update hunk to start with a @@ context marker, got: 'bad'",
	},
	{
		name: "unexpected line after @@",
		text: "*** Begin Patch\n*** Update File: a\n@@\nbad\n*** End Patch",
		err:  "Invalid patch hunk on line 4: Unexpected line found in update hunk: 'bad'" + parseLineRule,
	},
	{
		name: "unexpected line after nested anchors",
		text: "*** Begin Patch\n*** Update File: a\n@@ A\n@@ B\n\tbad\n*** End Patch",
		err:  "Invalid patch hunk on line 5: Unexpected line found in update hunk: '\tbad'" + parseLineRule,
	},
	{
		// Codex's number: one past the line (parse_update_file_chunk
		// adds one whether or not the chunk has an @@ line).
		name: "unexpected line in a first chunk without @@",
		text: "*** Begin Patch\n*** Update File: a\n@@x\n*** End Patch",
		err:  "Invalid patch hunk on line 4: Unexpected line found in update hunk: '@@x'" + parseLineRule,
	},
	{
		name: "unexpected first line without @@",
		text: "*** Begin Patch\n*** Update File: a\nbad\n-x\n*** End Patch",
		err:  "Invalid patch hunk on line 4: Unexpected line found in update hunk: 'bad'" + parseLineRule,
	},
	{
		name: "empty move to path",
		text: "*** Begin Patch\n*** Update File: a\n*** Move to: \n@@\n-x\n+y\n*** End Patch",
		err:  "Invalid patch hunk on line 3: Move to path for 'a' is empty",
	},
	{
		name: "move to marker without path or space",
		text: "*** Begin Patch\n*** Update File: a\n*** Move to:\n@@\n-x\n+y\n*** End Patch",
		err:  "Invalid patch hunk on line 3: Move to path for 'a' is empty",
	},
	{
		name: "file header right after @@",
		text: "*** Begin Patch\n*** Update File: a\n@@\n*** Add File: b\n+x\n*** End Patch",
		err:  "Invalid patch hunk on line 4: Unexpected line found in update hunk: '*** Add File: b'" + parseLineRule,
	},
	{
		name: "@@ at the end of the patch",
		text: "*** Begin Patch\n*** Update File: a\n@@\n*** End Patch",
		err:  "Invalid patch hunk on line 4: Update hunk does not contain any lines",
	},
	{
		name: "end of file right after @@",
		text: "*** Begin Patch\n*** Update File: a\n@@ f\n*** End of File\n*** End Patch",
		err:  "Invalid patch hunk on line 4: Update hunk does not contain any lines",
	},
	{
		name: "error line numbers count the environment id line",
		text: "*** Begin Patch\n*** Environment ID: e\n*** Update File: foo.txt\n*** End Patch",
		err:  "Invalid patch hunk on line 3: Update file hunk for path 'foo.txt' is empty",
	},
}

func parseAZ(line int, path string, chunks ...Chunk) *Patch {
	return &Patch{Dialect: AgentZero, Files: []FileOp{{Kind: Update, Path: path, Line: line, Chunks: chunks}}}
}

// withHeader sets the file an envelope's "*** Update File:" names.
func withHeader(p *Patch, header string) *Patch {
	p.Files[0].Header = header
	return p
}

// parseAZPath is the path every Agent Zero case passes.
const parseAZPath = "src/app.py"

// parseAZCases are the ParseAgentZero cases; FuzzParseAgentZero seeds
// from them.
var parseAZCases = []parseCase{
	{
		name: "bare hunk with anchor",
		text: "@@ def f():\n-    return 1\n+    return 2\n",
		want: parseAZ(0, parseAZPath, Chunk{Line: 1, Anchors: []string{"def f():"}, Old: []string{"    return 1"}, New: []string{"    return 2"}}),
	},
	{
		name: "bare hunk without anchor",
		text: " a\n-b\n+c",
		want: parseAZ(0, parseAZPath, Chunk{Line: 1, Old: []string{"a", "b"}, New: []string{"a", "c"}}),
	},
	{
		name: "envelope: the caller's path wins",
		text: "*** Begin Patch\n*** Update File: other.py\n@@ x\n-a\n+b\n*** End Patch",
		want: withHeader(parseAZ(2, parseAZPath, Chunk{Line: 3, Anchors: []string{"x"}, Old: []string{"a"}, New: []string{"b"}}), "other.py"),
	},
	{
		name: "envelope: lines before the update header are ignored",
		text: "*** Begin Patch  \nnotes\n*** Environment ID: e\n*** Update File: a\n@@ x\n+y\n*** End Patch",
		want: withHeader(parseAZ(4, parseAZPath, Chunk{Line: 5, Anchors: []string{"x"}, New: []string{"y"}}), "a"),
	},
	{
		name: "outer blank lines trimmed, line numbers after them",
		text: "\n  \n\t\n-a\n+b\n\n \n",
		want: parseAZ(0, parseAZPath, Chunk{Line: 1, Old: []string{"a"}, New: []string{"b"}}),
	},
	{
		name: "python line breaks",
		text: "-a\r\n+b\r@@ x\f+c\u2028 d\x1e-e\u0085",
		want: parseAZ(0, parseAZPath,
			Chunk{Line: 1, Old: []string{"a"}, New: []string{"b"}},
			Chunk{Line: 3, Anchors: []string{"x"}, Old: []string{"d", "e"}, New: []string{"c", "d"}},
		),
	},
	{
		name: "empty line is empty context",
		text: "@@ x\n a\n\n-b\n+c",
		want: parseAZ(0, parseAZPath, Chunk{Line: 1, Anchors: []string{"x"}, Old: []string{"a", "", "b"}, New: []string{"a", "", "c"}}),
	},
	{
		name: "nested anchors accumulate",
		text: "@@ class A:\n@@     def f(self):\n-        x = 1\n+        x = 2",
		want: parseAZ(0, parseAZPath, Chunk{Line: 1, Anchors: []string{"class A:", "def f(self):"}, Old: []string{"        x = 1"}, New: []string{"        x = 2"}}),
	},
	{
		name: "bare @@ adds no anchor",
		text: "@@\n@@ f\n@@  \n-a\n+b",
		want: parseAZ(0, parseAZPath, Chunk{Line: 1, Anchors: []string{"f"}, Old: []string{"a"}, New: []string{"b"}}),
	},
	{
		name: "anchors are stripped literals",
		text: "@@@ x \x1f\n-a\n+b\n@@ -1,2 +1,2 @@\n-c\n+d",
		want: parseAZ(0, parseAZPath,
			Chunk{Line: 1, Anchors: []string{"@ x"}, Old: []string{"a"}, New: []string{"b"}},
			Chunk{Line: 4, Anchors: []string{"-1,2 +1,2 @@"}, Old: []string{"c"}, New: []string{"d"}},
		),
	},
	{
		name: "trailing @@ without body is dropped",
		text: "-a\n+b\n@@ tail",
		want: parseAZ(0, parseAZPath, Chunk{Line: 1, Old: []string{"a"}, New: []string{"b"}}),
	},
	{
		name: "insert-only hunk with anchor",
		text: "@@ def f():\n+    pass",
		want: parseAZ(0, parseAZPath, Chunk{Line: 1, Anchors: []string{"def f():"}, New: []string{"    pass"}}),
	},
	{
		name: "removal only",
		text: "-b",
		want: parseAZ(0, parseAZPath, Chunk{Line: 1, Old: []string{"b"}}),
	},
	{
		name: "a file header ends parsing",
		text: "-a\n+b\n*** Update File: z\n@@ q\nnot parsed",
		want: parseAZ(0, parseAZPath, Chunk{Line: 1, Old: []string{"a"}, New: []string{"b"}}),
	},
	{
		name: "end patch inside the envelope ends parsing",
		text: "*** Begin Patch\n*** Update File: a\n-a\n+b\n*** End Patch\nnot parsed\n*** End Patch",
		want: withHeader(parseAZ(2, parseAZPath, Chunk{Line: 3, Old: []string{"a"}, New: []string{"b"}}), "a"),
	},
	{
		name: "empty",
		text: "",
		err:  "patch_text is required",
	},
	{
		name: "blank",
		text: " \n\t\n\f",
		err:  "patch_text is required",
	},
	{
		name: "missing end patch",
		text: "*** Begin Patch\n*** Update File: a\n-x\n+y",
		err:  "patch_text missing *** End Patch",
	},
	{
		name: "begin patch alone",
		text: "*** Begin Patch",
		err:  "patch_text missing *** End Patch",
	},
	{
		name: "end patch with trailing space",
		text: "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch ",
		err:  "patch_text missing *** End Patch",
	},
	{
		name: "second update",
		text: "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** Update File: b\n-x\n+y\n*** End Patch",
		err:  "patch_text may update only one file per operation",
	},
	{
		name: "move",
		text: "*** Begin Patch\n*** Update File: a\n*** Move to: b\n-x\n+y\n*** End Patch",
		err:  "patch_text does not support file moves",
	},
	{
		name: "move before the update header",
		text: "*** Begin Patch\n*** Move to: b\n*** Update File: a\n-x\n+y\n*** End Patch",
		err:  "patch_text does not support file moves",
	},
	{
		name: "envelope errors come before body errors",
		text: "*** Begin Patch\n*** Update File: a\nbad\n*** Move to: b\n*** End Patch",
		err:  "patch_text does not support file moves",
	},
	{
		name: "add file",
		text: "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch",
		err:  "patch_text supports update hunks only",
	},
	{
		name: "delete file",
		text: "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** Delete File: b\n*** End Patch",
		err:  "patch_text supports update hunks only",
	},
	{
		name: "no update header",
		text: "*** Begin Patch\n@@ x\n-a\n+b\n*** End Patch",
		err:  "patch_text must include an update file block",
	},
	{
		name: "end of file marker",
		text: "@@ x\n+y\n*** End of File",
		err:  "invalid patch control line: *** End of File",
	},
	{
		name: "begin patch not on the first line",
		text: "-a\n+b\n*** Begin Patch",
		err:  "invalid patch control line: *** Begin Patch",
	},
	{
		name: "bad prefix",
		text: "@@ x\n-a\n\tb\n+c",
		err:  "invalid patch line prefix: \tb",
	},
	{
		name: "anchor only",
		text: "@@ def f():",
		err:  "patch_text must contain at least one update hunk",
	},
	{
		name: "envelope without hunks",
		text: "*** Begin Patch\n*** Update File: a\n*** End Patch",
		err:  "patch_text must contain at least one update hunk",
	},
	{
		name: "insert-only hunk without anchor",
		text: "+x\n+y",
		err:  "insert-only patch hunk needs an @@ anchor",
	},
	{
		name: "insert-only second hunk without anchor",
		text: "@@ a\n+x\n@@\n+y",
		err:  "insert-only patch hunk needs an @@ anchor",
	},
	{
		name: "context only",
		text: "@@ x\n a\n b",
		err:  "patch hunk does not change content",
	},
	{
		name: "removed and added lines equal",
		text: "-a\n+a",
		err:  "patch hunk does not change content",
	},
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range parseCodexCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tc.text)
			parseCheck(t, tc, got, err)
		})
	}
}

func TestParseAgentZero(t *testing.T) {
	t.Parallel()
	for _, tc := range parseAZCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseAgentZero(tc.text, parseAZPath)
			parseCheck(t, tc, got, err)
		})
	}
}

func parseCheck(t *testing.T, tc parseCase, got *Patch, err error) {
	t.Helper()
	if tc.err != "" {
		if err == nil {
			t.Fatalf("got %+v, want error %q", got, tc.err)
		}
		var e *edit.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %T %v is not an *edit.Error", err, err)
		}
		if e.Message != tc.err {
			t.Errorf("message mismatch (-want +got):\n%s", cmp.Diff(tc.err, e.Message))
		}
		if e.Code != edit.CodeBadRequest {
			t.Errorf("code = %q, want %q", e.Code, edit.CodeBadRequest)
		}
		if e.Hint == "" {
			t.Errorf("no hint for %q", e.Message)
		}
		if got != nil {
			t.Errorf("got patch %+v with an error", got)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff(tc.want, got); diff != "" {
		t.Errorf("patch mismatch (-want +got):\n%s", diff)
	}
}

func TestParseAgentZeroKeepsCallerPath(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"a.txt", " spaced name ", "dir/sub/file.go"} {
		p, err := ParseAgentZero("*** Begin Patch\n*** Update File: ignored.txt\n-a\n+b\n*** End Patch", path)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Files[0].Path; got != path {
			t.Errorf("path = %q, want %q", got, path)
		}
	}
}
