package ops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

func newEngine(t testing.TB, files map[string]string, opts Options) (*Engine, string) {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return New(ws, opts), root
}

func readFile(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantCode(t *testing.T, err error, code fserr.Code) *fserr.Error {
	t.Helper()
	e, ok := fserr.As(err)
	if !ok || e.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
	return e
}

func ptr[T any](v T) *T { return &v }

func TestLineEditsNeedFreshRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newEngine(t, map[string]string{"f.txt": "a\nb\nc\n"}, Options{})
	edits := []edit.LineEdit{{From: 2, To: ptr(2), Content: ptr("B")}}

	_, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: edits, Caller: "s1"})
	e1 := wantCode(t, err, fserr.MustRead)
	if !strings.Contains(e1.Message, "read file before patching - line numbers unknown") {
		t.Errorf("message %q", e1.Message)
	}
	if _, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: "s1"}); err != nil {
		t.Fatal(err)
	}
	r, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: edits, Caller: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	// Our own write keeps us fresh: a second line edit needs no new read.
	if _, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: 1, To: ptr(1), Content: ptr("A")}}, Caller: "s1"}); err != nil {
		t.Fatalf("second edit after own write: %v", err)
	}
	if got := readFile(t, root, "f.txt"); got != "A\nB\nc\n" {
		t.Fatalf("f.txt = %q", got)
	}
	// Someone else changes the file: stale.
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("x\ny\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: edits, Caller: "s1"})
	e2 := wantCode(t, err, fserr.StaleVersion)
	if !strings.Contains(e2.Message, "file changed since last read - re-read to get current line numbers") {
		t.Errorf("message %q", e2.Message)
	}
	// Another caller never read it.
	_, err = e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: edits, Caller: "s2"})
	wantCode(t, err, fserr.MustRead)
	// Stateless callers pass the version instead.
	if _, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: edits, ExpectedVersion: r.Version}); err == nil {
		t.Fatal("an outdated expected_version was accepted")
	}
	cur, _ := e.Read(ctx, ReadRequest{Path: "f.txt"})
	if _, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: edits, ExpectedVersion: cur.Version}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "f.txt"); got != "x\nB\n" {
		t.Fatalf("f.txt = %q", got)
	}
}

func TestTouchWithoutChangeIsFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newEngine(t, map[string]string{"f.txt": "a\nb\n"}, Options{})
	if _, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: "c"}); err != nil {
		t.Fatal(err)
	}
	// Rewrite the same bytes (a formatter that changed nothing, a touch).
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: 1, To: ptr(1), Content: ptr("z")}}, Caller: "c"}); err != nil {
		t.Fatalf("rewrite with same content made the read stale: %v", err)
	}
}

func TestEditUndoRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newEngine(t, map[string]string{"g.go": "package g\n\nfunc F() int {\n\treturn 1\n}\n"}, Options{})
	r, err := e.Edit(ctx, EditRequest{Path: "g.go", Old: "return 1", New: "return 2", Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Tier != "exact" || r.Count != 1 || r.StartLine != 4 || !strings.Contains(r.Diff, "+\treturn 2") || !r.UndoRecorded {
		t.Fatalf("result %+v", r)
	}
	if _, err := e.Edit(ctx, EditRequest{Path: "g.go", Old: "return 2", New: "return 3", ExpectedVersion: r.PrevVersion}); err == nil {
		t.Fatal("edit with an outdated expected_version succeeded")
	}
	u, err := e.Undo(ctx, UndoRequest{Path: "g.go"})
	if err != nil {
		t.Fatal(err)
	}
	if u.Version != r.PrevVersion || readFile(t, root, "g.go") != "package g\n\nfunc F() int {\n\treturn 1\n}\n" {
		t.Fatalf("undo: %+v, file %q", u, readFile(t, root, "g.go"))
	}
}

func TestUndoRefusesAfterForeignChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newEngine(t, map[string]string{"h.txt": "one\n"}, Options{})
	if _, err := e.Edit(ctx, EditRequest{Path: "h.txt", Old: "one", New: "two"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "h.txt"), []byte("three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := e.Undo(ctx, UndoRequest{Path: "h.txt"})
	wantCode(t, err, fserr.Conflict)
	if got := readFile(t, root, "h.txt"); got != "three\n" {
		t.Fatalf("undo changed the file: %q", got)
	}
}

func TestPatchUndoOfCreateDeletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newEngine(t, nil, Options{})
	if _, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Add File: new.txt\n+hi\n*** End Patch"}); err != nil {
		t.Fatal(err)
	}
	u, err := e.Undo(ctx, UndoRequest{Path: "new.txt"})
	if err != nil || !u.Deleted {
		t.Fatalf("undo: %+v, %v", u, err)
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); !os.IsNotExist(err) {
		t.Fatalf("new.txt still exists: %v", err)
	}
}

