package ops

import (
	"context"
	"slices"
	"testing"

	"github.com/fsplane/fsplane/internal/applytest"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestApplyScenarios runs the patch scenarios through the library; the same
// files run through the real binary in cmd/fsplane.
func TestApplyScenarios(t *testing.T) {
	t.Parallel()
	applytest.Run(t, "testdata/apply", func(t *testing.T, root, stateDir, text string, args []string) applytest.Outcome {
		ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: stateDir})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		dry := slices.Contains(args, "--dry-run")
		res, err := New(ws, Options{}).Patch(context.Background(), PatchRequest{Patch: text, DryRun: dry})
		if err != nil {
			e, ok := fserr.As(err)
			if !ok {
				t.Fatalf("error %T is not an *fserr.Error: %v", err, err)
			}
			return applytest.Outcome{Stderr: e.Message + "\n", Exit: 1}
		}
		if dry {
			return applytest.Outcome{Stdout: res.Diff}
		}
		return applytest.Outcome{Stdout: res.Summary()}
	})
}
