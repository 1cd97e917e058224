package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

func newApplyCmd() *cobra.Command {
	var (
		root, stateDir string
		dryRun         bool
	)
	cmd := &cobra.Command{
		Use:   "apply [PATCH]",
		Short: "Apply a Codex-style patch (all files or none)",
		Long: `Apply a patch in OpenAI Codex's apply_patch format ("*** Begin Patch" …
"*** End Patch") to the files under the current directory (or --root), taken
from the argument or, without one, from standard input.

Every hunk of every file is resolved first; the files are then committed in
one transaction, so either all of them change or none does. On success the
output is Codex's: "Success. Updated the following files:" and A/M/D lines.
On failure the error goes to standard error, the exit status is 1, and the
tree is unchanged.

Each changed file is recorded in the undo journal of the state directory
(--state-dir). This command has no undo of its own: revert a file with the
"undo" tool of "fsplane mcp", or POST /v2/fs/undo (or the undo_edit command
of POST /v1/file/str_replace_editor) on "fsplane serve", when they run with
the same state directory and a root that holds the file.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError(cmd, fmt.Errorf("unexpected argument %q: apply takes one patch (quote it) or reads it from standard input", args[1]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := patchText(cmd.InOrStdin(), args)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			ws, err := openWorkspace([]string{root}, sameSource("--root"), stateDir)
			if err != nil {
				return err
			}
			defer ws.Close()
			res, err := ops.New(ws, ops.Options{}).Patch(cmd.Context(), ops.PatchRequest{Patch: text, DryRun: dryRun})
			if err != nil {
				return &exitError{code: 1, err: describe(err)}
			}
			out := cmd.OutOrStdout()
			if dryRun {
				_, err = io.WriteString(out, res.Diff)
				return err
			}
			for _, n := range res.Notices {
				fmt.Fprintln(cmd.ErrOrStderr(), "Note:", n)
			}
			_, err = io.WriteString(out, res.Summary())
			return err
		},
	}
	cwd, _ := os.Getwd()
	cmd.Flags().StringVar(&root, "root", cwd, "directory the patch's paths are relative to; nothing outside it is touched")
	stateDirFlag(cmd.Flags(), &stateDir)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the unified diff the patch would make and change nothing")
	return cmd
}

func patchText(stdin io.Reader, args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	b, err := io.ReadAll(stdin)
	if err != nil {
		return "", fmt.Errorf("reading the patch from standard input: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", errors.New("no patch given: pass the patch as the argument or on standard input")
	}
	return string(b), nil
}

// describe renders an error for a terminal: the message, then the hint.
func describe(err error) error {
	e, ok := fserr.As(err)
	if !ok || e.Hint == "" {
		if ok {
			return errors.New(e.Message)
		}
		return err
	}
	return fmt.Errorf("%s\nHint: %s", e.Message, e.Hint)
}