// TestPatchUndoOfAMoveRestoresBothSides: a patch's move is a delete and
// a create; undoing either side reverts both, so the content is back
// under its old name in one undo (and the other files of the patch keep
// their own undo).
func TestPatchUndoOfAMoveRestoresBothSides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, undo := range []string{"g.txt", "f.txt"} {
		t.Run(undo, func(t *testing.T) {
			t.Parallel()
			e, root := newEngine(t, map[string]string{"f.txt": "a\nb\n", "other.txt": "x\n"}, Options{})
			patch := "*** Begin Patch\n*** Update File: f.txt\n*** Move to: g.txt\n@@\n a\n-b\n+B\n" +
				"*** Update File: other.txt\n@@\n-x\n+y\n*** End Patch"
			if _, err := e.Patch(ctx, PatchRequest{Patch: patch}); err != nil {
				t.Fatal(err)
			}
			u, err := e.Undo(ctx, UndoRequest{Path: undo})
			if err != nil || len(u.Also) != 1 {
				t.Fatalf("undo %s: %+v, %v; want both sides of the move reverted", undo, u, err)
			}
			if got := readFile(t, root, "f.txt"); got != "a\nb\n" {
				t.Errorf("f.txt = %q after the undo", got)
			}
			if _, err := os.Stat(filepath.Join(root, "g.txt")); !os.IsNotExist(err) {
				t.Errorf("g.txt still exists: %v", err)
			}
			if got := readFile(t, root, "other.txt"); got != "y\n" {
				t.Errorf("other.txt = %q: the move's undo reverted another file of the patch", got)
			}
		})
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newEngine(t, map[string]string{"r.txt": "x\n"}, Options{ReadOnly: true})
	_, err := e.Edit(ctx, EditRequest{Path: "r.txt", Old: "x", New: "y"})
	wantCode(t, err, fserr.ReadOnly)
	_, err = e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Delete File: r.txt\n*** End Patch"})
	wantCode(t, err, fserr.ReadOnly)
	_, err = e.Write(ctx, WriteRequest{Path: "r.txt", Content: []byte("z")})
	wantCode(t, err, fserr.ReadOnly)
	if got := readFile(t, root, "r.txt"); got != "x\n" {
		t.Fatalf("r.txt = %q", got)
	}
	if _, err := e.Read(ctx, ReadRequest{Path: "r.txt"}); err != nil {
		t.Fatalf("read in read-only mode: %v", err)
	}
}

func TestReadRanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, map[string]string{"l.txt": "\xef\xbb\xbf1\r\n2\r\n3\r\n"}, Options{})
	r, err := e.Read(ctx, ReadRequest{Path: "l.txt", LineFrom: 2, LineTo: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "2\r\n3\r\n" || r.TotalLines != 3 || r.LineFrom != 2 || r.LineTo != 3 || !r.BOM || r.EOL != "CRLF" {
		t.Fatalf("read %+v", r)
	}
	whole, _ := e.Read(ctx, ReadRequest{Path: "l.txt"})
	if whole.Content != "1\r\n2\r\n3\r\n" || whole.Version != r.Version {
		t.Fatalf("whole read %+v", whole)
	}
	_, err = e.Read(ctx, ReadRequest{Path: "l.txt", LineFrom: 3, LineTo: 2})
	wantCode(t, err, fserr.BadRequest)
}

// TestReadRangeOfALargeFile: a line range of a file over the 16 MiB read
// limit is streamed (a grep hit in a big log can be read around, and edited
// by line numbers after); the whole file stays too_large.
func TestReadRangeOfALargeFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var b strings.Builder
	for i := 1; b.Len() <= 17<<20; i++ {
		b.WriteString("entry " + strings.Repeat("-", i%40) + "\n")
	}
	big := b.String()
	e, root := newEngine(t, map[string]string{"big.log": big}, Options{})
	_, err := e.Read(ctx, ReadRequest{Path: "big.log"})
	wantCode(t, err, fserr.TooLarge)
	r, err := e.Read(ctx, ReadRequest{Path: "big.log", LineFrom: 400000, LineTo: 400001, Caller: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	want, total := edit.Lines([]byte(big), 400000, 400001)
	if r.Content != want || r.TotalLines != total || r.LineFrom != 400000 || r.LineTo != 400001 ||
		r.Version != workspace.Version([]byte(big)) || r.Size != int64(len(big)) || r.EOL != "LF" {
		t.Fatalf("read lines 400000..400001: %+v", r)
	}
	// The read counts for freshness: the caller may now edit by lines.
	if _, err := e.EditLines(ctx, EditLinesRequest{Path: "big.log", Caller: "agent",
		Edits: []edit.LineEdit{{From: 400000, To: ptr(400000), Content: ptr("edited by lines")}}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := edit.Lines([]byte(readFile(t, root, "big.log")), 400000, 400000); got != "edited by lines\n" {
		t.Errorf("line 400000 after the edit = %q", got)
	}
	// Past the end: an empty range, as for small files.
	r, err = e.Read(ctx, ReadRequest{Path: "big.log", LineFrom: total + 5, LineTo: total + 9})
	if err != nil || r.Content != "" || r.LineTo >= r.LineFrom {
		t.Fatalf("read past the end: %+v, %v", r, err)
	}
}

// TestWriteCreateOnly: a create-only write onto an existing file is
// already_exists with a way forward, never stale_version; the check is the
// commit's own (there is no earlier Stat a concurrent create could slip
// past), so it holds however the file came to exist.
func TestWriteCreateOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  WriteRequest
		code fserr.Code // "" means success
	}{
		{name: "existing file", req: WriteRequest{Path: "w.txt", Content: []byte("new\n")}, code: fserr.AlreadyExists},
		{name: "existing file, append", req: WriteRequest{Path: "w.txt", Content: []byte("new\n"), Append: true}, code: fserr.AlreadyExists},
		{name: "existing directory", req: WriteRequest{Path: "d", Content: []byte("new\n")}, code: fserr.InvalidTarget},
		{name: "with a version", req: WriteRequest{Path: "w.txt", Content: []byte("new\n"), ExpectedVersion: workspace.Version([]byte("old\n"))}, code: fserr.BadRequest},
		{name: "new file", req: WriteRequest{Path: "d/n.txt", Content: []byte("n\n")}},
		{name: "new file, append", req: WriteRequest{Path: "a.txt", Content: []byte("a\n"), Append: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := newEngine(t, map[string]string{"w.txt": "old\n", "d/x": ""}, Options{})
			req := tt.req
			req.CreateOnly = true
			r, err := e.Write(context.Background(), req)
			if tt.code == "" {
				if err != nil || !r.Created || readFile(t, root, req.Path) != string(req.Content) {
					t.Fatalf("create: %+v, %v", r, err)
				}
				return
			}
			fe := wantCode(t, err, tt.code)
			if tt.code == fserr.AlreadyExists && (!strings.Contains(fe.Hint, "version") || !strings.Contains(fe.Hint, "another path")) {
				t.Errorf("hint %q does not say how to overwrite or where else to go", fe.Hint)
			}
			if got := readFile(t, root, "w.txt"); got != "old\n" {
				t.Fatalf("w.txt = %q", got)
			}
		})
	}
}

// TestEditTakesFilesBeyondTheReadLimit: a read returns at most 16 MiB, but
// an edit or patch takes the whole file up to EditLimit.
func TestEditTakesFilesBeyondTheReadLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	big := strings.Repeat("filler line of text\n", 20<<20/20) + "needle\n"
	e, root := newEngine(t, map[string]string{"big.txt": big}, Options{})
	_, err := e.Read(ctx, ReadRequest{Path: "big.txt"})
	wantCode(t, err, fserr.TooLarge)
	if _, err := e.Edit(ctx, EditRequest{Path: "big.txt", Old: "needle", New: "found"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: big.txt\n@@\n-found\n+patched\n*** End Patch"}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "big.txt"); !strings.HasSuffix(got, "filler line of text\npatched\n") || len(got) != len(big)+1 {
		t.Fatalf("big.txt ends %q (%d bytes)", got[len(got)-40:], len(got))
	}
}

// TestContentEditsKeepAStaleViewStale: a replace or a patch applies to the
// current content even when the caller's view is stale, but that must not
// make the caller's old line numbers count as fresh again: someone else's
// change may have moved them. A caller whose view was current stays
// current after its own replace or patch; one that never read stays
// unread; a file the caller added is known to it whole.
func TestContentEditsKeepAStaleViewStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const orig = "a\nb\nc\nTARGET\nd\n"
	for _, tt := range []struct {
		name   string
		change func(e *Engine) error
	}{
		{"replace", func(e *Engine) error {
			_, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: "d\n", New: "D\n", Caller: "s1"})
			return err
		}},
		{"patch", func(e *Engine) error {
			_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n-d\n+D\n*** End Patch", Caller: "s1"})
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := newEngine(t, map[string]string{"f.txt": orig}, Options{})
			edits := []edit.LineEdit{{From: 4, To: ptr(4), Content: ptr("CHANGED")}}
			// Fresh view: own content edits keep it fresh.
			if _, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: "s1"}); err != nil {
				t.Fatal(err)
			}
			if err := tt.change(e); err != nil {
				t.Fatal(err)
			}
			if _, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: edits, Caller: "s1"}); err != nil {
				t.Fatalf("line edit after own %s on a fresh view: %v", tt.name, err)
			}
			// Stale view: someone else inserts two lines; the content
			// edit applies, the view stays stale.
			if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("new1\nnew2\n"+orig), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tt.change(e); err != nil {
				t.Fatal(err)
			}
			_, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: edits, Caller: "s1"})
			wantCode(t, err, fserr.StaleVersion)
			// Never read: a content edit leaves the caller unread.
			if _, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: "TARGET", New: "TARGET2", Caller: "s2"}); err != nil {
				t.Fatal(err)
			}
			_, err = e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: edits, Caller: "s2"})
			wantCode(t, err, fserr.MustRead)
			if got := readFile(t, root, "f.txt"); got != "new1\nnew2\na\nb\nc\nTARGET2\nD\n" {
				t.Fatalf("f.txt = %q", got)
			}
		})
	}
	// A file the caller added by patch is fresh for it.
	e, _ := newEngine(t, nil, Options{})
	if _, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Add File: n.txt\n+x\n+y\n*** End Patch", Caller: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EditLines(ctx, EditLinesRequest{Path: "n.txt", Edits: []edit.LineEdit{{From: 2, To: ptr(2), Content: ptr("Y")}}, Caller: "s1"}); err != nil {
		t.Fatalf("line edit of a file the caller added: %v", err)
	}
}

