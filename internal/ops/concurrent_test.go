package ops

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// lines returns "<prefix>00\n" … for n lines.
func lines(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%02d\n", prefix, i)
	}
	return b.String()
}

// TestConcurrentChangesWithoutVersionsAllApply: callers that name no
// version each change one distinct part of one file at the same time.
// No caller asked for a version check and every anchor is unique, so
// every change applies, one after another, and none is lost.
func TestConcurrentChangesWithoutVersionsAllApply(t *testing.T) {
	t.Parallel()
	const n = 24
	tests := []struct {
		name   string
		change func(ctx context.Context, e *Engine, i int) error
		want   func(i int) string // a line the final file holds exactly once
	}{
		{
			name: "str_replace",
			change: func(ctx context.Context, e *Engine, i int) error {
				_, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: fmt.Sprintf("k%02d\n", i), New: fmt.Sprintf("K%02d\n", i), Strict: true, Caller: "s1"})
				return err
			},
			want: func(i int) string { return fmt.Sprintf("K%02d", i) },
		},
		{
			name: "append",
			change: func(ctx context.Context, e *Engine, i int) error {
				_, err := e.Write(ctx, WriteRequest{Path: "f.txt", Content: fmt.Appendf(nil, "a%02d\n", i), Append: true, Caller: "s1"})
				return err
			},
			want: func(i int) string { return fmt.Sprintf("a%02d", i) },
		},
		{
			name: "insert",
			change: func(ctx context.Context, e *Engine, i int) error {
				_, err := e.Insert(ctx, InsertRequest{Path: "f.txt", After: 0, Text: fmt.Sprintf("i%02d", i), Caller: "s1"})
				return err
			},
			want: func(i int) string { return fmt.Sprintf("i%02d", i) },
		},
		{
			name: "patch",
			change: func(ctx context.Context, e *Engine, i int) error {
				p := fmt.Sprintf("*** Begin Patch\n*** Update File: f.txt\n@@\n-k%02d\n+P%02d\n*** End Patch", i, i)
				_, err := e.Patch(ctx, PatchRequest{Patch: p, Caller: "s1"})
				return err
			},
			want: func(i int) string { return fmt.Sprintf("P%02d", i) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, root := newEngine(t, map[string]string{"f.txt": lines("k", n)}, Options{})
			if _, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: "s1"}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() { errs[i] = tt.change(ctx, e, i) })
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("change %d: %v", i, err)
				}
			}
			got := strings.Split(strings.TrimSuffix(readFile(t, root, "f.txt"), "\n"), "\n")
			for i := range n {
				if c := strings.Count("\n"+strings.Join(got, "\n")+"\n", "\n"+tt.want(i)+"\n"); c != 1 {
					t.Errorf("line %q occurs %d times in the result, want once", tt.want(i), c)
				}
			}
			// Every change was the caller's own, made to the version it
			// knew: its view is still current, so a line edit needs no
			// new read (DESIGN §5).
			if _, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: 1, To: ptr(1), Content: ptr(got[0])}}, Caller: "s1"}); err != nil {
				t.Errorf("line edit after the caller's own changes: %v", err)
			}
			if t.Failed() {
				t.Logf("final content:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

// rewrite makes e's file f.txt hold content through the workspace
// directly, as another writer that takes none of the engine's locks would
// (another process, an editor).
func rewrite(t *testing.T, e *Engine, content string) {
	t.Helper()
	if _, err := e.ws.Commit([]workspace.Change{{Path: "f.txt", Content: []byte(content)}}, workspace.CommitOptions{Op: "write"}); err != nil {
		t.Error(err)
	}
}

// onFirstCommit makes another writer rewrite f.txt to content after the
// operation's first plan, before its commit.
func onFirstCommit(t *testing.T, e *Engine, content string) *int {
	calls := new(int)
	e.hooks.beforeCommit = func() {
		if *calls++; *calls == 1 {
			rewrite(t, e, content)
		}
	}
	return calls
}

// TestReplanChecksTheNewContent: a change that finds the file changed at
// its commit is planned again against the new content, with every check:
// the outcome is that of the operation run on the new content.
func TestReplanChecksTheNewContent(t *testing.T) {
	t.Parallel()
	const orig = "a\nb\nc\n"
	editB := func(ctx context.Context, e *Engine) error {
		_, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: "b\n", New: "B\n"})
		return err
	}
	patchB := func(ctx context.Context, e *Engine) error {
		_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n-b\n+B\n*** End Patch"})
		return err
	}
	tests := []struct {
		name   string
		change func(ctx context.Context, e *Engine) error
		other  string     // what another writer makes of the file meanwhile
		code   fserr.Code // "" for success
		want   string     // the file afterwards
	}{
		{"edit anchor gone", editB, "a\nc\n", fserr.NoMatch, "a\nc\n"},
		{"edit anchor ambiguous", editB, "a\nb\nb\nc\n", fserr.AmbiguousMatch, "a\nb\nb\nc\n"},
		{"edit anchor kept", editB, "A\nb\nc\n", "", "A\nB\nc\n"},
		{"patch context gone", patchB, "a\nc\n", fserr.NoMatch, "a\nc\n"},
		{"patch context kept", patchB, "a\nb\nc\nd\n", "", "a\nB\nc\nd\n"},
		{"insert line gone", func(ctx context.Context, e *Engine) error {
			_, err := e.Insert(ctx, InsertRequest{Path: "f.txt", After: 3, Text: "x"})
			return err
		}, "a\n", fserr.BadRequest, "a\n"},
		{"append", func(ctx context.Context, e *Engine) error {
			_, err := e.Write(ctx, WriteRequest{Path: "f.txt", Content: []byte("z\n"), Append: true})
			return err
		}, "a\nb\nc\nd\n", "", "a\nb\nc\nd\nz\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := newEngine(t, map[string]string{"f.txt": orig}, Options{})
			calls := onFirstCommit(t, e, tt.other)
			err := tt.change(context.Background(), e)
			switch {
			case tt.code == "" && err != nil:
				t.Fatalf("err = %v, want success", err)
			case tt.code != "":
				wantCode(t, err, tt.code)
			}
			// A refusal comes from the second plan, before any commit.
			if want := map[bool]int{true: 2, false: 1}[tt.code == ""]; *calls != want {
				t.Errorf("%d commits attempted, want %d", *calls, want)
			}
			if got := readFile(t, root, "f.txt"); got != tt.want {
				t.Errorf("f.txt = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCallerVersionStaysStale: a caller that named the version it planned
// against (expected_version, or the fresh read a line edit needs) gets
// stale_version when the file changed since, whether before the
// operation's read or between its read and its commit; the other
// writer's content stays.
func TestCallerVersionStaysStale(t *testing.T) {
	t.Parallel()
	const orig = "a\nb\nc\n"
	v := version(orig)
	tests := []struct {
		name   string
		change func(ctx context.Context, e *Engine) error
	}{
		{"edit", func(ctx context.Context, e *Engine) error {
			_, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: "b\n", New: "B\n", ExpectedVersion: v})
			return err
		}},
		{"insert", func(ctx context.Context, e *Engine) error {
			_, err := e.Insert(ctx, InsertRequest{Path: "f.txt", After: 1, Text: "x", ExpectedVersion: v})
			return err
		}},
		{"append", func(ctx context.Context, e *Engine) error {
			_, err := e.Write(ctx, WriteRequest{Path: "f.txt", Content: []byte("z\n"), Append: true, ExpectedVersion: v})
			return err
		}},
		{"patch", func(ctx context.Context, e *Engine) error {
			_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n-b\n+B\n*** End Patch",
				ExpectedVersions: map[string]string{"f.txt": v}})
			return err
		}},
		{"edit_lines with expected_version", func(ctx context.Context, e *Engine) error {
			_, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: 2, To: ptr(2), Content: ptr("B")}}, ExpectedVersion: v})
			return err
		}},
		{"edit_lines after a read", func(ctx context.Context, e *Engine) error {
			_, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: 2, To: ptr(2), Content: ptr("B")}}, Caller: "s1"})
			return err
		}},
	}
	const other = "a\nb\nc\nd\n" // the anchors survive: only the version tells
	for _, tt := range tests {
		for _, when := range []string{"before the read", "before the commit"} {
			t.Run(tt.name+" "+when, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				e, root := newEngine(t, map[string]string{"f.txt": orig}, Options{})
				if _, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: "s1"}); err != nil {
					t.Fatal(err)
				}
				if when == "before the read" {
					rewrite(t, e, other)
				} else {
					onFirstCommit(t, e, other)
				}
				err := tt.change(ctx, e)
				wantCode(t, err, fserr.StaleVersion)
				if got := readFile(t, root, "f.txt"); got != other {
					t.Errorf("f.txt = %q, want the other writer's %q", got, other)
				}
			})
		}
	}
}

