package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

func newApplyCmd() *cobra.Command {
	var (
		stateDir string
		dryRun   bool
	)
	cwd, _ := os.Getwd()
	root := &onceValue{value: cwd}
	cmd := &cobra.Command{
		Use:   "apply [PATCH]",
		Short: "Apply a Codex-style patch (all files or none)",
		Long: `Apply a patch in OpenAI Codex's apply_patch format ("*** Begin Patch" …
"*** End Patch") to the files under the current directory (or --root), taken
from the argument or, without one (or with "-"), from standard input (a
file or a pipe, not a terminal: fsplane apply < change.patch).

Every hunk of every file is resolved first; the files are then committed in
one transaction, so either all of them change or none does. On success the
output is Codex's: "Success. Updated the following files:" and A/M/D lines.
On failure the error goes to standard error, the exit status is 1, and the
tree is unchanged.

SIGINT or SIGTERM stops apply at once, nothing changed, with exit status
128 plus the signal's number (130, 143); a commit already under way
finishes first (it is atomic and quick), and its files stay changed.

Each changed file is recorded in the undo journal of the state directory
(--state-dir). This command has no undo of its own: revert a file with the
"undo" tool of "fsplane mcp", or POST /v2/fs/undo (or the undo_edit command
of POST /v1/file/str_replace_editor) on "fsplane serve", when they run with
the same state directory and a root that holds the file.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError(cmd, fmt.Errorf("unexpected argument %q: apply takes one patch (quote it) or reads it from standard input", args[1]))
			}
			if err := root.check("root", "apply works under one root"); err != nil {
				return usageError(cmd, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] == "-" {
				// Standard input, as "-" is for most commands that read
				// a file: as patch text it could only be refused.
				args = nil
			}
			// Reading a terminal would wait, silently, for a patch typed
			// by hand: nobody means that, and it looks like a hang.
			if len(args) == 0 && isTerminal(cmd.InOrStdin()) {
				return usageError(cmd, errors.New("no patch given, and standard input is a terminal: "+
					"pass the patch as the argument (fsplane apply \"$(cat change.patch)\") or pipe it (fsplane apply < change.patch)"))
			}
			ctx := cmd.Context()
			text, err := patchText(ctx, cmd.InOrStdin(), args)
			if err != nil {
				return err
			}
			if err := checkUTF8(text); err != nil {
				return err
			}
			ws, err := openWorkspace([]string{root.value}, sameSource("--root"), stateDir)
			if err != nil {
				return err
			}
			defer ws.Close()
			// The engine stops planning when ctx ends (a signal) and
			// returns a cancelled error; a commit it has begun, it
			// finishes.
			res, err := ops.New(ws, ops.Options{}).Patch(ctx, ops.PatchRequest{Patch: text, DryRun: dryRun})
			if err != nil {
				if errors.Is(err, context.Canceled) {
					return stoppedError(ctx, describe(err))
				}
				return &exitError{code: 1, err: describe(fileArgumentHint(args, err))}
			}
			out := cmd.OutOrStdout()
			if dryRun {
				_, err = io.WriteString(out, res.Diff)
				return err
			}
			for _, n := range res.Notices {
				fmt.Fprintln(cmd.ErrOrStderr(), "Note:", n)
			}
			if _, err := io.WriteString(out, res.Summary()); err != nil {
				// Exit status 1 otherwise means nothing changed: an
				// agent told only "no space left on device" would apply
				// the patch again.
				return &exitError{code: 1, err: fmt.Errorf("the patch was applied (the files changed), but its summary could not be written: %s\nHint: do not apply it again; see what changed in the files", errText(err))}
			}
			return nil
		},
	}
	cmd.Flags().Var(root, "root", "directory the patch's paths are relative to; nothing outside it is touched")
	stateDirFlag(cmd.Flags(), &stateDir)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the unified diff the patch would make and change nothing")
	return cmd
}

// patchText returns the patch: the argument, or else standard input read
// to its end. A signal (ctx done) ends the read at once: a pipe whose
// writer never closes would otherwise hold apply until a second signal
// forced the exit, with no word of why. The read goroutine is left
// blocked; the process exits right after.
func patchText(ctx context.Context, stdin io.Reader, args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(stdin)
		done <- result{b, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
	}
	// A signal wins over what the read brought, even when both are there:
	// whoever signalled often closes the pipe too, and "no patch given"
	// (exit 2) would hide that apply was stopped.
	if ctx.Err() != nil {
		return "", stoppedError(ctx, fmt.Errorf("stopped (%s) while reading the patch from standard input; nothing was changed", stopReason(ctx)))
	}
	if r.err != nil {
		msg := "reading the patch from standard input: " + errText(r.err)
		if errors.Is(r.err, syscall.EISDIR) {
			// fsplane apply < dir: the shell opens a directory all the
			// same, and only the read fails.
			msg += "\nHint: redirect a patch file, not a directory: fsplane apply < change.patch"
		}
		return "", &exitError{code: 1, err: errors.New(msg)}
	}
	switch {
	case len(r.b) == 0:
		// Codex's apply_patch answers an empty standard input with its
		// usage and exit status 2, a usage error: nothing was given.
		return "", &exitError{code: 2, err: errors.New("no patch given: pass the patch as the argument or on standard input\n" +
			"Usage: fsplane apply 'PATCH'\n       echo 'PATCH' | fsplane apply")}
	case strings.TrimSpace(string(r.b)) == "":
		return "", &exitError{code: 1, err: errors.New("no patch given: pass the patch as the argument or on standard input")}
	}
	return string(r.b), nil
}

// checkUTF8 refuses a patch that is not UTF-8, as Codex's apply_patch
// does: applied byte for byte, a patch saved as Latin-1 or UTF-16 would
// put those bytes into the files, and a UTF-8 file would no longer read
// as text.
func checkUTF8(text string) error {
	if utf8.ValidString(text) {
		return nil
	}
	i := 0
	for {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	line := strings.Count(text[:i], "\n") + 1
	return &exitError{code: 1, err: describe(fserr.New(fserr.BadRequest, "apply", "",
		"the patch is not valid UTF-8 (line %d); nothing was changed", line).
		WithHint("save the patch as UTF-8 (iconv -t UTF-8), not Latin-1 or UTF-16"))}
}

// stopReason names what stopped ctx, for a message: the signal, or the
// context's error.
func stopReason(ctx context.Context) string {
	switch stopSignal(ctx) {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return ctx.Err().Error()
}

// fileArgumentHint replaces the hint of err, the refusal of a patch given
// as the argument, when that argument is one line naming an existing
// file: "fsplane apply p1.patch" reads as applying the file, but applies
// the text "p1.patch", which Codex's parser refuses for its first line.
// Codex's message stays first; the hint says how to pass the file.
func fileArgumentHint(args []string, err error) error {
	fe, ok := fserr.As(err)
	if len(args) != 1 || !ok || fe.Code != fserr.BadRequest {
		return err
	}
	name := strings.TrimSuffix(args[0], "\n")
	if name == "" || strings.ContainsAny(name, "\r\n") {
		return err
	}
	if fi, serr := os.Stat(name); serr != nil || fi.IsDir() {
		return err
	}
	q := shellQuote(name)
	e := *fe
	e.Hint = fmt.Sprintf("%s is a file, but the argument is the patch text itself; to apply the file, run fsplane apply < %s (or fsplane apply \"$(cat %s)\")", name, q, q)
	return &e
}

// shellQuote quotes s for a POSIX shell when it needs it, so a hint's
// command can be pasted as it is.
func shellQuote(s string) string {
	if strings.HasPrefix(s, "-") {
		s = "./" + s // not an option to the command it is given to
	}
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-,:@%=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