// TestLinesStaleAfterMove: with LinesStaleAfterMove (text_editor, whose
// answer cannot say how lines moved), a change of the caller's own that
// moves lines leaves its line numbers stale: the next line edit is
// stale_version, not an edit of whatever line now has the number. A
// change in place, lines added at the end, a whole-file write and a read
// keep or make them fresh; without the option (MCP, which prints the
// shifts) the caller stays fresh. The caller still knows the content, so
// no change of its own is reported as one made behind its back.
func TestLinesStaleAfterMove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const orig = "one\ntwo\nthree\nfour\n"
	type step func(e *Engine, stale bool) (notice string, err error)
	replace := func(old, new string) step {
		return func(e *Engine, stale bool) (string, error) {
			r, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: old, New: new, Caller: "c", LinesStaleAfterMove: stale})
			if err != nil {
				return "", err
			}
			return r.Notice, nil
		}
	}
	lines := func(from, to int, content string) step {
		return func(e *Engine, stale bool) (string, error) {
			_, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: from, To: ptr(to), Content: ptr(content)}},
				Caller: "c", LinesStaleAfterMove: stale})
			return "", err
		}
	}
	patchText := func(text string) step {
		return func(e *Engine, stale bool) (string, error) {
			r, err := e.Patch(ctx, PatchRequest{Patch: text, Path: "f.txt", Caller: "c", LinesStaleAfterMove: stale})
			if err != nil {
				return "", err
			}
			return strings.Join(r.Notices, "; "), nil
		}
	}
	write := func(content string) step {
		return func(e *Engine, _ bool) (string, error) {
			r, err := e.Write(ctx, WriteRequest{Path: "f.txt", Content: []byte(content), Caller: "c"})
			if err != nil {
				return "", err
			}
			return r.Notice, nil
		}
	}
	read := func(e *Engine, _ bool) (string, error) {
		_, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: "c"})
		return "", err
	}
	tests := []struct {
		name  string
		steps []step
		stale bool // the line edit of line 3 that follows is stale_version
	}{
		{"replace adding lines", []step{replace("one", "x\ny\nz")}, true},
		{"replace removing a line", []step{replace("one\ntwo", "onetwo")}, true},
		{"replace in place", []step{replace("one", "ONE")}, false},
		{"replace adding lines at the end", []step{replace("four\n", "four\nfive\n")}, false},
		{"line edit adding lines", []step{lines(1, 1, "x\ny\nz\n")}, true},
		{"line edit in place", []step{lines(1, 1, "ONE\n")}, false},
		{"patch_text adding a line", []step{patchText("@@ one\n+one and a half")}, true},
		{"patch_text in place", []step{patchText("-two\n+TWO")}, false},
		{"a move, then a change in place", []step{replace("one", "x\ny"), replace("two", "TWO")}, true},
		{"a move, then a read", []step{replace("one", "x\ny"), read}, false},
		{"a move, then a whole-file write", []step{replace("one", "x\ny"), write("a\nb\nthree\nd\n")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, stale := range []bool{true, false} {
				e, _ := newEngine(t, map[string]string{"f.txt": orig}, Options{})
				if _, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: "c"}); err != nil {
					t.Fatal(err)
				}
				for i, s := range tt.steps {
					notice, err := s(e, stale)
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if notice != "" {
						t.Errorf("step %d: notice %q for the caller's own change", i, notice)
					}
				}
				// Whatever the line edit finds, the caller's own changes
				// are never reported as made behind its back.
				if notice, err := replace("three", "3")(e, stale); err != nil || notice != "" {
					t.Errorf("replace after the steps: notice %q, err %v", notice, err)
				}
				_, err := lines(3, 3, "THREE\n")(e, stale)
				switch want := tt.stale && stale; {
				case want:
					if fe := wantCode(t, err, fserr.StaleVersion); !strings.Contains(fe.Message, "file changed since last read - re-read to get current line numbers") {
						t.Errorf("message %q", fe.Message)
					}
				case err != nil:
					t.Errorf("LinesStaleAfterMove %v: line edit: %v, want it applied", stale, err)
				}
			}
		})
	}
}

