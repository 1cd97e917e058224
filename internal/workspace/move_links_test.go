package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestMoveRefusesEscapingLinks: a move never puts a symbolic link where
// it leads outside the workspace when it led inside before — the link
// moved itself, or one in a moved tree, whose relative target now climbs
// out. Links read the same after the move, or already leading out, move.
func TestMoveRefusesEscapingLinks(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	tests := []struct {
		name     string
		links    map[string]string // link → target, made before the move
		src, dst string
		other    bool   // dst is in a second root
		refused  string // the link named in the refusal; "" = the move succeeds
	}{
		{name: "a link moved up", links: map[string]string{"a/b/x": "../../y"}, src: "a/b/x", dst: "esc", refused: "a/b/x"},
		{name: "a tree moved up", links: map[string]string{"p/a/b/x": "../../../y"}, src: "p/a", dst: "esc", refused: "p/a/b/x"},
		{name: "a tree moved to another root", links: map[string]string{"p/a/b/x": "../../../y"}, src: "p/a", dst: "esc", other: true, refused: "p/a/b/x"},
		{name: "renamed in its directory", links: map[string]string{"a/b/x": "../../y"}, src: "a/b/x", dst: "a/b/z"},
		{name: "moved deeper", links: map[string]string{"a/x": "../y"}, src: "a/x", dst: "a/b/c/x"},
		{name: "a tree renamed in place", links: map[string]string{"p/a/b/x": "../../../y"}, src: "p/a", dst: "p/c"},
		{name: "an absolute target inside", links: map[string]string{"a/b/x": "ROOT/y"}, src: "a/b/x", dst: "esc"},
		{name: "already leading out", links: map[string]string{"a/b/x": outside}, src: "a/b/x", dst: "esc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, second := t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(root, "y"), "y\n", 0o644)
			for link, target := range tt.links {
				if err := os.MkdirAll(filepath.Join(root, filepath.Dir(link)), 0o755); err != nil {
					t.Fatal(err)
				}
				if target == "ROOT/y" {
					target = filepath.Join(root, "y")
				}
				if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
					t.Fatal(err)
				}
			}
			w := openTestWorkspace(t, Options{Roots: []string{root, second}, StateDir: t.TempDir()})
			dst := tt.dst
			if tt.other {
				dst = filepath.Join(second, tt.dst)
			}
			before := snapshot(t, root)
			_, err := w.Move(tt.src, dst, false, "")
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("Move: %v", err)
				}
				return
			}
			wantMessage(t, err, fserr.OutsideRoot, "the link "+tt.refused)
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("the refused move changed the root (-before +after):\n%s", diff)
			}
			if ents, _ := os.ReadDir(second); len(ents) != 0 {
				t.Errorf("the refused move left %v in the other root", ents)
			}
		})
	}
}

// TestMoveRefusesHardLinkTwin: rename(2) of a name onto another hard link
// to the same file does nothing and succeeds, so a move that trusted it
// would report the source moved while it stays. Such a move is refused,
// as mv refuses it, and both names are left as they were.
func TestMoveRefusesHardLinkTwin(t *testing.T) {
	t.Parallel()
	for _, overwrite := range []bool{true, false} {
		t.Run(map[bool]string{true: "overwrite", false: "no overwrite"}[overwrite], func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, "a"), "A", 0o644)
			if err := os.Link(filepath.Join(root, "a"), filepath.Join(root, "b")); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, root)
			_, err := w.Move("a", "b", overwrite, "")
			want := fserr.BadRequest
			if !overwrite {
				want = fserr.AlreadyExists
			}
			wantCode(t, err, want)
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("the refused move changed the root (-before +after):\n%s", diff)
			}
			if inode(t, filepath.Join(root, "a")) != inode(t, filepath.Join(root, "b")) {
				t.Error("the two names are no longer one file")
			}
		})
	}
}
