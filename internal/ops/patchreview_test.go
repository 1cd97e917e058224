package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestPatchVersionOfARemovedLink: a link the patch deletes has no version
// of its own; naming it in expected_versions is a bad request, not a
// stale_version that no re-read could ever clear.
func TestPatchVersionOfARemovedLink(t *testing.T) {
	t.Parallel()
	e, root := newEngine(t, map[string]string{"real.txt": "keep\n"}, Options{})
	if err := os.Symlink("real.txt", filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	r, err := e.Read(context.Background(), ReadRequest{Path: "alias"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Patch(context.Background(), PatchRequest{Patch: "*** Begin Patch\n*** Delete File: alias\n*** End Patch\n",
		ExpectedVersions: map[string]string{"alias": r.Version}})
	wantCode(t, err, fserr.BadRequest)
	if _, err := os.Lstat(filepath.Join(root, "alias")); err != nil || readFile(t, root, "real.txt") != "keep\n" {
		t.Errorf("a refused patch changed the tree: %v", err)
	}
}

// TestPatchGivesUpNamingTheFile: a patch that keeps colliding with
// another writer gives up with the file named as the patch wrote it, not
// by its absolute path, and a patch cancelled while it waits names it too.
func TestPatchGivesUpNamingTheFile(t *testing.T) {
	t.Parallel()
	e, root := newEngine(t, map[string]string{"f.txt": "a\nb\n"}, Options{})
	calls := 0
	e.hooks.beforeCommit = func() {
		calls++
		rewrite(t, e, fmt.Sprintf("a\nb\n%d\n", calls))
	}
	patchText := "*** Begin Patch\n*** Update File: f.txt\n@@\n-b\n+B\n*** End Patch\n"
	_, err := e.Patch(context.Background(), PatchRequest{Patch: patchText})
	fe := wantCode(t, err, fserr.Conflict)
	if !strings.HasPrefix(fe.Message, "f.txt kept changing") || strings.Contains(fe.Message+fe.Hint, root) {
		t.Errorf("give-up error names %q / %q", fe.Message, fe.Hint)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.hooks.beforeCommit = nil
	unlock, err := e.locks.lock(context.Background(), e.lockKeys(true, "f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = e.Patch(ctx, PatchRequest{Patch: patchText})
	if fe := wantCode(t, err, fserr.IOError); !strings.Contains(fe.Message, "patch of f.txt cancelled") {
		t.Errorf("cancelled patch: %q", fe.Message)
	}
}

// TestPatchHeaderMustNamePath: a single-file patch whose envelope updates
// another file than path is refused unless the caller asks for Agent
// Zero's rule (path wins); a header naming path through a link, or no
// envelope at all, applies.
func TestPatchHeaderMustNamePath(t *testing.T) {
	t.Parallel()
	hunk := "@@\n-old\n+new\n"
	envelope := func(name string) string {
		return "*** Begin Patch\n*** Update File: " + name + "\n" + hunk + "*** End Patch\n"
	}
	for _, tc := range []struct {
		name, patch  string
		ignoreHeader bool
		code         fserr.Code // "" when the patch applies to a.txt
		message      string
	}{
		{name: "header names path", patch: envelope("a.txt")},
		{name: "header names path through a link", patch: envelope("alias")},
		{name: "header names path padded", patch: envelope(" ./a.txt ")},
		{name: "no envelope", patch: hunk},
		{name: "header names another file", patch: envelope("b.txt"), code: fserr.BadRequest, message: "the patch updates b.txt, but path names a.txt"},
		{name: "header outside the root", patch: envelope("../x.txt"), code: fserr.OutsideRoot},
		{name: "path wins when asked", patch: envelope("b.txt"), ignoreHeader: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, root := newEngine(t, map[string]string{"a.txt": "old\n", "b.txt": "old\n"}, Options{})
			if err := os.Symlink("a.txt", filepath.Join(root, "alias")); err != nil {
				t.Fatal(err)
			}
			_, err := e.Patch(context.Background(), PatchRequest{Patch: tc.patch, Path: "a.txt", IgnoreHeader: tc.ignoreHeader})
			want := "new\n"
			if tc.code != "" {
				fe := wantCode(t, err, tc.code)
				if !strings.Contains(fe.Message, tc.message) {
					t.Errorf("message %q, want %q", fe.Message, tc.message)
				}
				want = "old\n"
			} else if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, root, "a.txt"); got != want {
				t.Errorf("a.txt = %q, want %q", got, want)
			}
			if got := readFile(t, root, "b.txt"); got != "old\n" {
				t.Errorf("b.txt = %q, changed", got)
			}
		})
	}
}

// TestPatchPlanningStopsWhenCancelled: planning runs under the request's
// context, so a caller that left stops a long plan (a dry run too, which
// takes no lock that would notice).
func TestPatchPlanningStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	e, root := newEngine(t, map[string]string{"f.txt": "a\nb\n"}, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, dry := range []bool{true, false} {
		_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n-b\n+B\n*** End Patch\n", DryRun: dry})
		fe := wantCode(t, err, fserr.IOError)
		if !errors.Is(err, context.Canceled) || !fe.Retryable || !strings.Contains(fe.Message, "f.txt") {
			t.Errorf("dry run %v: %v (retryable %v), want a cancellation naming f.txt", dry, err, fe.Retryable)
		}
	}
	if got := readFile(t, root, "f.txt"); got != "a\nb\n" {
		t.Errorf("f.txt = %q", got)
	}
}