// TestMalformedExpectedVersion: a mistyped expected_version is
// bad_request ("not a version"), not stale_version, which would send the
// caller to re-read a file that did not change.
func TestMalformedExpectedVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, map[string]string{"f.txt": "a\nb\n"}, Options{})
	for name, run := range map[string]func() error{
		"edit": func() error {
			_, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: "a", New: "A", ExpectedVersion: "zz"})
			return err
		},
		"edit lines": func() error {
			_, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: 1, To: ptr(1), Content: ptr("A")}}, ExpectedVersion: "zz"})
			return err
		},
		"write": func() error {
			_, err := e.Write(ctx, WriteRequest{Path: "f.txt", Content: []byte("x"), ExpectedVersion: "zz"})
			return err
		},
		"patch_text": func() error {
			_, err := e.Patch(ctx, PatchRequest{Path: "f.txt", Patch: "-a\n+A", ExpectedVersion: "zz"})
			return err
		},
		"patch": func() error {
			_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n*** End Patch",
				ExpectedVersions: map[string]string{"f.txt": "zz"}})
			return err
		},
	} {
		if fe := wantCode(t, run(), fserr.BadRequest); !strings.Contains(fe.Message, "is not a version") {
			t.Errorf("%s: message %q", name, fe.Message)
		}
	}
}