// TestReplanGivesUp: a file that changes before every commit fails the
// operation after maxAttempts with a retryable conflict that says so.
func TestReplanGivesUp(t *testing.T) {
	t.Parallel()
	e, root := newEngine(t, map[string]string{"f.txt": "a\nb\n"}, Options{})
	calls := 0
	e.hooks.beforeCommit = func() {
		calls++
		rewrite(t, e, fmt.Sprintf("a\nb\n%d\n", calls))
	}
	_, err := e.Edit(context.Background(), EditRequest{Path: "f.txt", Old: "b\n", New: "B\n"})
	fe := wantCode(t, err, fserr.Conflict)
	if !fe.Retryable || !strings.Contains(fe.Message, "kept changing") || calls != maxAttempts {
		t.Errorf("error %+v after %d attempts", fe, calls)
	}
	if got, want := readFile(t, root, "f.txt"), fmt.Sprintf("a\nb\n%d\n", maxAttempts); got != want {
		t.Errorf("f.txt = %q, want the other writer's %q", got, want)
	}
}

// TestConcurrentChangesAcrossWorkspaces: two engines over two workspaces
// that share the roots and the state directory, as two processes would,
// append to one file at the same time. Their file locks do not see each
// other, so their commits collide; each collision is planned again, and
// every append lands exactly once.
func TestConcurrentChangesAcrossWorkspaces(t *testing.T) {
	t.Parallel()
	const n = 12
	e1, root := newEngine(t, map[string]string{"f.txt": ""}, Options{})
	ws2, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: e1.ws.StateDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws2.Close() })
	e2 := New(ws2, Options{})
	var wg sync.WaitGroup
	errs := make([]error, 2*n)
	for i := range 2 * n {
		e := []*Engine{e1, e2}[i%2]
		wg.Go(func() {
			_, errs[i] = e.Write(context.Background(), WriteRequest{Path: "f.txt", Content: fmt.Appendf(nil, "a%02d\n", i), Append: true})
		})
	}
	wg.Wait()
	got := readFile(t, root, "f.txt")
	for i, err := range errs {
		if err != nil {
			t.Errorf("append %d: %v", i, err)
		}
		if c := strings.Count(got, fmt.Sprintf("a%02d\n", i)); c != 1 {
			t.Errorf("a%02d appears %d times", i, c)
		}
	}
}

// BenchmarkWriteSmall writes a small file through the engine, the path a
// write of every front takes (its lock included).
func BenchmarkWriteSmall(b *testing.B) {
	e, _ := newEngine(b, map[string]string{"d/f.txt": "x\n"}, Options{})
	content := []byte("hello\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Write(context.Background(), WriteRequest{Path: "d/f.txt", Content: content}); err != nil {
			b.Fatal(err)
		}
	}
}