// TestChangesWithoutAFullViewKeepFreshnessHonest: an insert, an append, an
// undo or a patch that moves a file shows the caller only part of the
// file. A caller whose view was fresh stays fresh; one whose view was stale
// (someone else inserted lines) stays stale, and one that never read the
// file stays unread, so its line numbers are never trusted.
func TestChangesWithoutAFullViewKeepFreshnessHonest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const orig = "a\nb\nc\n"
	tests := []struct {
		name   string
		edited string // the file line edits go to afterwards
		change func(e *Engine) error
	}{
		{"insert", "f.txt", func(e *Engine) error {
			_, err := e.Insert(ctx, InsertRequest{Path: "f.txt", After: 0, Text: "top", Caller: "s1"})
			return err
		}},
		{"append", "f.txt", func(e *Engine) error {
			_, err := e.Write(ctx, WriteRequest{Path: "f.txt", Content: []byte("end\n"), Append: true, Caller: "s1"})
			return err
		}},
		{"undo", "f.txt", func(e *Engine) error {
			if _, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: "c\n", New: "C\n", Caller: "s1"}); err != nil {
				return err
			}
			_, err := e.Undo(ctx, UndoRequest{Path: "f.txt", Caller: "s1"})
			return err
		}},
		{"patch move", "g.txt", func(e *Engine) error {
			_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n*** Move to: g.txt\n@@\n-c\n+C\n*** End Patch", Caller: "s1"})
			return err
		}},
	}
	edits := []edit.LineEdit{{From: 2, To: ptr(2), Content: ptr("X")}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, view := range []string{"fresh", "stale", "unread"} {
				e, root := newEngine(t, map[string]string{"f.txt": orig}, Options{})
				if view != "unread" {
					if _, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: "s1"}); err != nil {
						t.Fatal(err)
					}
				}
				if view == "stale" {
					if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("new1\nnew2\n"+orig), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := tt.change(e); err != nil {
					t.Fatalf("%s view: %v", view, err)
				}
				_, err := e.EditLines(ctx, EditLinesRequest{Path: tt.edited, Edits: edits, Caller: "s1"})
				switch view {
				case "fresh":
					if err != nil {
						t.Errorf("fresh view: line edit after own %s: %v", tt.name, err)
					}
				case "stale":
					if fserr.CodeOf(err) != fserr.StaleVersion && fserr.CodeOf(err) != fserr.MustRead {
						t.Errorf("stale view: line edit after own %s: err = %v, want stale_version or must_read", tt.name, err)
					}
				case "unread":
					if fserr.CodeOf(err) != fserr.MustRead {
						t.Errorf("never read: line edit after own %s: err = %v, want must_read", tt.name, err)
					}
				}
			}
		})
	}
}

// TestUndoOfAnotherCallersChangeLeavesTheViewStale: a caller that read the
// file only after someone else's insert and then undoes that insert never
// saw the restored content; its line numbers are off by the insert.
func TestUndoOfAnotherCallersChangeLeavesTheViewStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, map[string]string{"f.txt": "a\nb\n"}, Options{})
	if _, err := e.Insert(ctx, InsertRequest{Path: "f.txt", After: 0, Text: "x\ny", Caller: "s2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Undo(ctx, UndoRequest{Path: "f.txt", Caller: "s1"}); err != nil {
		t.Fatal(err)
	}
	// Line 2 was "y" when s1 read the file; now it is "b".
	_, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: 2, To: ptr(2), Content: ptr("Y")}}, Caller: "s1"})
	wantCode(t, err, fserr.StaleVersion)
}

// TestPatchRefusesTwoLinksOfOneFile: a patch that names one file by two of
// its hard links is refused, and nothing changes. Planned as two files,
// the second section's content would silently replace the first's changes.
func TestPatchRefusesTwoLinksOfOneFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newEngine(t, map[string]string{"f.txt": "a\nb\n"}, Options{})
	if err := os.Link(filepath.Join(root, "f.txt"), filepath.Join(root, "h.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n*** Update File: h.txt\n@@\n-b\n+B\n*** End Patch"})
	if fe := wantCode(t, err, fserr.BadRequest); !strings.Contains(fe.Message, "h.txt is a hard link to f.txt") {
		t.Errorf("message %q", fe.Message)
	}
	if got := readFile(t, root, "f.txt"); got != "a\nb\n" {
		t.Errorf("f.txt = %q, want it unchanged", got)
	}
	// One link alone is an ordinary file.
	if _, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: h.txt\n@@\n-b\n+B\n*** End Patch"}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "f.txt"); got != "a\nB\n" {
		t.Errorf("f.txt = %q, want %q", got, "a\nB\n")
	}
}

// TestStaleExpectedVersionComesFirst: when the file changed since the
// version the caller names, that is the error, whatever the change did to
// the text the caller's edit looks for: no_match or ambiguous_match would
// send it to rework an edit that was right for the version it read,
// instead of to re-read the file.
func TestStaleExpectedVersionComesFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const orig = "a\nb\nc\n"
	tests := []struct {
		name   string
		now    string // what someone else made of the file
		change func(e *Engine, v string) error
	}{
		{"patch_text, context gone", "a\nB\nc\n", func(e *Engine, v string) error {
			_, err := e.Patch(ctx, PatchRequest{Path: "f.txt", Patch: "-b\n+x", ExpectedVersion: v})
			return err
		}},
		{"patch_text, context twice", "a\nb\nc\nb\n", func(e *Engine, v string) error {
			_, err := e.Patch(ctx, PatchRequest{Path: "f.txt", Patch: "-b\n+x", ExpectedVersion: v})
			return err
		}},
		{"patch, context gone", "a\nB\nc\n", func(e *Engine, v string) error {
			_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n-b\n+x\n*** End Patch",
				ExpectedVersions: map[string]string{"f.txt": v}})
			return err
		}},
		{"patch, dry run", "a\nB\nc\n", func(e *Engine, v string) error {
			_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n-b\n+x\n*** End Patch",
				ExpectedVersions: map[string]string{"f.txt": v}, DryRun: true})
			return err
		}},
		{"replace, text gone", "a\nB\nc\n", func(e *Engine, v string) error {
			_, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: "b", New: "x", ExpectedVersion: v})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := newEngine(t, map[string]string{"f.txt": orig}, Options{})
			if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte(tt.now), 0o644); err != nil {
				t.Fatal(err)
			}
			fe := wantCode(t, tt.change(e, workspace.Version([]byte(orig))), fserr.StaleVersion)
			if !strings.Contains(fe.Hint, "re-read") {
				t.Errorf("hint %q does not say to re-read the file", fe.Hint)
			}
			if got := readFile(t, root, "f.txt"); got != tt.now {
				t.Errorf("f.txt = %q, want it unchanged", got)
			}
		})
	}
}

// TestExpectedVersionVouchesForTheView: a caller whose read is outdated
// but that names the file's current version (it got it elsewhere: a stat,
// another front) proved it knew what it changed. Its change is not
// reported as applied to content it had not seen, and its own change
// leaves its view current: the next line edit needs no new read, as after
// a line edit or an insert that named the version.
func TestExpectedVersionVouchesForTheView(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const now = "a\nB\nc\n"
	v := workspace.Version([]byte(now))
	tests := []struct {
		name   string
		change func(e *Engine) (notice string, err error)
	}{
		{"replace", func(e *Engine) (string, error) {
			r, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: "c\n", New: "C\n", ExpectedVersion: v, Caller: "s1"})
			if err != nil {
				return "", err
			}
			return r.Notice, nil
		}},
		{"patch_text", func(e *Engine) (string, error) {
			r, err := e.Patch(ctx, PatchRequest{Path: "f.txt", Patch: "-c\n+C", ExpectedVersion: v, Caller: "s1"})
			if err != nil {
				return "", err
			}
			return strings.Join(r.Notices, "; "), nil
		}},
		{"patch", func(e *Engine) (string, error) {
			r, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: ./f.txt\n@@\n-c\n+C\n*** End Patch",
				ExpectedVersions: map[string]string{"./f.txt": v}, Caller: "s1"})
			if err != nil {
				return "", err
			}
			return strings.Join(r.Notices, "; "), nil
		}},
		{"write", func(e *Engine) (string, error) {
			r, err := e.Write(ctx, WriteRequest{Path: "f.txt", Content: []byte("a\nB\nC\n"), ExpectedVersion: v, Caller: "s1"})
			if err != nil {
				return "", err
			}
			return r.Notice, nil
		}},
		{"append", func(e *Engine) (string, error) {
			r, err := e.Write(ctx, WriteRequest{Path: "f.txt", Content: []byte("d\n"), Append: true, ExpectedVersion: v, Caller: "s1"})
			if err != nil {
				return "", err
			}
			return r.Notice, nil
		}},
		{"insert", func(e *Engine) (string, error) {
			_, err := e.Insert(ctx, InsertRequest{Path: "f.txt", After: 3, Text: "d", ExpectedVersion: v, Caller: "s1"})
			return "", err
		}},
		{"line edit", func(e *Engine) (string, error) {
			_, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: 3, To: ptr(3), Content: ptr("C")}},
				ExpectedVersion: v, Caller: "s1"})
			return "", err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, view := range []string{"stale", "unread"} {
				e, root := newEngine(t, map[string]string{"f.txt": "a\nb\nc\n"}, Options{})
				if view == "stale" {
					if _, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: "s1"}); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte(now), 0o644); err != nil {
					t.Fatal(err)
				}
				notice, err := tt.change(e)
				if err != nil {
					t.Fatalf("%s view: %v", view, err)
				}
				if notice != "" {
					t.Errorf("%s view: notice %q, though the caller named the version it changed", view, notice)
				}
				if _, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: 2, To: ptr(2), Content: ptr("X")}}, Caller: "s1"}); err != nil {
					t.Errorf("%s view: line edit after the caller's own %s of the version it named: %v", view, tt.name, err)
				}
			}
		})
	}
}

// TestArgumentErrorsSayWhatToDo: an argument the engine refuses is
// bad_request with a hint naming what to pass instead.
func TestArgumentErrorsSayWhatToDo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, map[string]string{"f.txt": "a\nb\n", "g.txt": "x\n"}, Options{})
	tests := []struct {
		name string
		run  func() error
	}{
		{"negative line_from", func() error {
			_, err := e.Read(ctx, ReadRequest{Path: "f.txt", LineFrom: -2})
			return err
		}},
		{"line_to before line_from", func() error {
			_, err := e.Read(ctx, ReadRequest{Path: "f.txt", LineFrom: 2, LineTo: 1})
			return err
		}},
		{"expected version of a file the patch leaves alone", func() error {
			_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n*** End Patch",
				ExpectedVersions: map[string]string{"g.txt": workspace.Version([]byte("x\n"))}})
			return err
		}},
		{"negative max_results", func() error {
			_, err := e.Grep(ctx, GrepRequest{Path: ".", Pattern: "a", MaxResults: -1})
			return err
		}},
		{"search without a regex", func() error {
			_, err := e.Search(ctx, FileSearchRequest{File: "f.txt"})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if fe := wantCode(t, tt.run(), fserr.BadRequest); fe.Hint == "" {
				t.Errorf("%q has no hint", fe.Message)
			}
		})
	}
}
